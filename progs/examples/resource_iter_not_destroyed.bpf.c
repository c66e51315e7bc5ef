// SPDX-License-Identifier: GPL-2.0
/* resource_iter_not_destroyed.bpf.c — creates an open-coded numbers
 * iterator and never destroys it.  Fix: bpf_iter_num_destroy() on every
 * path (bpf_for() does it for you).
 * bpfuml-expect: rejected Resource Lifetime Safety
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

extern int bpf_iter_num_new(struct bpf_iter_num *it, int start, int end) __ksym;
extern int *bpf_iter_num_next(struct bpf_iter_num *it) __ksym;
extern void bpf_iter_num_destroy(struct bpf_iter_num *it) __ksym;

SEC("xdp")
int iter_leak(struct xdp_md *ctx)
{
	struct bpf_iter_num it;
	int *v, sum = 0;

	bpf_iter_num_new(&it, 0, 10);
	while ((v = bpf_iter_num_next(&it)))
		sum += *v;
	return sum ? XDP_PASS : XDP_DROP;	/* no bpf_iter_num_destroy() */
}

char LICENSE[] SEC("license") = "GPL";
