// SPDX-License-Identifier: GPL-2.0
/* thread_info_status.bpf.c — a CO-RE read of task->thread_info.status, as
 * tracing agents built against x86_64's vmlinux.h do (to test TS_COMPAT).
 * The "___x86_64" types are x86_64's view of the two structures; libbpf
 * relocates them against the running kernel's BTF, which must have the
 * member (kernel-patches 0030), else the whole object fails to load. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

struct thread_info___x86_64 {
	unsigned long flags;
	unsigned long syscall_work;
	__u32 status;
} __attribute__((preserve_access_index));

struct task_struct___x86_64 {
	struct thread_info___x86_64 thread_info;
} __attribute__((preserve_access_index));

__u32 status = 0xffffffff;

SEC("raw_tp")
int read_status(void *ctx)
{
	struct task_struct___x86_64 *task = (void *)bpf_get_current_task_btf();

	status = BPF_CORE_READ(task, thread_info.status);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
