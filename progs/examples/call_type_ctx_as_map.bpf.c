// SPDX-License-Identifier: GPL-2.0
/* call_type_ctx_as_map.bpf.c — passes the program context where a helper
 * wants a map.  Fix: pass the map (&seen), not ctx.
 * bpfuml-expect: rejected Call Type Safety
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} seen SEC(".maps");

SEC("xdp")
int ctx_as_map(struct xdp_md *ctx)
{
	__u32 key = 0;

	return bpf_map_lookup_elem((void *)ctx, &key) ? XDP_PASS : XDP_DROP;
}

char LICENSE[] SEC("license") = "GPL";
