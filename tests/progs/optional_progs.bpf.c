// SPDX-License-Identifier: GPL-2.0
/* optional_progs.bpf.c — programs in "?" sections, which libbpf does not
 * load unless asked (autoload off), as in the kernel's *_fail selftests:
 * each must still be judged by the kernel, never reported accepted unseen. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

SEC("?socket")
int opt_rejected(struct __sk_buff *skb)
{
	__u32 key = skb->len;
	__u64 *value = bpf_map_lookup_elem(&counters, &key);

	return *value;		/* value may be NULL: rejected */
}

SEC("?socket")
int opt_accepted(struct __sk_buff *skb)
{
	return 0;
}

SEC("socket")
int plain_accepted(struct __sk_buff *skb)
{
	return 1;
}

char LICENSE[] SEC("license") = "GPL";
