/* SPDX-License-Identifier: GPL-2.0 */
/* session.h — one guest run: a private run directory, a job written into it,
 * the guest booted on it, the result read back, and everything removed.
 *
 * The engine never blocks on one guest: session_start() boots it,
 * session_poll() looks at it (console drained, exit reaped, deadline
 * checked) and says when it has ended, with its outcome in s->status;
 * session_wait_any() sleeps until one of several running guests has news.
 * session_run() is the three for a single guest.  The infrastructure's
 * outcome (s->status) stays apart from the job's own (s->result).
 */
#ifndef BPFUML_SESSION_H
#define BPFUML_SESSION_H

#include <json-c/json.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>

#include "paths.h"
#include "vm.h"

enum session_status {
	SESSION_OK,		/* the guest answered */
	SESSION_TIMEOUT,	/* it did not finish in time and was killed */
	SESSION_NO_ANSWER,	/* it ended without a result */
	SESSION_KERNEL_TROUBLE,	/* panic, oops, BUG or WARN on the console */
	SESSION_START_FAILED,
	SESSION_INTERRUPTED,
	SESSION_MALFORMED,	/* its result broke the rules (trouble says how) */
};

struct session {
	char run_dir[PATH_MAX];
	int dir_fd;			/* the run directory, for openat() */
	struct vm *vm;
	json_object *result;		/* the guest's result.json */
	enum session_status status;
	char *trouble;			/* console lines that explain a failure, or
					 * what is wrong with a malformed result */
	long long start_ns, exit_ns;	/* host wall clock around the guest */
	int keep;			/* leave the run directory for inspection */
	const char *backend;		/* "uml" (default) or "qemu" */
	const char *accel;		/* QEMU's accelerator ("kvm", "tcg"), or NULL */
	unsigned int mem_mb;		/* guest memory; 0: SESSION_MEM_MB */
	unsigned int cpus;		/* guest CPUs; 0: 1 */
	const char *bpf_mode;		/* "jit", "interpreter"; NULL: the backend's default */
	bool kernel_lacks_jit;		/* !bpfuml_paths.kernel_has_jit: verdict.c's notes */
	int channel_fd;			/* > 0: boot a warm guest on this job line */
	/* Where the guest sees the run directory: RUN_DIR_IN_GUEST, or a
	 * warm guest's job directory (session_connect()). */
	char guest_dir[128];
	int server_fd;			/* > 0: the job goes to `bpfuml serve` */
	char confinement[32];		/* a warm guest's, as its server said */
	bool warm;			/* done by a warm guest (kept after destroy) */
	/* The engine's own. */
	bool running;			/* started and not yet ended */
	long long deadline_ms;		/* CLOCK_MONOTONIC */
	int start_err;			/* -errno when SESSION_START_FAILED */
	char command[16];		/* the job's, for its result's rules */
	struct session *next_live;	/* the signal handler's list */
};

/* 512 MiB: room for a 256 MiB verifier log; more costs boot time.  An
 * object whose maps take more (they are allocated at load) needs --mem. */
#define SESSION_MEM_MB 512
#define SESSION_MEM_MIN_MB 128
#define SESSION_MEM_MAX_MB 65536
/* Room a guest needs in its run directory beside UML's memory file: the
 * console log, the job's files, the verifier logs it writes back. */
#define SESSION_SPACE_MARGIN_MB 64

/* Where run directories are made: $BPFUML_RUNDIR, else /dev/shm (UML's
 * memory file is best on tmpfs), else $TMPDIR or /tmp; an absolute path. */
int session_base_dir(char *buf, size_t size);
int session_create(struct session *s);
/* Instead of session_create(): a job directory from the `bpfuml serve`
 * listening at SOCKET, whose warm guest will do the job (serve_proto.h);
 * the rest goes as for a guest of our own.  0, or -errno with the reason in
 * WHY (no server there, not ours, another backend or BPF mode, ...). */
int session_connect(struct session *s, const char *socket, const char *backend,
		    const char *bpf_mode, const char *kernel_version, char *why, size_t why_size);
/* The name of a status in serve_proto.h's messages, and back (-1: unknown). */
const char *session_status_name(enum session_status status);
int session_status_parse(const char *name);
/* Remove PATH and all below it (the guest's files are hostile: no link is
 * followed, permissions it took away are given back). */
void session_remove_tree(const char *path);
/* Does DIR's file system have room for GUESTS guests of MEM_MB each at once
 * (UML's memory file when MEM_FILE, which QEMU has not, plus the margin)?
 * 0 if so; -ENOSPC with the MiB needed and free if not. */
int session_check_space(const char *dir, unsigned int guests, unsigned int mem_mb, bool mem_file,
			unsigned long long *need_mb, unsigned long long *free_mb);
/* Copy a host file into the run directory under NAME. */
int session_add_file(struct session *s, const char *name, const char *src);
/* Write TEXT into the run directory as NAME. */
int session_write_file(struct session *s, const char *name, const char *text);
/* Boot the guest on JOB, to be done within TIMEOUT_S.  0, or -errno with
 * s->status set (SESSION_START_FAILED or SESSION_INTERRUPTED). */
int session_start(struct session *s, const struct bpfuml_paths *paths, json_object *job,
		  int timeout_s);
/* One look at a started guest, never blocking: true once it has ended (by
 * itself, by its deadline, or by a signal to us), its result read and its
 * console scanned, with s->status saying how. */
bool session_poll(struct session *s);
/* Sleep until one of the N sessions (running or not) may have news, a
 * deadline of theirs passed, or a signal came. */
void session_wait_any(struct session *const *ss, size_t n);
/* session_start(), then session_poll() until the guest has ended. */
int session_run(struct session *s, const struct bpfuml_paths *paths, json_object *job,
		int timeout_s);
/* What went wrong, for a session that ended other than SESSION_OK: a
 * category ("timeout", "kernel", ...) and a message (malloc'd) saying it
 * with the console lines that explain it. */
char *session_failure_text(const struct session *s, int timeout_s, const char **category);
/* Read a file the guest wrote (NUL-terminated), as guest_file_read() does:
 * no symbolic link, nothing but a regular file within guest_file_cap(). */
int session_read_file(struct session *s, const char *name, char **buf, size_t *len);
/* Read and check result.json of a COMMAND job into s->result: 0, -ENOENT
 * when there is none, or -EPROTO with the reason in s->trouble. */
int session_read_result(struct session *s, const char *command);
void session_destroy(struct session *s);

/* Set by the signal handler (SIGINT, SIGTERM, SIGHUP, SIGQUIT), which
 * also kills the guest of every session that exists at that moment;
 * checked between steps.  SIGPIPE is caught and does nothing: a closed
 * stdout fails the writes, and the run still ends and removes its
 * directory. */
extern volatile int session_interrupted;
void session_install_signal_handlers(void);
/* poll() that a stopping signal always ends: -1 with EINTR at once when one
 * has come (session_interrupted), and no window in which one is missed
 * between that look and the sleep.  TIMEOUT_MS < 0: no time-out. */
int session_ppoll(struct pollfd *pfd, nfds_t n, int timeout_ms);

#endif
