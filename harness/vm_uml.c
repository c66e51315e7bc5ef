// SPDX-License-Identifier: GPL-2.0
/* vm_uml.c — the user-mode Linux backend: the guest is a host process.
 *
 * The kernel runs in its own session (so one kill of the process group ends
 * it and its helper processes), with the host's / as a read-only hostfs root,
 * the run directory as uml_dir, its memory file (unlinked at once) on a
 * tmpfs of huge pages where the host lets us mount one, else in the run
 * directory, and the console on the pipe that vm.c drains.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "confine.h"
#include "run_dir.h"
#include "vm.h"

/*
 * UML's memory is a file it maps.  On /dev/shm each 4 KiB page the guest
 * touches first is a host page fault, ~6,000 of them per boot, and on a
 * virtualised host they cost more than the work they do.  A tmpfs of our
 * own with huge=always serves 2 MiB at a time: /dev/shm's owner decides its
 * page size, but a user namespace may mount its own tmpfs.  Only speed
 * depends on it: where any step fails, the memory file stays in the run
 * directory.
 */
static void uml_memory_on_huge_pages(const char *run_dir)
{
	char dir[4200];
	uid_t uid = geteuid();
	gid_t gid = getegid();

	if (getenv("BPFUML_NO_HUGE_MEMORY"))
		return;
	snprintf(dir, sizeof(dir), "%s/memory", run_dir);
	/* A warm guest that replaces another boots in the same run
	 * directory: the directory is there, empty (the tmpfs went with the
	 * namespace of the guest before). */
	if ((mkdir(dir, 0700) && errno != EEXIST) || unshare(CLONE_NEWUSER | CLONE_NEWNS) ||
	    confine_map_own_ids(uid, gid) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("bpfuml-memory", dir, "tmpfs", MS_NOSUID | MS_NODEV, "huge=always,mode=0700"))
		return;
	setenv("TMPDIR", dir, 1);
}

/*
 * A 1-CPU guest runs one host thread at a time: its kernel and the guest
 * process it runs hand over to each other through futexes at every guest
 * system call.  While another CPU is idle, the host wakes each side there,
 * an inter-processor wake-up per hand-over, slow under a hypervisor: a cold
 * verify's job took ~11 ms, kept on one CPU ~2 ms.  So such a guest is
 * pinned to the CPU this fork runs on (the host put it on the idlest) when
 * no more tasks are runnable than there are CPUs.  On a busy host pinning
 * would only take away the CPUs it could move to (a cold verify beside
 * three busy loops on 2 CPUs: 43.5 ms free, 64.0 pinned), so there it stays
 * free; so do SMP guests.  BPFUML_NO_PIN=1 leaves every guest free.
 */
static bool uml_host_has_idle_cpu(void)
{
	char buf[128];
	ssize_t n;
	int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
	long running;
	char *slash;

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* "0.36 0.81 1.06 2/345 1234": runnable now / all. */
	slash = strchr(buf, '/');
	if (!slash)
		return false;
	while (slash > buf && slash[-1] != ' ')
		slash--;
	running = strtol(slash, NULL, 10);
	/* This fork and the harness, which has not yet gone to sleep. */
	return running <= sysconf(_SC_NPROCESSORS_ONLN);
}

static void uml_pin_one_cpu_guest(const struct vm_opts *opts)
{
	cpu_set_t one;
	int cpu = sched_getcpu();

	if (opts->cpus > 1 || cpu < 0 || getenv("BPFUML_NO_PIN") || !uml_host_has_idle_cpu())
		return;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	sched_setaffinity(0, sizeof(one), &one);
}

static void uml_child(const struct vm_opts *opts, char *const argv[], int console_fd)
{
	struct rlimit no_core = { 0, 0 };
	int null_fd;

	/* Its own process group; dies with us; no core file when it panics
	 * (UML aborts on panic). */
	setsid();
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	setrlimit(RLIMIT_CORE, &no_core);
	null_fd = open("/dev/null", O_RDONLY);
	dup2(null_fd, 0);
	dup2(console_fd, 1);
	dup2(console_fd, 2);
	setenv("TMPDIR", opts->run_dir, 1);
	uml_memory_on_huge_pages(opts->run_dir);
	uml_pin_one_cpu_guest(opts);
	confine_child(opts->run_dir);
	/* After confine_child(), which closes every other descriptor on exec. */
	if (opts->channel_fd > 0 &&
	    (opts->channel_fd == SERVE_CHANNEL_FD ? fcntl(SERVE_CHANNEL_FD, F_SETFD, 0)
						   : dup2(opts->channel_fd, SERVE_CHANNEL_FD)) < 0)
		_exit(127);
	execv(opts->kernel, argv);
	dprintf(2, "bpfuml: cannot execute %s: %s\n", opts->kernel, strerror(errno));
	_exit(127);
}

static int uml_start(struct vm *vm, const struct vm_opts *opts)
{
	char mem[32], umid[64], uml_dir[4200], init[4200], ncpus[32];
	char run_dir[4200], channel[32] = "con1=none";
	static unsigned int instance;	/* bench boots many guests per process */
	int console_fd, err;
	pid_t pid;

	snprintf(mem, sizeof(mem), "mem=%uM", opts->mem_mb ?: 256);
	snprintf(ncpus, sizeof(ncpus), "ncpus=%u", opts->cpus ?: 1);
	/* Unique per run: two runs at once never share an instance. */
	snprintf(umid, sizeof(umid), "umid=bpfuml-%d-%lx-%u", getpid(), (long)time(NULL), instance++);
	/* uml_dir= is UML's own, read from its argv as it is; init= and the
	 * run directory go on the kernel's command line: quoted. */
	snprintf(uml_dir, sizeof(uml_dir), "uml_dir=%s", opts->run_dir);
	if ((err = vm_cmdline_arg(init, sizeof(init), "init", opts->init)) ||
	    (err = vm_cmdline_arg(run_dir, sizeof(run_dir), NULL, opts->run_dir)))
		return err;

	char *const argv[] = {
		(char *)opts->kernel, mem, umid, uml_dir,
		/* No hostfs= prefix: it would confine nothing.  The root
		 * itself is hostfs of the host's /, so the prefix could only
		 * be "/" (hostfs joins prefix and mount data as strings, and
		 * the host resolves "..", so no prefix confines anyway).
		 * confine_child() confines the process instead. */
		"root=/dev/root", "rootfstype=hostfs", "rootflags=/", "ro",
		/* loglevel=5, not quiet: the console must carry KERN_WARNING,
		 * the level of the kernel's "WARNING:" lines that the console
		 * scan looks for; quiet would hide them. */
		/* One console: each other console or serial line would be a
		 * tty device registered at boot (16 + 64 of them). */
		"con=none", "con0=null,fd:1", channel, "ssl=none", "loglevel=5",
		/* Skip the delay-loop calibration: it costs ~80 ms of every
		 * boot, and a guest that only busy-waits in rare udelay()s
		 * does not need it exact. */
		"lpj=20000000",
		/* Guest processes run under seccomp, not ptrace: fewer host
		 * context switches (a cold verify 89.9 -> 81.2 ms median).
		 * More than one CPU needs it (UML refuses SMP with ptrace);
		 * one CPU falls back to ptrace where no filter can be
		 * installed.  Its weaker isolation of guest processes from
		 * the guest kernel protects nothing here: the guest's root
		 * owns that kernel anyway, and the host is guarded by
		 * confine.c around the whole UML process. */
		opts->cpus > 1 ? "seccomp=on" : "seccomp=auto", ncpus,
		/* UML joins its argv into the command line: one string of
		 * several parameters is parsed as several. */
		(char *)vm_extra_kernel_args(), (char *)vm_bpf_jit_args(opts),
		init, "--", run_dir, NULL,
	};

	/* A warm guest's job line: the guest's tty 1 on our descriptor. */
	if (opts->channel_fd > 0)
		snprintf(channel, sizeof(channel), "con%d=fd:%d", SERVE_TTY_MINOR, SERVE_CHANNEL_FD);

	console_fd = vm_console_open(vm);
	if (console_fd < 0)
		return console_fd;
	pid = fork();
	if (pid < 0) {
		close(console_fd);
		return -errno;
	}
	if (pid == 0)
		uml_child(opts, argv, console_fd);
	close(console_fd);
	vm_process_started(vm, pid);
	return 0;
}

const struct vm_backend vm_backend_uml = {
	.name = "uml",
	.start = uml_start,
	.wait = vm_process_wait,
	.kill = vm_process_kill,
};
