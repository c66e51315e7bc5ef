// SPDX-License-Identifier: GPL-2.0
/* vm_qemu.c — the x86_64 reference backend: the same 7.3 source built as an
 * x86_64 kernel with the BPF JIT, booted by qemu-system-x86_64.
 *
 * The host's / is the guest's read-only root over 9p (virtio-pci), the run
 * directory a second, writable 9p share (mount tag RUN_DIR_9P_TAG), and the
 * guest agent the same static build/bin/bpfuml-agent as on UML, told by
 * bpfuml_channel=9p on the kernel command line (an environment variable of
 * init) which channel to mount.  The serial console and QEMU's own messages
 * go to the console pipe that vm.c drains.  QEMU runs in its own session: one kill of
 * the process group ends it.  Guest memory is QEMU's anonymous memory; the
 * run directory holds no file of QEMU's own.
 *
 * KVM is used when it works.  /dev/kvm can exist and still hang a guest (a
 * nested PVM hypervisor does that to stock kernels), so the first use of a
 * bzImage on a host boots it once under KVM to a no-op init with a short
 * deadline; the verdict is kept beside the bzImage (file kvm-probe) and TCG
 * is used when KVM failed, said on stderr when the probe ran (afterwards the
 * output's "accel" tells).  BPFUML_QEMU_ACCEL=kvm|tcg
 * skips the probe.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "confine.h"
#include "run_dir.h"
#include "vm.h"

#define QEMU_BIN "qemu-system-x86_64"
/* A working KVM boots this kernel to init in well under a second; TCG
 * takes 2-4 s.  A guest not done by then under KVM is taken as hung. */
#define KVM_PROBE_TIMEOUT_MS 10000

static const char *qemu_binary(void)
{
	const char *env = getenv("BPFUML_QEMU");

	return env && *env ? env : QEMU_BIN;
}

struct argv_buf {
	char *argv[64];
	int argc;
	char strings[8][2 * PATH_MAX + 512];	/* -append, and -fsdev with doubled commas */
	int nstrings;
};

static void arg(struct argv_buf *b, const char *s)
{
	if (b->argc < (int)(sizeof(b->argv) / sizeof(b->argv[0])) - 1)
		b->argv[b->argc++] = (char *)s;
	b->argv[b->argc] = NULL;
}

__attribute__((format(printf, 2, 3)))
static void argf(struct argv_buf *b, const char *fmt, ...)
{
	va_list ap;
	char *s;

	if (b->nstrings >= (int)(sizeof(b->strings) / sizeof(b->strings[0])))
		return;
	s = b->strings[b->nstrings++];
	va_start(ap, fmt);
	vsnprintf(s, sizeof(b->strings[0]), fmt, ap);
	va_end(ap);
	arg(b, s);
}

/* VALUE as QEMU reads one in an option list (-fsdev a=b,c=d): a comma is
 * doubled, or it would end the value and start a sub-option. */
static void qemu_opt_value(char *buf, size_t size, const char *value)
{
	size_t n = 0;

	for (; *value && n + 2 < size; value++) {
		if (*value == ',')
			buf[n++] = ',';
		buf[n++] = *value;
	}
	buf[n] = '\0';
}

/* The command line of one guest.  RUN_DIR NULL: the KVM probe, which boots
 * the agent without a job (it powers off at once).  -EINVAL when a path
 * cannot go on the kernel's command line. */
static int build_argv(struct argv_buf *b, const struct vm_opts *opts, int kvm, const char *run_dir)
{
	char append[PATH_MAX * 2 + 512], init[PATH_MAX + 16], dir[PATH_MAX + 16] = "";
	char fsdev_path[2 * PATH_MAX];
	int err;

	if ((err = vm_cmdline_arg(init, sizeof(init), "init", opts->init)) ||
	    (run_dir && (err = vm_cmdline_arg(dir, sizeof(dir), NULL, run_dir))))
		return err;

	arg(b, qemu_binary());
	arg(b, "-nodefaults");
	arg(b, "-no-user-config");
	arg(b, "-display");
	arg(b, "none");
	arg(b, "-no-reboot");		/* a panicking guest (panic=-1) ends QEMU */
	arg(b, "-machine");
	arg(b, kvm ? "pc,accel=kvm" : "pc,accel=tcg");
	arg(b, "-cpu");
	arg(b, kvm ? "host" : "max");
	arg(b, "-smp");
	if (getenv("BPFUML_QEMU_SMP"))
		arg(b, getenv("BPFUML_QEMU_SMP"));
	else
		argf(b, "%u", opts->cpus ?: 1);
	arg(b, "-m");
	argf(b, "%u", opts->mem_mb ?: 512);
	arg(b, "-serial");
	arg(b, "stdio");
	arg(b, "-kernel");
	arg(b, opts->kernel);
	/* The host's / read-only as the root: the agent and everything the
	 * job names are where the host has them. */
	arg(b, "-fsdev");
	arg(b, "local,id=root,path=/,security_model=none,readonly=on,multidevs=remap");
	arg(b, "-device");
	arg(b, "virtio-9p-pci,fsdev=root,mount_tag=/dev/root");
	if (run_dir) {
		qemu_opt_value(fsdev_path, sizeof(fsdev_path), run_dir);
		arg(b, "-fsdev");
		argf(b, "local,id=run,path=%s,security_model=none", fsdev_path);
		arg(b, "-device");
		arg(b, "virtio-9p-pci,fsdev=run,mount_tag=" RUN_DIR_9P_TAG);
	}
	/* console=ttyS0: the serial port is the console log.  panic=-1 and
	 * -no-reboot: a panic ends QEMU at once.  bpfuml_channel has no dot,
	 * so the kernel hands it to init as an environment variable; what
	 * follows "--" is init's argv.  loglevel=5, not quiet, so that the
	 * kernel's "WARNING:" lines (KERN_WARNING) reach the console scan. */
	snprintf(append, sizeof(append),
		 "console=ttyS0 root=/dev/root rootfstype=9p "
		 "rootflags=trans=virtio,version=9p2000.L,cache=loose,msize=262144 ro "
		 "panic=-1 oops=panic loglevel=5 8250.nr_uarts=1 "
		 "bpfuml_channel=9p %s %s %s%s%s",
		 vm_extra_kernel_args(), vm_bpf_jit_args(opts), init, run_dir ? " -- " : "", dir);
	arg(b, "-append");
	argf(b, "%s", append);
	return 0;
}

/* RUN_DIR: the only host directory QEMU may write; NULL for the KVM probe. */
static void qemu_child(char *const argv[], int console_fd, const char *run_dir)
{
	int null_fd;

	/* Its own process group; dies with us. */
	setsid();
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	null_fd = open("/dev/null", O_RDONLY);
	dup2(null_fd, 0);
	dup2(console_fd, 1);
	dup2(console_fd, 2);
	confine_child(run_dir);
	execvp(argv[0], argv);
	dprintf(2, "bpfuml: cannot execute %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

static int spawn(struct vm *vm, char *const argv[], int console_fd, const char *run_dir)
{
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0)
		qemu_child(argv, console_fd, run_dir);
	vm_process_started(vm, pid);
	return 0;
}

/* ---- KVM: usable or not ---------------------------------------------- */

/* What identifies one probe's verdict: the host kernel and the bzImage. */
static void probe_identity(const char *kernel, char *buf, size_t len)
{
	struct utsname u;
	struct stat st;

	if (uname(&u))
		strcpy(u.release, "?");
	if (stat(kernel, &st))
		memset(&st, 0, sizeof(st));
	snprintf(buf, len, "host %s; kernel %lld bytes, mtime %lld", u.release,
		 (long long)st.st_size, (long long)st.st_mtime);
}

static void probe_file(const char *kernel, char *buf, size_t len)
{
	char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s", kernel);
	snprintf(buf, len, "%s/kvm-probe", dirname(dir));
}

/* 1: KVM works, 0: it does not (REASON says why), -1: not known yet. */
static int probe_cached(const char *kernel, char *reason, size_t len)
{
	char path[PATH_MAX + 16], identity[512], line[1024];
	FILE *f;
	int verdict = -1;

	probe_file(kernel, path, sizeof(path));
	probe_identity(kernel, identity, sizeof(identity));
	f = fopen(path, "re");
	if (!f)
		return -1;
	if (fgets(line, sizeof(line), f) && !strncmp(line, identity, strlen(identity)) &&
	    line[strlen(identity)] == '\n' && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "ok", 2))
			verdict = 1;
		else if (!strncmp(line, "fail ", 5)) {
			verdict = 0;
			snprintf(reason, len, "%.400s", line + 5);
		}
	}
	fclose(f);
	return verdict;
}

static void probe_save(const char *kernel, int ok, const char *reason)
{
	char path[PATH_MAX + 16], tmp[PATH_MAX + 32], identity[512];
	FILE *f;

	probe_file(kernel, path, sizeof(path));
	probe_identity(kernel, identity, sizeof(identity));
	snprintf(tmp, sizeof(tmp), "%s.%d", path, getpid());
	f = fopen(tmp, "we");
	if (!f)
		return;		/* read-only build dir: probe again next time */
	fprintf(f, "%s\n%s%s\n", identity, ok ? "ok" : "fail ", ok ? "" : reason);
	if (fclose(f) || rename(tmp, path))
		unlink(tmp);
}

/* Boot the kernel under KVM to an init that powers off at once. */
static int kvm_probe(struct vm *vm, const struct vm_opts *opts, char *reason, size_t len)
{
	struct argv_buf b = { 0 };
	struct vm_exit exit = { 0 };
	int fd, err;

	fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		snprintf(reason, len, "/dev/kvm: %s", strerror(errno));
		return 0;
	}
	close(fd);
	err = build_argv(&b, opts, 1, NULL);
	if (err)
		return err;
	fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = spawn(vm, b.argv, fd, NULL);
	close(fd);
	if (err)
		return err;
	err = vm_process_wait(vm, KVM_PROBE_TIMEOUT_MS, &exit);
	if (err == -ETIMEDOUT) {
		vm_process_kill(vm);
		snprintf(reason, len, "a guest under KVM did not boot and power off within %d s",
			 KVM_PROBE_TIMEOUT_MS / 1000);
		return 0;
	}
	if (err) {
		vm_process_kill(vm);
		return err;	/* -EINTR: interrupted, no verdict */
	}
	if (!WIFEXITED(exit.status) || WEXITSTATUS(exit.status)) {
		snprintf(reason, len, "QEMU with KVM failed (exit status %d)",
			 WIFEXITED(exit.status) ? WEXITSTATUS(exit.status) : 128 + WTERMSIG(exit.status));
		return 0;
	}
	return 1;
}

static int use_kvm(struct vm *vm, const struct vm_opts *opts)
{
	static int said;
	const char *accel = getenv("BPFUML_QEMU_ACCEL");
	char reason[512] = "";
	int ok, probed = 0;

	if (accel && !strcmp(accel, "tcg"))
		return 0;
	if (accel && !strcmp(accel, "kvm"))
		return 1;
	ok = probe_cached(opts->kernel, reason, sizeof(reason));
	if (ok < 0) {
		probed = 1;
		ok = kvm_probe(vm, opts, reason, sizeof(reason));
		if (ok < 0)
			return ok;
		probe_save(opts->kernel, ok, reason);
	}
	/* Said when the probe ran; afterwards "accel" in the output tells. */
	if (!ok && probed && !said++)
		fprintf(stderr, "bpfuml: KVM is not usable here (%s); using TCG, which is slower "
			"(BPFUML_QEMU_ACCEL=kvm|tcg overrides)\n", reason);
	return ok;
}

static int qemu_start(struct vm *vm, const struct vm_opts *opts)
{
	struct argv_buf b = { 0 };
	int console_fd, kvm, err;

	kvm = use_kvm(vm, opts);
	if (kvm < 0)
		return kvm;
	vm->accel = kvm ? "kvm" : "tcg";
	err = build_argv(&b, opts, kvm, opts->run_dir);
	if (err)
		return err;
	console_fd = vm_console_open(vm);
	if (console_fd < 0)
		return console_fd;
	err = spawn(vm, b.argv, console_fd, opts->run_dir);
	close(console_fd);
	return err;
}

const struct vm_backend vm_backend_qemu = {
	.name = "qemu",
	.start = qemu_start,
	.wait = vm_process_wait,
	.kill = vm_process_kill,
};
