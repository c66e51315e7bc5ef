// SPDX-License-Identifier: GPL-2.0
/* x86_task_layout.bpf.c — what programs built for x86_64 find in its
 * kernel and UML had under other names or not at all:
 *  - a tracepoint record's member named errno (kernel-patches 0051);
 *  - __do_sys_getpid(), the body of a system call without arguments
 *    (0052; ebpf_exporter attaches there);
 *  - a new thread's thread.sp, pointing at its struct fork_frame, whose
 *    regs hold the child's user registers (0053; tracee reads the new
 *    thread's user stack pointer so at fork).
 * The "___x86_64" types are x86_64's view; libbpf relocates them against
 * the running kernel's BTF, and a missing member or type fails the load.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

struct trace_event_raw_signal_generate___x86_64 {
	int sig;
	int errno;
} __attribute__((preserve_access_index));

struct thread_struct___x86_64 {
	unsigned long sp;
} __attribute__((preserve_access_index));

struct task_struct___x86_64 {
	struct thread_struct___x86_64 thread;
	int pid;
	struct mm_struct *mm;
} __attribute__((preserve_access_index));

struct pt_regs___x86_64 {
	unsigned long sp;
} __attribute__((preserve_access_index));

struct fork_frame___x86_64 {
	struct pt_regs___x86_64 regs;
} __attribute__((preserve_access_index));

/* Signals generated, and those whose record's errno reads 0 (kill() and
 * the kernel's SIGCHLD leave si_errno 0). */
long signals = 0;
long signals_errno_0 = 0;
/* getpid() calls seen in __do_sys_getpid(). */
long getpid_calls = 0;
/* Forks seen, and those whose child's user stack pointer, read through
 * thread.sp's fork frame, lies just below the child's start of stack. */
long forks = 0;
long forks_sp_on_stack = 0;

SEC("tracepoint/signal/signal_generate")
int on_signal(struct trace_event_raw_signal_generate___x86_64 *ctx)
{
	signals++;
	if (ctx->errno == 0)
		signals_errno_0++;
	return 0;
}

SEC("fentry/__do_sys_getpid")
int BPF_PROG(on_getpid)
{
	getpid_calls++;
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	struct task_struct___x86_64 *task = (void *)child;
	struct fork_frame___x86_64 *frame;
	unsigned long sp, start_stack;

	frame = (void *)BPF_CORE_READ(task, thread.sp);
	sp = BPF_CORE_READ(frame, regs.sp);
	start_stack = BPF_CORE_READ(task, mm, start_stack);
	forks++;
	/* A forked process runs on its parent's stack, a few pages at most
	 * below where the stack began (8 MiB: the default stack limit). */
	if (sp && start_stack && sp < start_stack && start_stack - sp < (8UL << 20))
		forks_sp_on_stack++;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
