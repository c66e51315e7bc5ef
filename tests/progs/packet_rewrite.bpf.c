// SPDX-License-Identifier: GPL-2.0
/* packet_rewrite.bpf.c — for `bpfuml run`: rewrites the packet (swaps the
 * MAC addresses, bumps the first payload byte) and leaves traces in globals
 * of every section, which the harness must read back by name. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

__u64 runs;				/* .bss */
__u32 last_len = 0xdeadbeef;		/* .data */
const volatile __u8 bump = 3;		/* .rodata */
int last_first_byte = -1;		/* .data */

SEC("xdp")
int rewrite(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	unsigned char tmp[6], *payload = data + sizeof(*eth);

	runs++;
	last_len = data_end - data;
	if ((void *)(payload + 1) > data_end)
		return XDP_DROP;
	__builtin_memcpy(tmp, eth->h_dest, 6);
	__builtin_memcpy(eth->h_dest, eth->h_source, 6);
	__builtin_memcpy(eth->h_source, tmp, 6);
	last_first_byte = payload[0];
	payload[0] += bump;
	return XDP_TX;
}

char LICENSE[] SEC("license") = "GPL";
