// SPDX-License-Identifier: GPL-2.0
/* loader_fixups.bpf.c — an object as real projects ship them: its user
 * space sizes the maps at load time (max_entries 0 here), including a
 * map-in-map's inner map.  As built, no map can be created and no program
 * judged; with the agent's fixups (as veristat's) it verifies, and the
 * fixups are listed. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 0);		/* sized by user space */
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

struct inner_map {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 0);		/* sized by user space */
	__type(key, __u32);
	__type(value, __u64);
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH_OF_MAPS);
	__uint(max_entries, 0);		/* sized by user space */
	__type(key, __u32);
	__array(values, struct inner_map);
} per_ifindex SEC(".maps");

SEC("xdp")
int count_packets(struct xdp_md *ctx)
{
	__u32 key = ctx->ingress_ifindex, zero = 0;
	__u64 *value, one = 1;
	void *inner;

	value = bpf_map_lookup_elem(&counts, &key);
	if (value)
		__sync_fetch_and_add(value, 1);
	else
		bpf_map_update_elem(&counts, &key, &one, BPF_ANY);
	inner = bpf_map_lookup_elem(&per_ifindex, &key);
	if (inner) {
		value = bpf_map_lookup_elem(inner, &zero);
		if (value)
			*value += 1;
	}
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
