// SPDX-License-Identifier: GPL-2.0
/* policy_helper_not_allowed.bpf.c — an XDP program calling a helper that
 * only socket-buffer programs may use.  Fix: use bpf_xdp_store_bytes(), or
 * move the logic to a tc program.
 * bpfuml-expect: rejected Policy
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

SEC("xdp")
int wrong_helper(struct xdp_md *ctx)
{
	__u32 zero = 0;

	bpf_skb_store_bytes(ctx, 0, &zero, sizeof(zero), 0);
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
