// SPDX-License-Identifier: GPL-2.0
/* long_log.bpf.c — an accepted program whose level-2 verifier log is larger
 * than the agent's first log buffer (16 MiB): the buffer must grow, and the
 * log must arrive whole, statistics line included. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

SEC("xdp")
int long_loop(struct xdp_md *ctx)
{
	__u32 i, sum = 0;

#pragma clang loop unroll(disable)
	for (i = 0; i < 4000; i++)
		sum += i ^ ctx->ingress_ifindex;
	return sum & 1 ? XDP_PASS : XDP_DROP;
}

char LICENSE[] SEC("license") = "GPL";
