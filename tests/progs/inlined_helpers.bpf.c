// SPDX-License-Identifier: GPL-2.0
/* inlined_helpers.bpf.c — the helpers x86_64's verifier replaces with reads
 * of its per-CPU cpu_number and current_task (kernel-patches 0050): what the
 * inlined code reads must be what the helpers that stay calls say. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

int cpu = -1;
int task_pid = -1;		/* bpf_get_current_task_btf()->pid, inlined */
int helper_pid = -1;		/* bpf_get_current_pid_tgid(), a call */
int same_task = 0;		/* bpf_get_current_task() == ..._btf() */

SEC("syscall")
int current_and_cpu(void *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();

	cpu = bpf_get_smp_processor_id();
	task_pid = task->pid;
	helper_pid = (int)bpf_get_current_pid_tgid();
	same_task = (unsigned long)bpf_get_current_task() == (unsigned long)task;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
