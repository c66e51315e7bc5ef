// SPDX-License-Identifier: GPL-2.0
/* vm.c — backend-independent part of the VM interface. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
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
