// SPDX-License-Identifier: GPL-2.0
/* agent.c — the guest agent's start and end: mount what BPF needs, read the
 * job, dispatch it, write the result, power off.
 *
 * Started by the kernel as init, with the host's run directory as argv[1].
 * The environment variable bpfuml_channel (from the kernel command line)
 * says how that directory is reached: "hostfs" (UML, the default) or "9p"
 * (QEMU, the virtio-9p share tagged RUN_DIR_9P_TAG).
 * Nothing it says goes to the console: the host scans the console for kernel
 * trouble only, and a verifier log quoting "BUG:" must not look like one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "agent.h"

const char *agent_run_dir = RUN_DIR_IN_GUEST;

static bool host_mode;

static void power_off(void)
{
	sync();
	reboot(RB_POWER_OFF);
	/* Only reached if reboot() failed; an exiting init panics, which the
	 * host reports as an infrastructure failure. */
	_exit(1);
}

static void finish(void)
{
	if (host_mode)
		exit(0);
	power_off();
}

/* Mount failures of optional file systems are tolerated: a job that needs one
 * fails on its own with a clearer error. */
static int mount_fs(const char *source, const char *target, const char *type,
		    unsigned long flags, const char *data)
{
	mkdir(target, 0755);
	if (mount(source, target, type, flags, data) && errno != EBUSY)
		return -errno;
	return 0;
}

/* A QEMU guest's clock starts from the RTC, to the second.  The host's
 * clock is one 9p round trip away: a file created in the run directory gets
 * the host's time as its timestamps.  Taking it makes the guest's
 * CLOCK_REALTIME the host's (to well under a millisecond), so that the
 * host's timing of boot and job stays right.  Returns the step taken, ns. */
static long long sync_clock_with_host(void)
{
	char path[sizeof(RUN_DIR_IN_GUEST) + 16];
	struct timespec before, after, now;
	struct stat st;
	long long step;
	int fd;

	snprintf(path, sizeof(path), "%s/.clock", RUN_DIR_IN_GUEST);
	clock_gettime(CLOCK_REALTIME, &before);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st)) {
		close(fd);
		return 0;
	}
	clock_gettime(CLOCK_REALTIME, &after);
	close(fd);
	unlink(path);
	/* The host stamped the file half-way through the round trip. */
	step = st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec -
	       ((before.tv_sec + after.tv_sec) * 1000000000LL + before.tv_nsec + after.tv_nsec) / 2;
	clock_gettime(CLOCK_REALTIME, &now);
	now.tv_sec += step / 1000000000LL;
	now.tv_nsec += step % 1000000000LL;
	if (now.tv_nsec < 0) {
		now.tv_nsec += 1000000000L;
		now.tv_sec--;
	} else if (now.tv_nsec >= 1000000000L) {
		now.tv_nsec -= 1000000000L;
		now.tv_sec++;
	}
	if (clock_settime(CLOCK_REALTIME, &now))
		return 0;
	return step;
}

static int use_9p;

/* The host's /tmp, kept open before the guest's tmpfs covers it. */
static int host_tmp_fd = -1;

int agent_expose_host_tmp(const char *path)
{
	char component[256], source[300], target[300];
	size_t n;

	if (host_tmp_fd < 0 || !path || strncmp(path, "/tmp/", 5))
		return 0;
	n = strcspn(path + 5, "/");
	if (!n || n >= sizeof(component))
		return 0;
	memcpy(component, path + 5, n);
	component[n] = '\0';
	snprintf(target, sizeof(target), "/tmp/%s", component);
	if (!strcmp(target, RUN_DIR_IN_GUEST) || !access(target, F_OK))
		return 0;
	/* The magic link reaches the covered directory of the host's root. */
	snprintf(source, sizeof(source), "/proc/self/fd/%d/%s", host_tmp_fd, component);
	if (mkdir(target, 0755) || mount(source, target, NULL, MS_BIND | MS_REC, NULL))
		return -errno;
	return 0;
}

static int setup_mounts(const char *host_run_dir)
{
	int err;

	err = mount_fs("proc", "/proc", "proc", 0, NULL);
	err = err ?: mount_fs("sysfs", "/sys", "sysfs", 0, NULL);
	/* A host path under /tmp (a checkout there, say) stays reachable:
	 * agent_expose_host_tmp() binds it over the guest's tmpfs on demand. */
	host_tmp_fd = open("/tmp", O_PATH | O_DIRECTORY | O_CLOEXEC);
	/* The root is the host's / read-only: scratch space is a tmpfs, and
	 * the run directory is the only host path the guest can write. */
	err = err ?: mount_fs("tmpfs", "/tmp", "tmpfs", 0, "mode=1777");
	if (use_9p)
		err = err ?: mount_fs(RUN_DIR_9P_TAG, RUN_DIR_IN_GUEST, "9p", 0,
				      "trans=virtio,version=9p2000.L,msize=262144,cache=none");
	else
		err = err ?: mount_fs("none", RUN_DIR_IN_GUEST, "hostfs", 0, host_run_dir);
	if (err)
		return err;
	mount_fs("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	mount_fs("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL);
	mount_fs("cgroup2", "/sys/fs/cgroup", "cgroup2", 0, NULL);
	return 0;
}

/* bpffs is mounted only for the jobs that use it: its first mount loads
 * bpf_preload's iterators (kernel-patches/0031), which a verify job, the
 * one that must boot fastest, never reads. */
static bool bpffs_mounted;

void agent_mount_bpffs(void)
{
	if (bpffs_mounted || host_mode)
		return;
	bpffs_mounted = true;
	mount_fs("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700");
}

void agent_bpffs_of_its_own(void)
{
	bpffs_mounted = false;
}

int agent_write_file(const char *name, const void *buf, size_t len)
{
	char path[512], tmp[520];
	const char *p = buf;
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/%s", agent_run_dir, name);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		p += n;
		len -= n;
	}
	/* hostfs caches pages in the guest: fsync pushes them to the host. */
	if (!err && fsync(fd))
		err = -errno;
	close(fd);
	/* The rename makes a file appear complete or not at all. */
	if (!err && rename(tmp, path))
		err = -errno;
	return err;
}

int agent_read_file(const char *name, void **buf, size_t *len)
{
	char path[512];
	struct stat st;
	char *data;
	size_t done = 0;
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/%s", agent_run_dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		goto out;
	}
	data = malloc(st.st_size + 1);
	if (!data) {
		err = -ENOMEM;
		goto out;
	}
	while (done < (size_t)st.st_size) {
		ssize_t n = read(fd, data + done, st.st_size - done);

		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			break;
		}
		done += n;
	}
	data[done] = '\0';
	*buf = data;
	*len = done;
out:
	close(fd);
	return err;
}

/* Test-only faults, so that the host's handling of a dying, silent or
 * hostile guest, and its confinement of the guest, can be tested for real.
 * Before the job: */
const char *agent_test_fault;

static void inject_fault(const char *fault, json_object *result)
{
	char path[512];

	if (!strncmp(fault, "escape=", 7)) {
		agent_try_escape(fault + 7, result);
		return;
	}
	if (!strcmp(fault, "panic")) {
		int fd = open("/proc/sysrq-trigger", O_WRONLY);

		if (fd >= 0)
			write(fd, "c", 1);
		/* Without sysrq, an exiting init panics just as well. */
		_exit(1);
	}
	if (!strcmp(fault, "hang"))
		for (;;)
			pause();
	if (!strncmp(fault, "kmsg=", 5)) {
		/* A line in the kernel's log, as if the kernel had said it (our
		 * own /dev/kmsg node: /dev is the host's).  Each write() is one
		 * record, so the line goes in one (through dprintf() it was
		 * refused with EINVAL). */
		char line[1024];
		int len = snprintf(line, sizeof(line), "<4>%.1000s\n", fault + 5);
		int fd;

		mknod("/tmp/kmsg", S_IFCHR | 0600, makedev(1, 11));
		fd = open("/tmp/kmsg", O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, line, len) != len)
			json_object_object_add(result, "test_fault_error",
					       json_object_new_string(strerror(errno)));
		if (fd >= 0)
			close(fd);
	}
	if (!strcmp(fault, "console-flood")) {
		/* 64 MiB, 8 times what the host keeps, on the console (our
		 * own node for it: /dev is the host's), then the job. */
		static char line[4096];
		int fd;

		mknod("/tmp/console", S_IFCHR | 0600, makedev(5, 1));
		fd = open("/tmp/console", O_WRONLY | O_NOCTTY);
		for (size_t i = 0; i < sizeof(line) - 1; i++)
			line[i] = 'a' + i % 26;
		line[sizeof(line) - 1] = '\n';
		for (int i = 0; fd >= 0 && i < (64 << 20) / (int)sizeof(line); i++)
			if (write(fd, line, sizeof(line)) < 0)
				break;
		if (fd >= 0)
			close(fd);
	}
	if (!strcmp(fault, "chmod-dir")) {
		/* A directory the host cannot enter, with a file in it. */
		snprintf(path, sizeof(path), "%s/locked", agent_run_dir);
		mkdir(path, 0755);
		snprintf(path, sizeof(path), "%s/locked/inside", agent_run_dir);
		close(open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
		snprintf(path, sizeof(path), "%s/locked", agent_run_dir);
		chmod(path, 0);
	}
}

/* After the job, faults that make its result hostile: a verifier log that
 * is a symbolic link to a host file, a FIFO, a path out of the run
 * directory, a sparse file of 4 GiB; members of the wrong type. */
static void hostile_result(const char *fault, json_object *result)
{
	json_object *progs = NULL, *prog, *objects, *holder = result;
	char path[512], log_name[64], prefix[32] = "";
	int fd;

	/* The first program: run's, or that of verify's first object. */
	if (json_object_object_get_ex(result, "objects", &objects) &&
	    json_object_is_type(objects, json_type_array) && json_object_array_length(objects))
		holder = json_object_array_get_idx(objects, 0);
	if (strncmp(fault, "result-", 7) || !json_object_object_get_ex(holder, "programs", &progs) ||
	    !json_object_is_type(progs, json_type_array) || !(prog = json_object_array_get_idx(progs, 0)))
		return;
	if (holder != result)
		snprintf(prefix, sizeof(prefix), VERIFY_LOG_PREFIX, (size_t)0);
	snprintf(log_name, sizeof(log_name), PROG_LOG, prefix, 0);
	snprintf(path, sizeof(path), "%s/%s", agent_run_dir, log_name);
	if (!strcmp(fault, "result-symlink")) {
		unlink(path);
		symlink("/etc/passwd", path);
	} else if (!strcmp(fault, "result-fifo-log")) {
		unlink(path);
		mkfifo(path, 0644);
	} else if (!strcmp(fault, "result-huge-log")) {
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd >= 0) {
			ftruncate(fd, 4LL << 30);
			fsync(fd);
			close(fd);
		}
	} else if (!strcmp(fault, "result-traversal")) {
		json_object_object_add(prog, "log_file", json_object_new_string("../../../../../etc/passwd"));
		return;
	} else if (!strcmp(fault, "result-no-verdict")) {
		json_object_object_del(prog, "verdict");
		return;
	} else if (!strcmp(fault, "result-bad-types")) {
		json_object_object_add(holder, "programs", json_object_new_string("not a list"));
		return;
	} else {
		return;
	}
	json_object_object_add(prog, "log_file", json_object_new_string(log_name));
}

static void write_result(json_object *result)
{
	const char *text = json_object_to_json_string_ext(result, JSON_C_TO_STRING_PLAIN);

	agent_write_file(RESULT_FILE, text, strlen(text));
}

json_object *agent_read_job(void)
{
	json_object *job = NULL;
	size_t len;
	void *text;

	if (!agent_read_file(JOB_FILE, &text, &len)) {
		job = json_tokener_parse(text);
		free(text);
	}
	if (job && !json_object_is_type(job, json_type_object)) {
		json_object_put(job);
		job = NULL;
	}
	return job;
}

json_object *agent_new_result(long long start_ns)
{
	json_object *result = json_object_new_object();
	struct utsname uts;

	json_object_object_add(result, "agent_start_ns", json_object_new_int64(start_ns));
	json_object_object_add(result, "mounts_done_ns", json_object_new_int64(wall_ns()));
	if (!uname(&uts))
		json_object_object_add(result, "kernel", json_object_new_string(uts.release));
	return result;
}

void agent_do_job(json_object *job, json_object *result)
{
	const char *command, *fault = NULL;
	json_object *value;
	int err;

	if (!job || !json_object_object_get_ex(job, "command", &value)) {
		json_object_object_add(result, "error",
				       json_object_new_string("job.json is missing or malformed"));
		goto done;
	}
	command = json_object_get_string(value);
	/* Never on the host: "panic" would crash the machine itself. */
	if (!host_mode && json_object_object_get_ex(job, "test_fault", &value) &&
	    (fault = json_object_get_string(value))) {
		agent_test_fault = fault;
		inject_fault(fault, result);
	}

	if (strcmp(command, "verify"))
		agent_mount_bpffs();
	if (!strcmp(command, "verify"))
		err = agent_verify(job, result);
	else if (!strcmp(command, "run"))
		err = agent_run(job, result);
	else if (!strcmp(command, "bench"))
		err = agent_bench(job, result);
	else if (!strcmp(command, "probe"))
		err = agent_probe(job, result);
	else if (!strcmp(command, "exec"))
		err = agent_exec(job, result);
	else
		json_object_object_add(result, "error", json_object_new_string("unknown command"));
	(void)err;
	if (fault)
		hostile_result(fault, result);
done:
	json_object_object_add(result, "job_end_ns", json_object_new_int64(wall_ns()));
	write_result(result);
}

int main(int argc, char **argv)
{
	json_object *job, *result, *value;
	long long start_ns = wall_ns(), clock_step = 0;
	const char *channel = getenv("bpfuml_channel");
	int null_fd;

	/* Verifier log buffers are large callocs that stay mostly untouched.
	 * With glibc's default, the first free raises the mmap threshold above
	 * their size, later ones come from the heap and calloc zeroes them
	 * page by page: 30 of them filled a 512 MiB guest.  A fixed threshold
	 * keeps them fresh mmaps, which cost nothing until written. */
	mallopt(M_MMAP_THRESHOLD, 1 << 20);

	/* Host mode: not init, so no mounts and no power-off; the run
	 * directory is used where it is. */
	host_mode = getpid() != 1;
	if (argc < 2)
		finish();
	if (host_mode) {
		agent_run_dir = argv[1];
	} else {
		/* Our own diagnostics go nowhere near the console (see above). */
		null_fd = open("/dev/null", O_RDWR);
		if (null_fd >= 0) {
			dup2(null_fd, 1);
			dup2(null_fd, 2);
		}
		use_9p = channel && !strcmp(channel, "9p");
		if (setup_mounts(argv[1]))
			finish();	/* no result: the host says the guest did not answer */
	}
	if (use_9p) {
		/* The agent started before the clock was set: move its start
		 * time by the same step. */
		clock_step = sync_clock_with_host();
		start_ns += clock_step;
	}

	job = agent_read_job();
	/* A warm guest (bpfuml serve): jobs come one by one, each in a
	 * process of its own; agent_serve() never returns. */
	if (!host_mode && job && json_object_object_get_ex(job, "command", &value) &&
	    !strcmp(json_object_get_string(value), "serve"))
		agent_serve(job);
	result = agent_new_result(start_ns);
	if (use_9p)
		json_object_object_add(result, "clock_step_ns", json_object_new_int64(clock_step));
	agent_do_job(job, result);
	json_object_put(result);
	json_object_put(job);
	finish();
	return 0;
}
