// SPDX-License-Identifier: GPL-2.0
/* many_inserts.bpf.c — 500 inserts into a BPF_F_NO_PREALLOC map in one run.
 *
 * Elements of such maps come from bpf_mem_alloc, whose per-CPU cache is
 * refilled from irq_work.  x86_64 raises that irq_work with a self-IPI, so
 * the cache is refilled as soon as the inserting program runs with IRQs on
 * again; without an irq_work interrupt (stock UML) the refill waits for the
 * next tick and the cache runs dry after a few inserts: -ENOMEM.
 *
 * Each program counts its successful inserts in a global, remembers the first
 * error and where it happened, reads each inserted key back and returns 0
 * when all NR_KEYS keys went in with the right values.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#ifndef NR_KEYS
#define NR_KEYS 500
#endif

struct {
	__uint(type, BPF_MAP_TYPE_RHASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} rhash SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} hash SEC(".maps");

__u32 rhash_inserted, rhash_found, rhash_first_err_at;
int rhash_first_err;
__u32 hash_inserted, hash_found, hash_first_err_at;
int hash_first_err;

static __always_inline int insert_many(void *map, __u32 *inserted, __u32 *found,
				       int *first_err, __u32 *first_err_at)
{
	__u64 value, *v;
	__u32 i, key;
	int err;

	/* One loop: the verifier walks it NR_KEYS times. */
	for (i = 0; i < NR_KEYS; i++) {
		key = i;
		value = (__u64)i * 3 + 1;
		err = bpf_map_update_elem(map, &key, &value, BPF_NOEXIST);
		if (err) {
			if (!*first_err) {
				*first_err = err;
				*first_err_at = i;
			}
			continue;
		}
		(*inserted)++;
		v = bpf_map_lookup_elem(map, &key);
		if (v && *v == (__u64)i * 3 + 1)
			(*found)++;
	}
	return *inserted == NR_KEYS && *found == NR_KEYS ? 0 : 1;
}

SEC("tc")
int insert_rhash(struct __sk_buff *skb)
{
	return insert_many(&rhash, &rhash_inserted, &rhash_found,
			   &rhash_first_err, &rhash_first_err_at);
}

SEC("tc")
int insert_hash(struct __sk_buff *skb)
{
	return insert_many(&hash, &hash_inserted, &hash_found,
			   &hash_first_err, &hash_first_err_at);
}

char LICENSE[] SEC("license") = "GPL";
