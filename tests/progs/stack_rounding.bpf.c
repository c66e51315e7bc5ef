// SPDX-License-Identifier: GPL-2.0
/* stack_rounding.bpf.c — three nested frames whose stacks fit in 512 bytes
 * when each is rounded up to 16 bytes, as x86_64's verifier does with the
 * JIT requested (0 + 240 + 240), but not when rounded to 32 as stock UML's
 * interpreter-only verifier does (32 + 256 + 256 = 544: "combined stack
 * size of 3 calls is 544. Too large").  x86_64 accepts it.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#define FRAME 232	/* 232 % 32 == 8: 240 rounded to 16, 256 to 32 */

__noinline int inner(struct __sk_buff *skb)
{
	volatile char buf[FRAME] = {};

	buf[skb->len % FRAME] = 1;
	return buf[FRAME - 1] + skb->len;
}

__noinline int outer(struct __sk_buff *skb)
{
	volatile char buf[FRAME] = {};

	buf[skb->len % FRAME] = 2;
	return buf[FRAME - 1] + inner(skb);
}

SEC("tc")
int stack_rounding(struct __sk_buff *skb)
{
	return outer(skb) ? 0 : 1;
}

char LICENSE[] SEC("license") = "GPL";
