// SPDX-License-Identifier: GPL-2.0
/* agent_serve.c — a warm guest's agent (bpfuml serve): booted once, it does
 * job after job, each in a process of its own, until the host kills it.
 *
 * The line protocol is run_dir.h's.  A job's process is forked from this
 * one, so whatever it loads (programs, maps, links, BTF) goes when it
 * exits; the counts of those objects go back after each job, so that the
 * host sees any that outlived it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "agent.h"

static long long wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static unsigned int count_ids(int (*next)(__u32, __u32 *))
{
	unsigned int n = 0;
	__u32 id = 0;

	while (!next(id, &id))
		n++;
	return n;
}

static long mem_available_kb(void)
{
	char line[128];
	long kb = -1;
	FILE *f = fopen("/proc/meminfo", "re");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

/* What the guest holds now: BPF programs, maps, links, BTF objects. */
static void census(unsigned int n[4])
{
	n[0] = count_ids(bpf_prog_get_next_id);
	n[1] = count_ids(bpf_map_get_next_id);
	n[2] = count_ids(bpf_link_get_next_id);
	n[3] = count_ids(bpf_btf_get_next_id);
}

/* After a job: until nothing of it is left, or SERVE_CLEAN_WAIT_MS.  Its
 * programs go at once, their maps and BTF after an RCU grace period. */
static void wait_clean(const unsigned int ready[4], unsigned int n[4])
{
	struct timespec ms = { .tv_nsec = 1000000 };

	for (int waited = 0;; waited++) {
		census(n);
		if ((n[0] <= ready[0] && n[1] <= ready[1] && n[2] <= ready[2] && n[3] <= ready[3]) ||
		    waited >= SERVE_CLEAN_WAIT_MS)
			return;
		nanosleep(&ms, NULL);
	}
}

static void say(int tty, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(int tty, const char *fmt, ...)
{
	char line[SERVE_LINE_MAX];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= (int)sizeof(line) - 1)
		return;
	line[n++] = '\n';
	while (write(tty, line, n) < 0 && errno == EINTR)
		;
}

/* One line from the host, without its newline; false when the line is
 * gone (the host never closes it while the guest lives). */
static bool read_line(int tty, char *line, size_t size)
{
	size_t n = 0;
	char c;

	for (;;) {
		ssize_t r = read(tty, &c, 1);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		if (c == '\n' || c == '\r') {
			if (!n)
				continue;
			line[n] = '\0';
			return true;
		}
		if (n < size - 1)
			line[n++] = c;
	}
}

/* The line to the host: our own node for the tty (/dev is the host's),
 * raw, so that nothing is echoed or rewritten. */
static int open_line(void)
{
	struct termios t;
	int fd;

	unlink("/tmp/.bpfuml-serve");
	if (mknod("/tmp/.bpfuml-serve", S_IFCHR | 0600, makedev(SERVE_TTY_MAJOR, SERVE_TTY_MINOR)))
		return -1;
	fd = open("/tmp/.bpfuml-serve", O_RDWR | O_NOCTTY | O_CLOEXEC);
	unlink("/tmp/.bpfuml-serve");
	if (fd < 0)
		return -1;
	if (!tcgetattr(fd, &t)) {
		cfmakeraw(&t);
		tcsetattr(fd, TCSANOW, &t);
	}
	return fd;
}

static void job_process(unsigned long long id)
{
	static char dir[sizeof(RUN_DIR_IN_GUEST) + sizeof(SERVE_JOBS_DIR) + 24];
	long long start_ns = wall_ns();
	json_object *job, *result;

	snprintf(dir, sizeof(dir), "%s/%s/%llu", RUN_DIR_IN_GUEST, SERVE_JOBS_DIR, id);
	/* The job sees its directory where a cold guest's job sees the run
	 * directory, so that every path it names (in libbpf's messages, an
	 * exec job's working directory) is a cold guest's. */
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount(dir, RUN_DIR_IN_GUEST, NULL, MS_BIND, NULL))
		agent_run_dir = dir;
	job = agent_read_job();
	result = agent_new_result(start_ns);
	agent_do_job(job, result);
	_exit(0);
}

void agent_serve(json_object *job)
{
	char line[SERVE_LINE_MAX];
	unsigned int ready[4], now[4];
	unsigned long long id;
	int tty = open_line(), status;
	pid_t pid;

	json_object_put(job);
	if (tty < 0)
		_exit(1);	/* init exits: the host sees the guest end */
	/* Every job but verify wants bpffs; its first mount loads
	 * bpf_preload's iterators, once, before the census. */
	agent_mount_bpffs();
	census(ready);
	say(tty, "ready %u %u %u %u %ld", ready[0], ready[1], ready[2], ready[3], mem_available_kb());
	while (read_line(tty, line, sizeof(line))) {
		if (sscanf(line, "job %llu", &id) != 1)
			continue;
		pid = fork();
		if (pid == 0) {
			close(tty);
			job_process(id);
		}
		status = 0;
		if (pid < 0)
			status = 1 << 8;
		else
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
		/* Nothing of a job outlives it: processes it left behind
		 * (an exec job's daemons) are killed and reaped, so that
		 * whatever they hold goes too.  As init we are spared. */
		kill(-1, SIGKILL);
		while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
			;
		say(tty, "done %llu %d", id, status);
		wait_clean(ready, now);
		say(tty, "clean %u %u %u %u %ld", now[0], now[1], now[2], now[3], mem_available_kb());
	}
	_exit(1);
}
