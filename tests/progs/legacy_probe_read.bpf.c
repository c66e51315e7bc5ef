// SPDX-License-Identifier: GPL-2.0
/* legacy_probe_read.bpf.c — the legacy bpf_probe_read() and
 * bpf_probe_read_str() (helpers 4 and 45), which many tracing and security
 * agents still call: x86_64 offers them, and so must UML (kernel-patches
 * 0029).  Run as a raw tracepoint, the program reads kernel memory (the
 * current task's tgid) and user memory (the agent's argv[0]) with them. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

int tgid_read;			/* task->tgid through bpf_probe_read() */
int tgid_expected;		/* the same from bpf_get_current_pid_tgid() */
long arg0_len;			/* bpf_probe_read_str()'s return */
char arg0[64];			/* the current process's argv[0] */

SEC("raw_tp")
int legacy_reads(void *ctx)
{
	struct task_struct *task = (void *)bpf_get_current_task();
	struct mm_struct *mm = NULL;
	unsigned long arg_start = 0;

	tgid_expected = bpf_get_current_pid_tgid() >> 32;
	bpf_probe_read(&tgid_read, sizeof(tgid_read), &task->tgid);
	bpf_probe_read(&mm, sizeof(mm), &task->mm);
	if (!mm)
		return 1;
	bpf_probe_read(&arg_start, sizeof(arg_start), &mm->arg_start);
	arg0_len = bpf_probe_read_str(arg0, sizeof(arg0), (void *)arg_start);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
