// SPDX-License-Identifier: GPL-2.0
/* sched_ext_minimal.bpf.c — the smallest useful sched_ext scheduler (one
 * shared queue, FIFO), written as schedulers for 7.3 are: struct_ops
 * callbacks that call scx_bpf_* kfuncs.  UML has sched_ext
 * (uml-config/30-real-world.config), so it verifies as on x86_64. */
#define BPF_NO_KFUNC_PROTOTYPES
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#define SHARED_DSQ 0

s32 scx_bpf_create_dsq(u64 dsq_id, s32 node) __ksym;
void scx_bpf_dsq_insert(struct task_struct *p, u64 dsq_id, u64 slice, u64 enq_flags) __ksym;
bool scx_bpf_dsq_move_to_local(u64 dsq_id) __ksym;

SEC("struct_ops/minimal_enqueue")
void BPF_PROG(minimal_enqueue, struct task_struct *p, u64 enq_flags)
{
	scx_bpf_dsq_insert(p, SHARED_DSQ, SCX_SLICE_DFL, enq_flags);
}

SEC("struct_ops/minimal_dispatch")
void BPF_PROG(minimal_dispatch, s32 cpu, struct task_struct *prev)
{
	scx_bpf_dsq_move_to_local(SHARED_DSQ);
}

SEC("struct_ops.s/minimal_init")
s32 BPF_PROG(minimal_init)
{
	return scx_bpf_create_dsq(SHARED_DSQ, -1);
}

SEC(".struct_ops.link")
struct sched_ext_ops minimal_ops = {
	.enqueue = (void *)minimal_enqueue,
	.dispatch = (void *)minimal_dispatch,
	.init = (void *)minimal_init,
	.name = "bpfuml_minimal",
};

char LICENSE[] SEC("license") = "GPL";
