// SPDX-License-Identifier: GPL-2.0
/* exec_context_call_under_lock.bpf.c — calls a helper while holding a
 * bpf_spin_lock.  Fix: do the lookup before taking the lock.
 * bpfuml-expect: rejected Execution Context Safety
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

struct locked_counter {
	struct bpf_spin_lock lock;
	__u64 value;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct locked_counter);
} counter SEC(".maps");

SEC("tc")
int call_under_lock(struct __sk_buff *skb)
{
	struct locked_counter *c;
	__u32 key = 0;

	c = bpf_map_lookup_elem(&counter, &key);
	if (!c)
		return 0;
	bpf_spin_lock(&c->lock);
	c->value += bpf_get_prandom_u32() & 1;	/* a call under the lock */
	bpf_spin_unlock(&c->lock);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
