// SPDX-License-Identifier: GPL-2.0
/* register_type_null_deref.bpf.c — uses a map lookup's result without the
 * NULL check.  Fix: `if (!value) return XDP_PASS;` before the access.
 * bpfuml-expect: rejected Register Type Safety
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

SEC("xdp")
int null_deref(struct xdp_md *ctx)
{
	__u32 key = ctx->rx_queue_index;
	__u64 *value = bpf_map_lookup_elem(&counters, &key);

	*value += 1;
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
