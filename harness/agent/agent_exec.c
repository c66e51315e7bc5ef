// SPDX-License-Identifier: GPL-2.0
/* agent_exec.c — the "exec" job: run a host program (e.g. the kernel's
 * test_progs) inside the guest, with what the BPF selftests expect mounted,
 * its output into a file of the run directory, and a deadline.
 *
 * Job fields: "argv" (array of strings), "cwd", "output" (file name in the
 * run directory for stdout and stderr), "timeout_s" (kill it after this),
 * "fatal_output" (strings that, once in the output, mean the program is
 * done for), "fatal_grace_s" (how long it then has to exit on its own) and
 * "jit_enable_shown" (what programs read in net.core.bpf_jit_enable) and
 * "time_lines" (a prefix: the output's lines that start with it are timed).
 * Result: "exit_status" or "signal", "timed_out", "elapsed_ns",
 * "line_times" (with time_lines: [[line, ms since the start], ...]); after a
 * fatal line, "fatal_output" (the lines seen) and "fatal_killed"; when the
 * agent killed the program, "processes" (what was left: pid, parent, state,
 * name, where it waited).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "agent.h"
#include "fatal_watch.h"
#include "line_clock.h"

/* The root is the host's / read-only: the selftests want device nodes,
 * and write below /run (network namespaces) and /var/run; and they want
 * the loopback interface up. */
/* The selftests bind and connect to 127.0.0.1 and ::1 in the initial
 * network namespace, as on a booted machine, where init brought lo up. */
static void loopback_up(void)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return;
	if (!ioctl(fd, SIOCGIFFLAGS, &ifr)) {
		ifr.ifr_flags |= IFF_UP;
		ioctl(fd, SIOCSIFFLAGS, &ifr);
	}
	close(fd);
}

static void mount_for_selftests(void)
{
	struct rlimit unlimited = { RLIM_INFINITY, RLIM_INFINITY };

	mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
	mkdir("/dev/pts", 0755);
	mount("devpts", "/dev/pts", "devpts", 0, NULL);
	mkdir("/dev/shm", 01777);
	mount("tmpfs", "/dev/shm", "tmpfs", 0, "mode=1777");
	mount("tmpfs", "/run", "tmpfs", 0, "mode=0755");
	setrlimit(RLIMIT_MEMLOCK, &unlimited);
	loopback_up();
}

/*
 * UML verifies every program for x86_64's JIT, whether the JIT or the
 * interpreter then runs it (kernel-patches 0045).  The selftests that pick
 * their expected verdict by reading net.core.bpf_jit_enable must read what
 * the verifier does, not what runs: a file of ours bound over the sysctl.
 */
static void show_jit_enable(const char *value)
{
	const char *shown = "/tmp/.bpf_jit_enable_shown";
	int fd = open(shown, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0)
		return;
	if (write(fd, value, strlen(value)) < 0 || write(fd, "\n", 1) < 0) {
		close(fd);
		return;
	}
	close(fd);
	mount(shown, "/proc/sys/net/core/bpf_jit_enable", NULL, MS_BIND, NULL);
}

static char **job_argv(json_object *job)
{
	json_object *array, *item;
	size_t i, n;
	char **argv;

	if (!json_object_object_get_ex(job, "argv", &array) ||
	    !json_object_is_type(array, json_type_array) || !(n = json_object_array_length(array)))
		return NULL;
	argv = calloc(n + 1, sizeof(*argv));
	if (!argv)
		return NULL;
	for (i = 0; i < n; i++) {
		item = json_object_array_get_idx(array, i);
		argv[i] = (char *)json_object_get_string(item);
	}
	return argv;
}

static void child(char **argv, const char *cwd, const char *output)
{
	char path[512];
	int fd;

	setsid();
	snprintf(path, sizeof(path), "%s/%s", agent_run_dir, output);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0) {
		dup2(fd, 1);
		dup2(fd, 2);
		close(fd);
	}
	if (cwd && chdir(cwd)) {
		dprintf(2, "bpfuml-agent: cannot chdir to %s: %s\n", cwd, strerror(errno));
		_exit(127);
	}
	setenv("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", 1);
	setenv("HOME", "/tmp", 1);
	execv(argv[0], argv);
	dprintf(2, "bpfuml-agent: cannot execute %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

/* hostfs keeps written pages in the guest until they are flushed. */
static void flush_output(const char *output)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", agent_run_dir, output);
	fd = open(path, O_RDONLY);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	sync();
}

/* Up to SIZE - 1 bytes of a /proc file, NUL-terminated; the count, or -1. */
static ssize_t read_proc_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, size - 1) : -1;

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return n;
}

/* "pid ppid state name wchan" of every user process but the agent. */
static json_object *process_snapshot(void)
{
	json_object *list = json_object_new_array();
	struct dirent *de;
	DIR *dir = opendir("/proc");

	while (dir && (de = readdir(dir))) {
		char path[300], stat[512], wchan[128], cmd[8], *name, *end;
		int pid = atoi(de->d_name), ppid = 0;
		char state = '?';

		if (pid <= 1 || pid == getpid())
			continue;
		/* Kernel threads have no command line. */
		snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
		if (read_proc_file(path, cmd, sizeof(cmd)) <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
		if (read_proc_file(path, stat, sizeof(stat)) <= 0)
			continue;
		name = strchr(stat, '(');
		end = strrchr(stat, ')');
		if (!name || !end)
			continue;
		*end = '\0';
		sscanf(end + 2, "%c %d", &state, &ppid);
		snprintf(path, sizeof(path), "/proc/%d/wchan", pid);
		read_proc_file(path, wchan, sizeof(wchan));
		snprintf(path, sizeof(path), "%d %d %c %s %s", pid, ppid, state, name + 1,
			 *wchan && strcmp(wchan, "0") ? wchan : "-");
		json_object_array_add(list, json_object_new_string(path));
	}
	if (dir)
		closedir(dir);
	return list;
}

static void kill_runner(pid_t pid, json_object *result)
{
	json_object_object_add(result, "processes", process_snapshot());
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
}

int agent_exec(json_object *job, json_object *result)
{
	json_object *value;
	const char *cwd = NULL, *output = "exec.out";
	long long start, deadline = 0;
	bool timed_out = false, fatal_killed = false;
	struct fatal_watch watch;
	struct line_clock clock;
	unsigned long polls = 0;
	int status, grace_s = 10;
	char **argv, path[512];
	pid_t pid;

	argv = job_argv(job);
	if (!argv) {
		json_object_object_add(result, "error", json_object_new_string("exec: no argv"));
		return -EINVAL;
	}
	if (json_object_object_get_ex(job, "cwd", &value))
		cwd = json_object_get_string(value);
	if (json_object_object_get_ex(job, "output", &value))
		output = json_object_get_string(value);
	mount_for_selftests();
	if (json_object_object_get_ex(job, "jit_enable_shown", &value))
		show_jit_enable(json_object_get_string(value));
	/* Host paths under /tmp are hidden by the guest's tmpfs there. */
	agent_expose_host_tmp(cwd);
	agent_expose_host_tmp(argv[0]);
	start = mono_ns();
	if (json_object_object_get_ex(job, "timeout_s", &value) && json_object_get_int(value) > 0)
		deadline = start + json_object_get_int(value) * 1000000000LL;

	snprintf(path, sizeof(path), "%s/%s", agent_run_dir, output);
	fatal_watch_init(&watch, json_object_object_get_ex(job, "fatal_output", &value) ? value : NULL, path);
	if (json_object_object_get_ex(job, "fatal_grace_s", &value))
		grace_s = json_object_get_int(value);
	line_clock_init(&clock, json_object_object_get_ex(job, "time_lines", &value) ?
				json_object_get_string(value) : NULL, path, start);

	pid = fork();
	if (pid < 0) {
		json_object_object_add(result, "error", json_object_new_string(strerror(errno)));
		line_clock_free(&clock);
		free(argv);
		return -errno;
	}
	if (pid == 0)
		child(argv, cwd, output);

	/* PID 1 reaps every orphan; ours is the one that counts. */
	for (;;) {
		bool poll = deadline || (watch.n_markers && !fatal_killed) || line_clock_on(&clock);
		pid_t got = waitpid(-1, &status, poll ? WNOHANG : 0);

		if (got == pid)
			break;
		if (got < 0 && errno != EINTR)
			break;
		if (got != 0)
			continue;
		if (deadline && mono_ns() > deadline) {
			kill_runner(pid, result);
			timed_out = true;
			deadline = 0;
			continue;
		}
		if (watch.n_markers && !fatal_killed && !timed_out && ++polls % 10 == 0) {
			if (fatal_watch_scan(&watch, mono_ns()) &&
			    mono_ns() - watch.first_ns > grace_s * 1000000000LL) {
				kill_runner(pid, result);
				fatal_killed = true;
			}
		}
		line_clock_scan(&clock, mono_ns());
		usleep(20000);
	}
	flush_output(output);
	line_clock_scan(&clock, mono_ns());	/* what it wrote as it exited */
	if (line_clock_on(&clock))
		json_object_object_add(result, "line_times", line_clock_times(&clock));
	line_clock_free(&clock);
	fatal_watch_scan(&watch, mono_ns());	/* the lines of a program that died of it */
	if (watch.lines)
		json_object_object_add(result, "fatal_output", json_object_get(watch.lines));
	fatal_watch_free(&watch);
	if (fatal_killed)
		json_object_object_add(result, "fatal_killed", json_object_new_boolean(true));
	json_object_object_add(result, "elapsed_ns", json_object_new_int64(mono_ns() - start));
	json_object_object_add(result, "timed_out", json_object_new_boolean(timed_out));
	if (WIFEXITED(status))
		json_object_object_add(result, "exit_status", json_object_new_int(WEXITSTATUS(status)));
	else if (WIFSIGNALED(status))
		json_object_object_add(result, "signal", json_object_new_int(WTERMSIG(status)));
	free(argv);
	return 0;
}
