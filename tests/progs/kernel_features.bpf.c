// SPDX-License-Identifier: GPL-2.0
/* kernel_features.bpf.c — one object, programs of different kernels' eras,
 * for the kernel matrix (verify --kernels, tests/areas/kernels.py):
 * bpf_loop() is 5.17's, bpf_icmp_send() a kfunc new in 7.3 (for cgroup_skb programs).  A program
 * that calls a kfunc its kernel lacks is rejected there; one that asks
 * first (bpf_ksym_exists(), as agents shipping to many kernels do) loads
 * everywhere.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

int loops = -1;

static long count(__u64 index, void *ctx)
{
	loops++;
	return 0;
}

SEC("tc")
int loop_helper(struct __sk_buff *skb)
{
	loops = 0;
	bpf_loop(4, count, NULL, 0);
	return 0;
}

SEC("cgroup_skb/egress")
int icmp_send_kfunc(struct __sk_buff *skb)
{
	bpf_icmp_send(skb, 3 /* ICMP_DEST_UNREACH */, 1 /* ICMP_HOST_UNREACH */);
	return 1;
}

SEC("cgroup_skb/egress")
int icmp_send_if_present(struct __sk_buff *skb)
{
	if (bpf_ksym_exists(bpf_icmp_send))
		bpf_icmp_send(skb, 3, 1);
	return 1;
}

char LICENSE[] SEC("license") = "GPL";
