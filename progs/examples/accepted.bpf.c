// SPDX-License-Identifier: GPL-2.0
/* accepted.bpf.c — counts packets per protocol; every check is in place.
 * bpfuml-expect: accepted
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __u16);
	__type(value, __u64);
} per_proto SEC(".maps");

SEC("xdp")
int count_protocols(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	__u64 one = 1, *count;
	__u16 proto;

	if ((void *)(eth + 1) > data_end)
		return XDP_DROP;
	proto = bpf_ntohs(eth->h_proto);
	count = bpf_map_lookup_elem(&per_proto, &proto);
	if (count)
		__sync_fetch_and_add(count, 1);
	else
		bpf_map_update_elem(&per_proto, &proto, &one, BPF_NOEXIST);
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
