// SPDX-License-Identifier: GPL-2.0
/* memory_packet_bounds.bpf.c — reads the Ethernet header without checking
 * it against data_end.  Fix: `if ((void *)(eth + 1) > data_end) return ...;`
 * bpfuml-expect: rejected Memory Safety
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

SEC("xdp")
int unchecked_header(struct xdp_md *ctx)
{
	struct ethhdr *eth = (void *)(long)ctx->data;

	return eth->h_proto == 0x0008 ? XDP_PASS : XDP_DROP;
}

char LICENSE[] SEC("license") = "GPL";
