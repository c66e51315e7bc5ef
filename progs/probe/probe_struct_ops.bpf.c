// SPDX-License-Identifier: GPL-2.0
/* probe_struct_ops.bpf.c — the struct_ops row of `bpfuml probe`: a minimal
 * TCP congestion control.  Its programs are verified against
 * tcp_congestion_ops' members; attaching registers the map with the TCP
 * stack, which builds a trampoline per member.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

SEC("struct_ops")
__u32 BPF_PROG(probe_ssthresh, struct sock *sk)
{
	return 2;
}

SEC("struct_ops")
void BPF_PROG(probe_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
}

SEC("struct_ops")
__u32 BPF_PROG(probe_undo_cwnd, struct sock *sk)
{
	return 2;
}

SEC(".struct_ops")
struct tcp_congestion_ops type_struct_ops = {
	.ssthresh = (void *)probe_ssthresh,
	.cong_avoid = (void *)probe_cong_avoid,
	.undo_cwnd = (void *)probe_undo_cwnd,
	.name = "bpfuml_probe",
};
