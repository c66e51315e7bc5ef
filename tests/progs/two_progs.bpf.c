// SPDX-License-Identifier: GPL-2.0
/* two_progs.bpf.c — one good program and one bad one in the same object:
 * the bad one must not hide the good one's verdict. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} seen SEC(".maps");

SEC("xdp")
int good_prog(struct xdp_md *ctx)
{
	__u32 key = 1;
	__u64 *value = bpf_map_lookup_elem(&seen, &key);

	if (value)
		*value += 1;
	return XDP_PASS;
}

SEC("xdp")
int bad_prog(struct xdp_md *ctx)
{
	unsigned char *data = (void *)(long)ctx->data;

	return data[0];		/* no check against data_end */
}

char LICENSE[] SEC("license") = "GPL";
