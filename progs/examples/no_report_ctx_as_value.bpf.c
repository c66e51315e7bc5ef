// SPDX-License-Identifier: GPL-2.0
/* no_report_ctx_as_value.bpf.c — hands the program context to a helper that
 * wants a pointer to a value on the stack.  Fix: copy what you need into a
 * stack variable and pass its address.  7.3 has not converted this check
 * (check_helper_mem_access) to a structured report: bpfuml falls back to the
 * legacy line, the failing instruction and its source line.
 * bpfuml-expect: rejected no-report
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, struct xdp_md);
} last_ctx SEC(".maps");

SEC("xdp")
int ctx_as_value(struct xdp_md *ctx)
{
	__u32 key = 0;

	bpf_map_update_elem(&last_ctx, &key, ctx, BPF_ANY);
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
