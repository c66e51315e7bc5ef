// SPDX-License-Identifier: GPL-2.0
/* global_switch.bpf.c — a loader's settings decide the verdicts.  With a
 * const volatile global left at 0 the verifier prunes the branch that reads
 * a map value without a NULL check; set (as a skeleton sets it before
 * load, or verify --set-global), the branch is live and rejected. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

enum switch_mode { MODE_OFF, MODE_ON };

const volatile int unsafe_path = 0;
const volatile enum switch_mode mode = MODE_OFF;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} values SEC(".maps");

SEC("xdp")
int switched_by_int(struct xdp_md *ctx)
{
	__u32 key = 0;
	__u64 *v = bpf_map_lookup_elem(&values, &key);

	if (unsafe_path)
		return *v;
	return v ? XDP_PASS : XDP_DROP;
}

SEC("xdp")
int switched_by_enum(struct xdp_md *ctx)
{
	__u32 key = 0;
	__u64 *v = bpf_map_lookup_elem(&values, &key);

	if (mode == MODE_ON)
		return *v;
	return v ? XDP_PASS : XDP_DROP;
}

char LICENSE[] SEC("license") = "GPL";
