// SPDX-License-Identifier: GPL-2.0
/* tail_call.bpf.c — a tail call through a prog array that libbpf fills at
 * load.  With the JIT requested (kernel-patches 0008) the verifier gives
 * the tail call a poke descriptor, as on x86_64; the interpreter must still
 * take the call through the map.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

int reached_target = 0;

SEC("tc")
int tail_target(struct __sk_buff *skb)
{
	reached_target = 1;
	return 7;
}

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, int (void *));
} jump_table SEC(".maps") = {
	.values = { [0] = (void *)&tail_target },
};

SEC("tc")
int tail_caller(struct __sk_buff *skb)
{
	bpf_tail_call(skb, &jump_table, 0);
	return 1;
}

char LICENSE[] SEC("license") = "GPL";
