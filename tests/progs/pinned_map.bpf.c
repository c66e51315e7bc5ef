// SPDX-License-Identifier: GPL-2.0
/* pinned_map.bpf.c — a map pinned by name, as daemons share maps across
 * restarts.  Verified as built (--no-fixups), libbpf pins it in the guest's
 * bpffs, which a verify job mounts only when a pin needs it. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} shared_counter SEC(".maps");

SEC("xdp")
int count_shared(struct xdp_md *ctx)
{
	__u32 zero = 0;
	__u64 *value = bpf_map_lookup_elem(&shared_counter, &zero);

	if (value)
		__sync_fetch_and_add(value, 1);
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
