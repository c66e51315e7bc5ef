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

#include "clock.h"
#include "agent.h"

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
enum { PROGS, MAPS, LINKS, BTFS, KINDS };
static int (*const next_id[KINDS])(__u32, __u32 *) = {
	bpf_prog_get_next_id, bpf_map_get_next_id, bpf_link_get_next_id, bpf_btf_get_next_id,
};

static void census(unsigned int n[KINDS])
{
	for (int k = 0; k < KINDS; k++)
		n[k] = count_ids(next_id[k]);
}

/*
 * The maps and BTF objects a finished job left, by id.  A program's are let
 * go only after an RCU grace period and a work item (10-20 ms at HZ=100),
 * long after the program itself.  They are unreachable by then (no process,
 * program, link or pin holds them: each job's bpffs is its own), so the
 * next job need not wait for them: the agent watches them go while it
 * runs, and says "leak" if they have not gone within SERVE_CLEAN_WAIT_MS.
 * Ids are allocated cyclically, never reused soon: the next job's are new.
 */
#define LINGER_MAX 256
struct lingering {
	__u32 baseline[2][LINGER_MAX];	/* ids of maps and BTF when ready */
	unsigned int nr_baseline[2];
	__u32 ids[2][LINGER_MAX];	/* the last job's, not yet gone */
	unsigned int nr[2];
	bool overflow;			/* more than LINGER_MAX of them */
	long long since_ns;
};

static int (*const lingering_next_id[2])(__u32, __u32 *) = { bpf_map_get_next_id, bpf_btf_get_next_id };

static bool id_in(const __u32 *ids, unsigned int n, __u32 id)
{
	for (unsigned int i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

static void lingering_baseline(struct lingering *l)
{
	for (int k = 0; k < 2; k++) {
		__u32 id = 0;

		l->nr_baseline[k] = 0;
		while (l->nr_baseline[k] < LINGER_MAX && !lingering_next_id[k](id, &id))
			l->baseline[k][l->nr_baseline[k]++] = id;
	}
}

/* After a job: its maps and BTF still there (all that is not baseline). */
static void lingering_take(struct lingering *l)
{
	l->overflow = false;
	l->since_ns = wall_ns();
	for (int k = 0; k < 2; k++) {
		__u32 id = 0;

		l->nr[k] = 0;
		while (!lingering_next_id[k](id, &id)) {
			if (id_in(l->baseline[k], l->nr_baseline[k], id))
				continue;
			if (l->nr[k] == LINGER_MAX) {
				l->overflow = true;
				break;
			}
			l->ids[k][l->nr[k]++] = id;
		}
	}
}

static bool lingering_any(const struct lingering *l)
{
	return l->nr[0] || l->nr[1] || l->overflow;
}

/* Forget the ids that have gone. */
static void lingering_check(struct lingering *l)
{
	for (int k = 0; k < 2; k++) {
		unsigned int kept = 0;

		for (unsigned int i = 0; i < l->nr[k]; i++) {
			__u32 next;

			/* Still there: the next id after id-1 is id itself. */
			if (!lingering_next_id[k](l->ids[k][i] - 1, &next) && next == l->ids[k][i])
				l->ids[k][kept++] = l->ids[k][i];
		}
		l->nr[k] = kept;
	}
	if (!l->nr[0] && !l->nr[1] && l->overflow)
		lingering_take(l);	/* the ones over LINGER_MAX */
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
 * gone (the host never closes it while the guest lives).  Byte by byte:
 * what follows the line is the next job's process's to read. */
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

/* The process of the next job, forked before the job is asked for (a UML
 * fork costs milliseconds): it reads the job's line itself, tells the agent
 * its id through TOLD, does the job, says "done" itself (before its exit,
 * which also takes milliseconds) and exits 0. */
static void job_process(int tty, int told)
{
	static char dir[sizeof(RUN_DIR_IN_GUEST) + sizeof(SERVE_JOBS_DIR) + 24];
	char line[SERVE_LINE_MAX];
	unsigned long long id;
	long long start_ns;
	json_object *job, *result;

	do {
		if (!read_line(tty, line, sizeof(line)))
			_exit(1);
	} while (sscanf(line, "job %llu", &id) != 1);
	start_ns = wall_ns();
	if (write(told, &id, sizeof(id)) != sizeof(id))
		_exit(1);
	snprintf(dir, sizeof(dir), "%s/%s/%llu", RUN_DIR_IN_GUEST, SERVE_JOBS_DIR, id);
	/* The job sees its directory where a cold guest's job sees the run
	 * directory, so that every path it names (in libbpf's messages, an
	 * exec job's working directory) is a cold guest's. */
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount(dir, RUN_DIR_IN_GUEST, NULL, MS_BIND, NULL))
		agent_run_dir = dir;
	agent_bpffs_of_its_own();
	job = agent_read_job();
	result = agent_new_result(start_ns);
	agent_do_job(job, result);
	say(tty, "done %llu 0", id);
	_exit(0);
}

/* Wait for the job's process, watching the last job's lingering maps and
 * BTF go meanwhile (SIGCHLD is blocked, so that sigtimedwait() sleeps until
 * the process ends or the next look).  Says "leak" once for those that
 * outlive SERVE_CLEAN_WAIT_MS. */
static int wait_job(int tty, pid_t pid, struct lingering *l)
{
	struct timespec step = { .tv_nsec = 2 * 1000000 };
	sigset_t chld;
	int status;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	for (;;) {
		pid_t done;

		if (lingering_any(l))
			lingering_check(l);
		done = waitpid(pid, &status, lingering_any(l) ? WNOHANG : 0);
		if (done == pid)
			return status;
		if (done < 0 && errno != EINTR)
			return 1 << 8;
		if (done != 0)
			continue;
		if (wall_ns() - l->since_ns > SERVE_CLEAN_WAIT_MS * 1000000LL) {
			say(tty, "leak %u %u", l->nr[0], l->nr[1]);
			l->nr[0] = l->nr[1] = 0;
			l->overflow = false;
			continue;
		}
		sigtimedwait(&chld, NULL, &step);
		/* Later looks need not come as often. */
		if (step.tv_nsec < 64 * 1000000)
			step.tv_nsec *= 2;
	}
}

/* Until the job's programs and links are gone: at once, unless something
 * outside the job holds them, which "clean" then shows. */
static long wait_programs_gone(const unsigned int ready[KINDS], unsigned int now[KINDS])
{
	struct timespec ms = { .tv_nsec = 1000000 };
	long long start = wall_ns();

	for (int waited = 0;; waited++) {
		census(now);
		if ((now[PROGS] <= ready[PROGS] && now[LINKS] <= ready[LINKS]) ||
		    waited >= SERVE_CLEAN_WAIT_MS)
			return (wall_ns() - start) / 1000;
		nanosleep(&ms, NULL);
	}
}

void agent_serve(json_object *job)
{
	static struct lingering lingering;
	unsigned int ready[KINDS], now[KINDS];
	unsigned long long id;
	int tty = open_line(), told[2], status;
	sigset_t chld, old;
	long waited_us;
	pid_t pid;

	json_object_put(job);
	if (tty < 0 || pipe2(told, O_CLOEXEC | O_NONBLOCK))
		_exit(1);	/* init exits: the host sees the guest end */
	/* The first mount of bpffs loads bpf_preload's iterators: once, here,
	 * before the census.  Each job mounts a bpffs of its own. */
	agent_mount_bpffs();
	census(ready);
	lingering_baseline(&lingering);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &old);
	for (bool first = true;; first = false) {
		pid = fork();
		if (pid == 0) {
			sigprocmask(SIG_SETMASK, &old, NULL);
			close(told[0]);
			job_process(tty, told[1]);
		}
		if (first)
			say(tty, "ready %u %u %u %u %ld", ready[PROGS], ready[MAPS], ready[LINKS],
			    ready[BTFS], mem_available_kb());
		status = pid > 0 ? wait_job(tty, pid, &lingering) : 1 << 8;
		/* Nothing of a job outlives it: processes it left behind
		 * (an exec job's daemons) are killed and reaped, so that
		 * whatever they hold goes too.  As init we are spared. */
		kill(-1, SIGKILL);
		while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
			;
		if (read(told[0], &id, sizeof(id)) != sizeof(id)) {
			if (status)
				_exit(1);	/* no job, and the line is gone */
			continue;
		}
		/* A job that did not end normally has not said "done". */
		if (status)
			say(tty, "done %llu %d", id, status);
		waited_us = wait_programs_gone(ready, now);
		lingering_take(&lingering);
		say(tty, "clean %u %u %u %u %ld %ld", now[PROGS], now[MAPS], now[LINKS], now[BTFS],
		    mem_available_kb(), waited_us);
	}
}
