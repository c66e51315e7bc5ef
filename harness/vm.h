/* SPDX-License-Identifier: GPL-2.0 */
/* vm.h — the virtual machine behind a small interface: start, wait, kill.
 *
 * The channel between host and guest is a host directory (the run
 * directory) that the guest mounts: hostfs on UML, 9p/virtiofs on QEMU.
 * Callers never learn which backend runs.
 *
 * The console (the kernel's, and the VM program's own messages) reaches
 * the host through a pipe that vm_wait() drains: only its first and last
 * VM_CONSOLE_HEAD and VM_CONSOLE_TAIL bytes are kept, so that a guest that
 * floods it costs neither memory nor tmpfs space.
 */
#ifndef BPFUML_VM_H
#define BPFUML_VM_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct vm_opts {
	size_t sz;		/* sizeof(struct vm_opts), for growth */
	const char *kernel;	/* kernel image to boot */
	const char *init;	/* guest agent, a host path the guest can reach */
	const char *run_dir;	/* host directory shared with the guest */
	unsigned int mem_mb;	/* guest memory */
	unsigned int cpus;	/* guest CPUs; 0: 1 */
	int channel_fd;		/* > 0: a warm guest's job line (run_dir.h's
				 * serve protocol), the host's end of it */
	int bpf_jit;		/* net.core.bpf_jit_enable on the kernel's
				 * command line: 1, 0, or -1 for the kernel's
				 * own default */
};
#define VM_OPTS(name, ...) struct vm_opts name = { .sz = sizeof(struct vm_opts), __VA_ARGS__ }

struct vm_exit {
	int exited;		/* the guest process ended by itself */
	int status;		/* its wait status */
};

struct vm;
struct vm_console;

#define VM_CONSOLE_HEAD (4u << 20)
#define VM_CONSOLE_TAIL (4u << 20)

struct vm_backend {
	const char *name;
	int (*start)(struct vm *vm, const struct vm_opts *opts);
	/* 0 once the guest is gone; -ETIMEDOUT or -EINTR otherwise.  With a
	 * TIMEOUT_MS of 0, one look that never blocks. */
	int (*wait)(struct vm *vm, int timeout_ms, struct vm_exit *exit);
	/* Idempotent; after it, no process of the guest is left. */
	void (*kill)(struct vm *vm);
};

struct vm {
	const struct vm_backend *backend;
	pid_t pid;		/* leader of the guest's process group, or 0 */
	const char *accel;	/* set by start: "kvm" or "tcg" (qemu), NULL (uml) */
	int pidfd;		/* -1: poll for the exit instead */
	struct vm_console *console;
};

/* NULL for an unknown backend name. */
struct vm *vm_new(const char *backend);
int vm_start(struct vm *vm, const struct vm_opts *opts);
int vm_wait(struct vm *vm, int timeout_ms, struct vm_exit *exit);
void vm_kill(struct vm *vm);
void vm_free(struct vm *vm);
/* What the console said: its head, "[... N bytes of console output
 * dropped ...]" when there was more, and its tail.  NUL-terminated, valid
 * until vm_free(); NULL when the guest was never started. */
const char *vm_console_text(struct vm *vm, size_t *len);

/*
 * For backends whose guest is a host process group led by its first process
 * (UML, QEMU): open the console pipe (the write end, returned, becomes the
 * child's stdout and stderr; the caller closes it after fork()), record the
 * child after fork(), wait for it with a time-out while draining the
 * console, kill the whole group.  Backends use these as their wait and kill
 * operations.  BPFUML_TEST_NO_PIDFD=1 makes the wait poll as it does where
 * pidfd_open() is refused (old kernels, seccomp profiles).
 */
int vm_console_open(struct vm *vm);
void vm_process_started(struct vm *vm, pid_t pid);
int vm_process_wait(struct vm *vm, int timeout_ms, struct vm_exit *exit);
void vm_process_kill(struct vm *vm);

/* For one poll() over many guests: the descriptors that wake it when
 * VM has news (its exit, console output), at most VM_POLL_FDS of them put
 * into PFD, their number returned.  Where the exit has no descriptor
 * (no pidfd), *WAIT_MS is cut to VM_POLL_MS. */
#define VM_POLL_FDS 2
#define VM_POLL_MS 20
int vm_poll_fds(const struct vm *vm, struct pollfd *pfd, long long *wait_ms);

/* Async-signal-safe: kill the guest's processes from a signal handler. */
void vm_kill_from_signal(struct vm *vm);

/*
 * Paths on the guest kernel's command line (init=, the run directory after
 * "--").  UML joins its argv into one line, QEMU passes -append: either way
 * the kernel's parser (next_arg) splits it at blanks outside double quotes
 * and takes the quotes off, and has no escape for a '"' inside them.
 */
bool vm_cmdline_can_carry(const char *path);
/* NAME=VALUE (NAME NULL: VALUE alone) into BUF, VALUE in double quotes.
 * -EINVAL when VALUE has a '"', -ENAMETOOLONG when BUF is too small. */
int vm_cmdline_arg(char *buf, size_t size, const char *name, const char *value);

/* $BPFUML_KERNEL_ARGS: more parameters for the guest kernel's command line
 * (profiling a boot: "initcall_debug printk.time=1"), put before init=;
 * "" when unset or when it holds a '"' or "--", which would change what the
 * kernel hands to init. */
const char *vm_extra_kernel_args(void);

/* "sysctl.net.core.bpf_jit_enable=N sysctl.net.core.bpf_jit_kallsyms=N" for
 * OPTS->bpf_jit (kallsyms as x86_64 has it with the JIT on: JITed programs
 * in /proc/kallsyms), or "" when the kernel's default stands. */
const char *vm_bpf_jit_args(const struct vm_opts *opts);

extern const struct vm_backend vm_backend_uml;
extern const struct vm_backend vm_backend_qemu;

#endif
