// SPDX-License-Identifier: GPL-2.0
/* struct_ops.bpf.c — a minimal TCP congestion control as struct_ops
 * programs and map.  Stock UML has no struct_ops (it needs BPF_JIT);
 * with kernel-patches 0008 it verifies as on x86_64, and registering it
 * (the map update) needs a BPF trampoline, which UML cannot make.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

SEC("struct_ops")
__u32 BPF_PROG(bpfuml_ssthresh, struct sock *sk)
{
	return 2;
}

SEC("struct_ops")
void BPF_PROG(bpfuml_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
}

SEC("struct_ops")
__u32 BPF_PROG(bpfuml_undo_cwnd, struct sock *sk)
{
	return 10;
}

SEC(".struct_ops")
struct tcp_congestion_ops bpfuml_ca = {
	.ssthresh = (void *)bpfuml_ssthresh,
	.cong_avoid = (void *)bpfuml_cong_avoid,
	.undo_cwnd = (void *)bpfuml_undo_cwnd,
	.name = "bpfuml_ca",
};

char LICENSE[] SEC("license") = "GPL";
