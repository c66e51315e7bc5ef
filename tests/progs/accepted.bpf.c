// SPDX-License-Identifier: GPL-2.0
/* accepted.bpf.c — a program every kernel accepts: counts packets in a
 * global and passes them. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

__u64 packets;

SEC("xdp")
int pass_all(struct xdp_md *ctx)
{
	__sync_fetch_and_add(&packets, 1);
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
