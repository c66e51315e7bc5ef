// SPDX-License-Identifier: GPL-2.0
/* rhash_smoke.bpf.c — a syscall program that reads and writes a
 * BPF_MAP_TYPE_RHASH map: it sums the values user space stored under keys
 * 0..nr_keys-1 and stores the sum under key SUM_KEY.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#define SUM_KEY 1000

struct {
	__uint(type, BPF_MAP_TYPE_RHASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u64);
} values SEC(".maps");

struct smoke_args {
	__u32 nr_keys;
	__u32 missing;
	__u64 sum;
};

SEC("syscall")
int rhash_sum(struct smoke_args *args)
{
	__u32 i, key, sum_key = SUM_KEY;
	__u64 sum = 0, *value;

	/* The counter stays in a register: the key's stack slot would lose
	 * its bounds and the verifier would see an infinite loop. */
	for (i = 0; i < 16 && i < args->nr_keys; i++) {
		key = i;
		value = bpf_map_lookup_elem(&values, &key);
		if (!value) {
			args->missing++;
			continue;
		}
		sum += *value;
	}
	args->sum = sum;
	return bpf_map_update_elem(&values, &sum_key, &sum, BPF_NOEXIST);
}

char LICENSE[] SEC("license") = "GPL";
