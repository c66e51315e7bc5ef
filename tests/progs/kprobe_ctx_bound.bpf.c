// SPDX-License-Identifier: GPL-2.0
/* kprobe_ctx_bound.bpf.c — a kprobe program reading its context one word
 * past x86_64's struct pt_regs (168 bytes).  x86_64 rejects it ("invalid
 * bpf_context access off=168 size=8"); UML's struct pt_regs is larger, and
 * stock UML (and 0005-0009 alone) accepts it; kernel-patches 0010 bounds the
 * context as x86_64 does.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

SEC("kprobe/do_nanosleep")
int past_regs(void *ctx)
{
	return *(volatile __u64 *)(ctx + 168) ? 1 : 0;
}

char LICENSE[] SEC("license") = "GPL";
