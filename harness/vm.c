// SPDX-License-Identifier: GPL-2.0
/* vm.c — backend-independent part of the VM interface. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

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

void vm_process_started(struct vm *vm, pid_t pid)
{
	vm->pid = pid;
	vm->pidfd = syscall(SYS_pidfd_open, pid, 0);
}

static void process_forget(struct vm *vm)
{
	if (vm->pidfd >= 0)
		close(vm->pidfd);
	vm->pidfd = -1;
	vm->pid = 0;
}

int vm_process_wait(struct vm *vm, int timeout_ms, struct vm_exit *exit)
{
	struct pollfd pfd = { .fd = vm->pidfd, .events = POLLIN };
	int status, ret;

	if (vm->pid <= 0)
		return -ECHILD;
	if (vm->pidfd >= 0) {
		ret = poll(&pfd, 1, timeout_ms);
		if (ret < 0)
			return -errno;	/* -EINTR: a signal came, the caller decides */
		if (ret == 0)
			return -ETIMEDOUT;
	}
	if (waitpid(vm->pid, &status, 0) < 0)
		return -errno;
	exit->exited = 1;
	exit->status = status;
	/* The leader is gone; its helpers (if any) go with the group. */
	kill(-vm->pid, SIGKILL);
	process_forget(vm);
	return 0;
}

void vm_process_kill(struct vm *vm)
{
	if (vm->pid <= 0)
		return;
	kill(-vm->pid, SIGKILL);
	waitpid(vm->pid, NULL, 0);
	process_forget(vm);
}

void vm_kill_from_signal(struct vm *vm)
{
	if (vm && vm->pid > 0)
		kill(-vm->pid, SIGKILL);
}

void vm_free(struct vm *vm)
{
	if (!vm)
		return;
	vm_kill(vm);
	free(vm);
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
