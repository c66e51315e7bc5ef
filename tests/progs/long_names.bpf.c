// SPDX-License-Identifier: GPL-2.0
/* long_names.bpf.c — two programs whose names (132 characters) agree in
 * their first 131: verdicts must stay with their programs, however long
 * the names (the agent once copied names into 128 bytes and looked them
 * up again: NULL, and a crashed PID 1). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

SEC("socket")
int long_name_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx_a(struct __sk_buff *skb)
{
	return 0;
}

SEC("socket")
int long_name_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx_b(struct __sk_buff *skb)
{
	__u32 key = skb->len;
	__u64 *value = bpf_map_lookup_elem(&counters, &key);

	return *value;		/* value may be NULL: rejected */
}

char LICENSE[] SEC("license") = "GPL";
