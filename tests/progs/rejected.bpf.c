// SPDX-License-Identifier: GPL-2.0
/* rejected.bpf.c — dereferences a map lookup without the NULL check; the
 * verifier must refuse it and explain why. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

SEC("xdp")
int unchecked_lookup(struct xdp_md *ctx)
{
	__u32 key = 0;
	__u64 *value = bpf_map_lookup_elem(&counters, &key);

	*value += 1;		/* value may be NULL */
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
