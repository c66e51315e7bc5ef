// SPDX-License-Identifier: GPL-2.0
/* map_create_fails.bpf.c — a BPF_MAP_TYPE_RHASH without BPF_F_NO_PREALLOC,
 * which the kernel refuses to create: the program is never verified, and
 * bpfuml must say it could not be loaded, and why. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_RHASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u64);
} needs_no_prealloc SEC(".maps");

SEC("xdp")
int uses_bad_map(struct xdp_md *ctx)
{
	__u32 key = 0;

	return bpf_map_lookup_elem(&needs_no_prealloc, &key) ? XDP_PASS : XDP_DROP;
}

char LICENSE[] SEC("license") = "GPL";
