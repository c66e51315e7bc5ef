// SPDX-License-Identifier: GPL-2.0
/* uprobe_nop10.bpf.c — counts the hits of a uprobe that
 * tests/smoke/uprobe_nop10.c attaches to its nop10 site. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

int hits;

SEC("uprobe")
int on_nop10(void *ctx)
{
	__sync_fetch_and_add(&hits, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
