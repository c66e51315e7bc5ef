// SPDX-License-Identifier: GPL-2.0
/* vm.c — backend-independent part of the VM interface. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "vm.h"

static const struct vm_backend *backends[] = { &vm_backend_uml, &vm_backend_qemu };

struct vm *vm_new(const char *backend)
{
	struct vm *vm;
	size_t i;

	for (i = 0; i < sizeof(backends) / sizeof(backends[0]); i++) {
		if (strcmp(backends[i]->name, backend))
			continue;
		vm = calloc(1, sizeof(*vm));
		if (!vm)
			return NULL;
		vm->backend = backends[i];
		vm->pidfd = -1;
		return vm;
	}
	errno = EINVAL;
	return NULL;
}

int vm_start(struct vm *vm, const struct vm_opts *opts)
{
	if (!opts || opts->sz < sizeof(struct vm_opts) || !opts->kernel || !opts->run_dir)
		return -EINVAL;
	return vm->backend->start(vm, opts);
}

int vm_wait(struct vm *vm, int timeout_ms, struct vm_exit *exit)
{
	return vm->backend->wait(vm, timeout_ms, exit);
}

void vm_kill(struct vm *vm)
{
	if (vm)
		vm->backend->kill(vm);
}

/* ---- the console: a pipe drained into a head and a tail ring ------------- */

struct vm_console {
	int fd;				/* the pipe's read end, or -1 at its end */
	char *head;			/* the first VM_CONSOLE_HEAD bytes */
	size_t head_len;
	char *tail;			/* ring of the last VM_CONSOLE_TAIL bytes */
	size_t tail_pos, tail_len;	/* next write position, bytes in it */
	unsigned long long dropped;	/* bytes in neither */
	char *text;			/* assembled by vm_console_text() */
	size_t text_len;
};

static void console_add(struct vm_console *c, const char *buf, size_t n)
{
	size_t take;

	if (c->head_len < VM_CONSOLE_HEAD) {
		take = n < VM_CONSOLE_HEAD - c->head_len ? n : VM_CONSOLE_HEAD - c->head_len;
		memcpy(c->head + c->head_len, buf, take);
		c->head_len += take;
		buf += take;
		n -= take;
	}
	if (!n)
		return;
	if (!c->tail && !(c->tail = malloc(VM_CONSOLE_TAIL))) {
		c->dropped += n;
		return;
	}
	while (n) {
		take = VM_CONSOLE_TAIL - c->tail_pos;
		if (take > n)
			take = n;
		memcpy(c->tail + c->tail_pos, buf, take);
		c->tail_pos = (c->tail_pos + take) % VM_CONSOLE_TAIL;
		if (c->tail_len + take > VM_CONSOLE_TAIL) {
			c->dropped += c->tail_len + take - VM_CONSOLE_TAIL;
			c->tail_len = VM_CONSOLE_TAIL;
		} else {
			c->tail_len += take;
		}
		buf += take;
		n -= take;
	}
}

/* Read what is in the pipe now (it never blocks); close it at its end. */
static void console_drain(struct vm *vm)
{
	struct vm_console *c = vm->console;
	char buf[65536];
	ssize_t n;

	while (c && c->fd >= 0) {
		n = read(c->fd, buf, sizeof(buf));
		if (n > 0) {
			console_add(c, buf, n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0 || errno != EAGAIN) {
			close(c->fd);
			c->fd = -1;
		}
		break;
	}
}

int vm_console_open(struct vm *vm)
{
	struct vm_console *c = vm->console;
	int fds[2];

	if (!c) {
		c = vm->console = calloc(1, sizeof(*c));
		if (!c || !(c->head = malloc(VM_CONSOLE_HEAD)))
			return -ENOMEM;
		c->fd = -1;
	}
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	fcntl(fds[0], F_SETFL, O_NONBLOCK);
	c->fd = fds[0];
	return fds[1];
}

const char *vm_console_text(struct vm *vm, size_t *len)
{
	struct vm_console *c = vm ? vm->console : NULL;
	char marker[96] = "";
	size_t start, skip = 0, m;
	char *p;

	if (!c)
		return NULL;
	console_drain(vm);
	free(c->text);
	/* The ring's oldest byte is at tail_pos once it has wrapped. */
	start = c->tail_len < VM_CONSOLE_TAIL ? 0 : c->tail_pos;
	if (c->dropped) {
		snprintf(marker, sizeof(marker), "\n[... %llu bytes of console output dropped ...]\n",
			 c->dropped);
		/* The tail from its first whole line. */
		while (skip < c->tail_len && c->tail[(start + skip) % VM_CONSOLE_TAIL] != '\n')
			skip++;
		if (skip < c->tail_len)
			skip++;
	}
	m = strlen(marker);
	c->text = p = malloc(c->head_len + m + c->tail_len + 1);
	if (!p)
		return NULL;
	memcpy(p, c->head, c->head_len);
	p += c->head_len;
	memcpy(p, marker, m);
	p += m;
	for (size_t i = skip; i < c->tail_len; i++)
		*p++ = c->tail[(start + i) % VM_CONSOLE_TAIL];
	*p = '\0';
	c->text_len = p - c->text;
	if (len)
		*len = c->text_len;
	return c->text;
}

static void console_free(struct vm_console *c)
{
	if (!c)
		return;
	if (c->fd >= 0)
		close(c->fd);
	free(c->head);
	free(c->tail);
	free(c->text);
	free(c);
}

/* ---- the process group ------------------------------------------------------ */

void vm_process_started(struct vm *vm, pid_t pid)
{
	const char *no_pidfd = getenv("BPFUML_TEST_NO_PIDFD");

	vm->pid = pid;
	vm->pidfd = no_pidfd && !strcmp(no_pidfd, "1") ? -1 : syscall(SYS_pidfd_open, pid, 0);
}

/* Kill the group of a leader that has exited but is not reaped yet (so
 * neither its pid nor its group id can have been reused), then reap it.
 * vm->pid is cleared first: a signal handler must never kill a group whose
 * leader is gone. */
static int reap(struct vm *vm, int *status)
{
	pid_t pid = vm->pid;
	int ret;

	kill(-pid, SIGKILL);
	/* A child killed right after fork(), before its setsid(), has no
	 * group of its own yet: the group kill missed it. */
	kill(pid, SIGKILL);
	vm->pid = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	while ((ret = waitpid(pid, status, 0)) < 0 && errno == EINTR)
		;
	if (vm->pidfd >= 0)
		close(vm->pidfd);
	vm->pidfd = -1;
	console_drain(vm);
	return ret < 0 ? -errno : 0;
}

int vm_poll_fds(const struct vm *vm, struct pollfd *pfd, long long *wait_ms)
{
	int n = 0;

	if (!vm || vm->pid <= 0)
		return 0;
	if (vm->pidfd >= 0)
		pfd[n++] = (struct pollfd){ .fd = vm->pidfd, .events = POLLIN };
	else if (*wait_ms > VM_POLL_MS)
		*wait_ms = VM_POLL_MS;	/* look whether it has exited that often */
	if (vm->console && vm->console->fd >= 0)
		pfd[n++] = (struct pollfd){ .fd = vm->console->fd, .events = POLLIN };
	return n;
}

int vm_process_wait(struct vm *vm, int timeout_ms, struct vm_exit *exit)
{
	long long deadline = mono_ms() + timeout_ms;
	int status = 0, err;

	if (vm->pid <= 0)
		return -ECHILD;
	for (;;) {
		struct pollfd pfd[VM_POLL_FDS];
		siginfo_t info = { 0 };
		long long left;
		int n;

		console_drain(vm);
		/* WNOWAIT: exited, but not reaped until its group is killed. */
		if (waitid(P_PID, vm->pid, &info, WEXITED | WNOHANG | WNOWAIT) < 0)
			return -errno;	/* -EINTR: a signal came, the caller decides */
		if (info.si_pid == vm->pid)
			break;
		left = deadline - mono_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		if (left > INT_MAX)
			left = INT_MAX;
		n = vm_poll_fds(vm, pfd, &left);
		if (poll(pfd, n, (int)left) < 0)
			return -errno;
	}
	err = reap(vm, &status);
	if (err)
		return err;
	exit->exited = 1;
	exit->status = status;
	return 0;
}

void vm_process_kill(struct vm *vm)
{
	if (vm->pid <= 0)
		return;
	reap(vm, NULL);
}

void vm_kill_from_signal(struct vm *vm)
{
	pid_t pid = vm ? vm->pid : 0;

	if (pid > 0) {
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);	/* before its setsid(): see reap() */
	}
}

void vm_free(struct vm *vm)
{
	if (!vm)
		return;
	vm_kill(vm);
	console_free(vm->console);
	free(vm);
}

const char *vm_bpf_jit_args(const struct vm_opts *opts)
{
	if (opts->bpf_jit == 1)
		return "sysctl.net.core.bpf_jit_enable=1 sysctl.net.core.bpf_jit_kallsyms=1";
	if (opts->bpf_jit == 0)
		return "sysctl.net.core.bpf_jit_enable=0";
	return "";
}

bool vm_cmdline_can_carry(const char *path)
{
	return !strchr(path, '"');
}

int vm_cmdline_arg(char *buf, size_t size, const char *name, const char *value)
{
	int n;

	if (!vm_cmdline_can_carry(value))
		return -EINVAL;
	n = snprintf(buf, size, "%s%s\"%s\"", name ?: "", name ? "=" : "", value);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

const char *vm_extra_kernel_args(void)
{
	const char *args = getenv("BPFUML_KERNEL_ARGS");

	if (!args || strchr(args, '"') || strstr(args, "--"))
		return "";
	return args;
}
