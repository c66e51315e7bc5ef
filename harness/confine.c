// SPDX-License-Identifier: GPL-2.0
/* confine.c — the guest process confined on the host side (confine.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "confine.h"

/*
 * Landlock's ABI, spelled out here: the build host's <linux/landlock.h> may
 * be older than the kernel it runs on (bookworm's knows ABI 2), and every
 * right below is stable kernel ABI.  A ruleset attribute larger than the
 * running kernel's is accepted when the fields it does not know are zero.
 */
struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;	/* ABI 4 */
	uint64_t scoped;		/* ABI 6 */
};

struct ll_path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

#define LL_CREATE_RULESET_VERSION	(1U << 0)
#define LL_RULE_PATH_BENEATH		1

#define LL_FS_WRITE_FILE	(1ULL << 1)
#define LL_FS_REMOVE_DIR	(1ULL << 4)
#define LL_FS_REMOVE_FILE	(1ULL << 5)
#define LL_FS_MAKE_CHAR		(1ULL << 6)
#define LL_FS_MAKE_DIR		(1ULL << 7)
#define LL_FS_MAKE_REG		(1ULL << 8)
#define LL_FS_MAKE_SOCK		(1ULL << 9)
#define LL_FS_MAKE_FIFO		(1ULL << 10)
#define LL_FS_MAKE_BLOCK	(1ULL << 11)
#define LL_FS_MAKE_SYM		(1ULL << 12)
#define LL_FS_REFER		(1ULL << 13)	/* ABI 2 */
#define LL_FS_TRUNCATE		(1ULL << 14)	/* ABI 3 */
#define LL_FS_IOCTL_DEV		(1ULL << 15)	/* ABI 5 */
#define LL_NET_BIND_TCP		(1ULL << 0)	/* ABI 4 */
#define LL_NET_CONNECT_TCP	(1ULL << 1)
#define LL_SCOPE_ABSTRACT_UNIX	(1ULL << 0)	/* ABI 6 */
#define LL_SCOPE_SIGNAL		(1ULL << 1)

/* Everything that changes the host's file systems.  Reading and executing
 * stay unhandled: the guest's root is the host's /. */
#define LL_FS_WRITES_V1 (LL_FS_WRITE_FILE | LL_FS_REMOVE_DIR | LL_FS_REMOVE_FILE | \
			 LL_FS_MAKE_CHAR | LL_FS_MAKE_DIR | LL_FS_MAKE_REG | LL_FS_MAKE_SOCK | \
			 LL_FS_MAKE_FIFO | LL_FS_MAKE_BLOCK | LL_FS_MAKE_SYM)
/* What a rule on a single (device) file may allow. */
#define LL_FS_FILE_RIGHTS (LL_FS_WRITE_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV)

/*
 * Device files a backend opens for writing (found by running each: UML in
 * ptrace and seccomp mode, QEMU under TCG and its KVM probe).  Anything
 * else under /dev stays read-only (and, in a namespace, unusable: nodev).
 * Not /dev/ptmx and /dev/pts: a pty's other end is one of the user's
 * terminals.  UML's boot-time test of SIGIO on ptys (check_sigio) then says
 * "check_one_sigio failed, errno = 13" and leaves out a workaround that only
 * pty consoles need; bpfuml's console is a file.
 */
static const char *const backend_devices[] = {
	"/dev/null",
	"/dev/kvm",	/* QEMU with KVM, and its probe */
};

enum confine_mode { MODE_UNSET, MODE_LANDLOCK, MODE_NAMESPACE, MODE_NONE };

static enum confine_mode mode;
static int landlock_abi;
static char mode_name[32];

static int landlock_version(void)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);

	return abi < 0 ? -errno : (int)abi;
}

/* ---- Landlock ------------------------------------------------------------- */

static int landlock_allow(int ruleset, const char *path, uint64_t access)
{
	struct ll_path_beneath_attr rule = { .allowed_access = access };
	int err = 0;

	rule.parent_fd = open(path, O_PATH | O_CLOEXEC);
	if (rule.parent_fd < 0)
		return -errno;
	if (syscall(SYS_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &rule, 0))
		err = -errno;
	close(rule.parent_fd);
	return err;
}

/* Returns a negative errno and names the failed step in *WHAT. */
static int landlock_apply(const char *run_dir, const char **what)
{
	struct ll_ruleset_attr attr = { .handled_access_fs = LL_FS_WRITES_V1 };
	uint64_t file_rights;
	size_t i;
	int ruleset, err;

	if (landlock_abi >= 2)
		attr.handled_access_fs |= LL_FS_REFER;
	if (landlock_abi >= 3)
		attr.handled_access_fs |= LL_FS_TRUNCATE;
	if (landlock_abi >= 5)
		attr.handled_access_fs |= LL_FS_IOCTL_DEV;
	/* No backend talks TCP or to abstract sockets, nor signals anything
	 * outside its own processes. */
	if (landlock_abi >= 4)
		attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
	if (landlock_abi >= 6)
		attr.scoped = LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL;
	file_rights = attr.handled_access_fs & LL_FS_FILE_RIGHTS;

	*what = "landlock_create_ruleset";
	ruleset = syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (ruleset < 0)
		return -errno;
	*what = run_dir;
	err = run_dir ? landlock_allow(ruleset, run_dir, attr.handled_access_fs) : 0;
	for (i = 0; !err && i < sizeof(backend_devices) / sizeof(backend_devices[0]); i++) {
		*what = backend_devices[i];
		err = landlock_allow(ruleset, backend_devices[i], file_rights);
		if (err == -ENOENT)	/* no /dev/kvm here: nothing to allow */
			err = 0;
	}
	*what = "landlock_restrict_self";
	if (!err && syscall(SYS_landlock_restrict_self, ruleset, 0))
		err = -errno;
	close(ruleset);
	return err;
}

/* ---- a read-only mount namespace ------------------------------------------ */

static int write_proc(const char *file, const char *text)
{
	int fd = open(file, O_WRONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, text, strlen(text)) < 0)
		err = -errno;
	close(fd);
	return err;
}

int confine_map_own_ids(uid_t uid, gid_t gid)
{
	char map[64];
	int err;

	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned int)uid, (unsigned int)uid);
	err = write_proc("/proc/self/uid_map", map);
	err = err ?: write_proc("/proc/self/setgroups", "deny");
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned int)gid, (unsigned int)gid);
	err = err ?: write_proc("/proc/self/gid_map", map);
	return err;
}

/*
 * Neither backend needs a capability.  Run as root, the guest keeps none
 * (nor regains them on exec: the bounding set goes too): no module loading,
 * reboot, remount or unmount.  In a namespace, a user namespace the guest
 * makes itself copies the mounts locked, read-only as they are then.
 */
static int drop_capabilities(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = { 0 };
	int cap;

	/* EPERM: no CAP_SETPCAP, i.e. not root; EINVAL: past the last cap. */
	for (cap = 0; cap <= 63; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) && errno != EINVAL && errno != EPERM)
			return -errno;
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	if (syscall(SYS_capset, &hdr, data))
		return -errno;
	return 0;
}

static int namespace_apply(const char *run_dir, const char **what)
{
	struct mount_attr ro = {
		.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
	};
	struct mount_attr rw = { .attr_clr = MOUNT_ATTR_RDONLY };
	struct mount_attr dev = { .attr_clr = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV };
	uid_t uid = geteuid();
	gid_t gid = getegid();
	size_t i;
	int err;

	*what = "unshare(CLONE_NEWUSER|CLONE_NEWNS)";
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS)) {
		err = -errno;
		/* User namespaces off: root can still have a mount namespace. */
		if (unshare(CLONE_NEWNS))
			return err;	/* the user namespace's reason tells more */
	} else {
		*what = "/proc/self/uid_map";
		err = confine_map_own_ids(uid, gid);
		if (err)
			return err;
	}
	*what = "making / private";
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return -errno;
	/* Binds first, so that each is a mount of its own whose flags can be
	 * cleared again after all of / went read-only. */
	*what = run_dir;
	if (run_dir && mount(run_dir, run_dir, NULL, MS_BIND | MS_REC, NULL))
		return -errno;
	for (i = 0; i < sizeof(backend_devices) / sizeof(backend_devices[0]); i++) {
		*what = backend_devices[i];
		if (mount(backend_devices[i], backend_devices[i], NULL, MS_BIND, NULL) && errno != ENOENT)
			return -errno;
	}
	*what = "mount_setattr(/, read-only)";
	if (mount_setattr(AT_FDCWD, "/", AT_RECURSIVE, &ro, sizeof(ro)))
		return -errno;
	*what = run_dir;
	if (run_dir && mount_setattr(AT_FDCWD, run_dir, AT_RECURSIVE, &rw, sizeof(rw)))
		return -errno;
	for (i = 0; i < sizeof(backend_devices) / sizeof(backend_devices[0]); i++) {
		*what = backend_devices[i];
		if (mount_setattr(AT_FDCWD, backend_devices[i], 0, &dev, sizeof(dev)) && errno != ENOENT)
			return -errno;
	}
	/* Credentials changed: make sure the guest still dies with us. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	return 0;
}

/* Try the namespace in a throw-away child: 0 if it works here. */
static int namespace_works(char *why, size_t len)
{
	int status, pipefd[2];
	char msg[256] = "";
	pid_t pid;
	ssize_t n;

	if (pipe2(pipefd, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(pipefd[0]);
		close(pipefd[1]);
		return -errno;
	}
	if (pid == 0) {
		const char *what = "";
		int err;

		close(pipefd[0]);
		err = namespace_apply(NULL, &what);
		if (!err) {
			what = "dropping capabilities";
			err = drop_capabilities();
		}
		if (err)
			dprintf(pipefd[1], "%s: %s", what, strerror(-err));
		_exit(err ? 1 : 0);
	}
	close(pipefd[1]);
	n = read(pipefd[0], msg, sizeof(msg) - 1);
	msg[n > 0 ? n : 0] = '\0';
	close(pipefd[0]);
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	snprintf(why, len, "%s", *msg ? msg : "the namespace probe died");
	return -EPERM;
}

/* ---- choosing ------------------------------------------------------------- */

int confine_prepare(char *msg, size_t len)
{
	const char *want = getenv("BPFUML_CONFINE");
	char ll_why[128] = "", ns_why[256] = "";
	static int said_none;
	int abi;

	if (mode != MODE_UNSET)
		return 0;
	if (want && *want && strcmp(want, "landlock") && strcmp(want, "namespace") &&
	    strcmp(want, "none")) {
		snprintf(msg, len, "BPFUML_CONFINE wants landlock, namespace or none, not '%s'", want);
		return -EINVAL;
	}
	if (want && !strcmp(want, "none")) {
		if (!said_none++)
			fprintf(stderr, "bpfuml: WARNING: BPFUML_CONFINE=none: the guest is not confined; "
				"its root can write every host file you can write\n");
		mode = MODE_NONE;
		snprintf(mode_name, sizeof(mode_name), "none");
		return 0;
	}
	if (!want || !*want || !strcmp(want, "landlock")) {
		abi = landlock_version();
		if (abi > 0) {
			mode = MODE_LANDLOCK;
			landlock_abi = abi;
			snprintf(mode_name, sizeof(mode_name), "landlock-abi%d", abi);
			return 0;
		}
		snprintf(ll_why, sizeof(ll_why), "Landlock is not available (%s)",
			 abi == -EOPNOTSUPP ? "built in but not enabled: add landlock to lsm= on the "
			 "kernel command line" : strerror(-abi));
	}
	if (!want || !*want || !strcmp(want, "namespace")) {
		if (!namespace_works(ns_why, sizeof(ns_why))) {
			mode = MODE_NAMESPACE;
			snprintf(mode_name, sizeof(mode_name), "namespace");
			return 0;
		}
	}
	snprintf(msg, len, "cannot confine the guest, so it would be able to write every host "
		 "file you can write: %s%s%s%s%s.  Use a kernel with Landlock, or allow user "
		 "namespaces (sysctl user.max_user_namespaces, kernel.unprivileged_userns_clone); "
		 "BPFUML_CONFINE=none runs the guest unconfined anyway",
		 ll_why, *ll_why && *ns_why ? "; " : "",
		 *ns_why ? "a read-only mount namespace could not be made (" : "", ns_why,
		 *ns_why ? ")" : "");
	return -EPERM;
}

const char *confine_name(void)
{
	return mode == MODE_UNSET ? NULL : mode_name;
}

void confine_describe(char *buf, size_t len)
{
	static const char how[] = "BPFUML_CONFINE=landlock|namespace forces one way, "
				  "BPFUML_CONFINE=none runs guests unconfined";
	char why[1024];

	if (confine_prepare(why, sizeof(why)))
		snprintf(buf, len, "This host: no guest boots: %s.\n", why);
	else if (mode == MODE_LANDLOCK)
		snprintf(buf, len, "This host: guests are confined by Landlock (ABI %d): a guest can "
			 "write only its run directory.\n(%s.)\n", landlock_abi, how);
	else if (mode == MODE_NAMESPACE)
		snprintf(buf, len, "This host: guests are confined by a read-only mount namespace: a "
			 "guest can write only its run directory.\n(%s.)\n", how);
	else
		snprintf(buf, len, "This host: guests are NOT confined (BPFUML_CONFINE=none): a guest "
			 "can write every host file you can write.\n");
}

void confine_child(const char *run_dir)
{
	const char *what = "";
	char why[1024];
	int err = 0;

	if (confine_prepare(why, sizeof(why))) {
		dprintf(2, "bpfuml: %s\n", why);
		_exit(126);
	}
	close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
	if (mode == MODE_NONE)
		return;
	/* Landlock needs it; and no set-uid program gains anything here. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		what = "PR_SET_NO_NEW_PRIVS";
		err = -errno;
	} else if (mode == MODE_LANDLOCK) {
		err = landlock_apply(run_dir, &what);
	} else {
		err = namespace_apply(run_dir, &what);
	}
	if (!err) {
		what = "dropping capabilities";
		err = drop_capabilities();
	}
	if (err) {
		dprintf(2, "bpfuml: cannot confine the guest (%s, %s): %s\n", mode_name,
			what ?: "?", strerror(-err));
		_exit(126);
	}
}
