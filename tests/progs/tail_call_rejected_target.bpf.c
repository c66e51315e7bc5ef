// SPDX-License-Identifier: GPL-2.0
/* tail_call_rejected_target.bpf.c — a prog array that libbpf fills at load
 * with a program the verifier rejects.  Loaded together, the object fails;
 * loaded alone, the caller passes the verifier and only libbpf's filling of
 * the array fails (its target was not loaded).  The caller's verdict must
 * be the verifier's: accepted.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} values SEC(".maps");

SEC("tc")
int bad_target(struct __sk_buff *skb)
{
	__u32 key = 0;
	__u64 *v = bpf_map_lookup_elem(&values, &key);

	return *v;	/* no NULL check: rejected */
}

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, int (void *));
} jump_table SEC(".maps") = {
	.values = { [0] = (void *)&bad_target },
};

SEC("tc")
int good_caller(struct __sk_buff *skb)
{
	bpf_tail_call(skb, &jump_table, 0);
	return 1;
}

char LICENSE[] SEC("license") = "GPL";
