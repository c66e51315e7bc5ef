// SPDX-License-Identifier: GPL-2.0
/* program_structure_unreachable.bpf.c — hand-written BPF with instructions
 * no path reaches.  Fix: remove them, or branch to them.
 * bpfuml-expect: rejected Program Structure
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

SEC("xdp")
__attribute__((naked)) int dead_code(void)
{
	asm volatile (
		"r0 = 2;"	/* XDP_PASS */
		"exit;"
		"r0 = 1;"	/* unreachable */
		"exit;"
		::: "memory");
}

char LICENSE[] SEC("license") = "GPL";
