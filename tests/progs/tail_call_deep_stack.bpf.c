// SPDX-License-Identifier: GPL-2.0
/* tail_call_deep_stack.bpf.c — a program with a small stack tail calls one
 * that uses nearly all of the 512 bytes.  The interpreter runs the target in
 * the caller's frame; without kernel-patches 0014 that frame is sized for
 * the caller (bpf_do_misc_fixups() loses its MAX_BPF_STACK raise) and the
 * target's stores overwrite the interpreter's saved registers: the kernel
 * oopses, as in the selftest flow_dissector_skb.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

int deep_sum = 0;

SEC("tc")
int deep_target(struct __sk_buff *skb)
{
	volatile __u8 buf[480];
	int i, sum = 0;

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = i;
	for (i = 0; i < sizeof(buf); i++)
		sum += buf[i];
	deep_sum = sum;
	return 3;
}

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, int (void *));
} deep_jump SEC(".maps") = {
	.values = { [0] = (void *)&deep_target },
};

SEC("tc")
int shallow_caller(struct __sk_buff *skb)
{
	bpf_tail_call(skb, &deep_jump, 0);
	return 0;
}
