// SPDX-License-Identifier: GPL-2.0
/* limit_too_many_insns.bpf.c — a bounded loop the verifier walks iteration
 * by iteration until it passes its 1,000,000-instruction budget.  7.3 prints
 * no structured report for verifier limits (those reports were deferred):
 * only the legacy line.  Fix: fewer iterations, or bpf_loop()/bpf_for().
 * bpfuml-expect: rejected no-report
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

SEC("xdp")
int long_walk(struct xdp_md *ctx)
{
	__u8 seen[64] = {};
	__u32 i, sum = 0;

	/* Indexing the stack with i makes i precise, so no two iterations'
	 * states are equal and the verifier cannot prune. */
#pragma clang loop unroll(disable)
	for (i = 0; i < 400000; i++) {
		seen[i & 63] ^= ctx->ingress_ifindex;
		sum += seen[(i + 1) & 63];
	}
	return sum & 1 ? XDP_PASS : XDP_DROP;
}

char LICENSE[] SEC("license") = "GPL";
