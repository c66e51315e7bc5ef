// SPDX-License-Identifier: GPL-2.0
/* big_map.bpf.c — an object whose map (600 MiB, allocated at load) does
 * not fit in the guest's default 512 MiB, as netobserv's ring buffers and
 * flow tables do not: `verify --mem` gives the guest room for it. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

struct page_sized { char bytes[4096]; };

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 153600);	/* 600 MiB of 4 KiB values */
	__type(key, __u32);
	__type(value, struct page_sized);
} big SEC(".maps");

SEC("xdp")
int touch_big(struct xdp_md *ctx)
{
	__u32 key = 0;
	struct page_sized *v = bpf_map_lookup_elem(&big, &key);

	if (v)
		v->bytes[0]++;
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
