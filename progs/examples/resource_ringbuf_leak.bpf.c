// SPDX-License-Identifier: GPL-2.0
/* resource_ringbuf_leak.bpf.c — reserves ring-buffer space and forgets to
 * submit or discard it on one path.  Fix: bpf_ringbuf_discard() there.
 * bpfuml-expect: rejected Resource Lifetime Safety
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} events SEC(".maps");

SEC("xdp")
int leak_reservation(struct xdp_md *ctx)
{
	__u32 *event = bpf_ringbuf_reserve(&events, sizeof(*event), 0);

	if (!event)
		return XDP_PASS;
	if (ctx->rx_queue_index)
		return XDP_DROP;	/* leaks the reservation */
	*event = ctx->ingress_ifindex;
	bpf_ringbuf_submit(event, 0);
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
