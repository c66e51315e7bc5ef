// SPDX-License-Identifier: GPL-2.0
/* jit_only.bpf.c — programs x86_64 verifies and runs, and UML verifies the
 * same way but cannot run, since only a JIT can (kernel-patches 0013-0015):
 * bpf_throw(), and a tail call from a subprogram.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

extern void bpf_throw(__u64 cookie) __ksym;

SEC("tc")
int throws(struct __sk_buff *skb)
{
	if (skb->len > 1000)
		bpf_throw(1);
	return 0;
}

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} jump_table SEC(".maps");

static __noinline int tail_call_from_subprog(struct __sk_buff *skb)
{
	bpf_tail_call(skb, &jump_table, 0);
	return skb->len;
}

SEC("tc")
int tail_calls_from_subprog(struct __sk_buff *skb)
{
	return tail_call_from_subprog(skb);
}
