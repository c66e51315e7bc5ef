// SPDX-License-Identifier: GPL-2.0
/* map_bench.bpf.c — the BPF side of `bpfuml bench`: lookups and overwrites
 * of a hash map whose type and shape the runner sets before loading
 * (BPF_MAP_TYPE_HASH or BPF_MAP_TYPE_RHASH, key size 4..256, value size,
 * max_entries).
 *
 * Mirrors upstream's bpf-hashmap-lookup / bpf-hashmap-full-update /
 * htab-mem benchmarks (tools/testing/selftests/bpf/benchs/): keys are
 * 1..nr_entries in their first four bytes, the rest is random and the same
 * for every key, set by the runner.  Upstream drives its programs from
 * fentry with bpf_loop(); these are XDP programs run with BPF_PROG_TEST_RUN
 * and a bounded loop, which every backend can do, UML included.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#define OPS_PER_RUN 128

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(key_size, 4);
	__uint(value_size, 8);
	__uint(max_entries, 1);
} bench_map SEC(".maps");

const volatile __u32 nr_entries = 1;	/* keys 1..nr_entries are present */
__u8 key[256];
__u8 value[4096];
__u32 cursor;
__u64 ops, misses;

static __always_inline void next_key(void)
{
	__u32 index = cursor;

	cursor = index + 1 >= nr_entries ? 0 : index + 1;
	*(__u32 *)key = index + 1;
}

SEC("xdp")
int bench_lookup(struct xdp_md *ctx)
{
	__u32 i;

	for (i = 0; i < OPS_PER_RUN; i++) {
		next_key();
		if (!bpf_map_lookup_elem(&bench_map, key))
			misses++;
	}
	ops += OPS_PER_RUN;
	return XDP_PASS;
}

/* Overwrite keys that are present: in-place copy for RHASH, a new element
 * and a swap for HASH. */
SEC("xdp")
int bench_overwrite(struct xdp_md *ctx)
{
	__u32 i;

	for (i = 0; i < OPS_PER_RUN; i++) {
		next_key();
		if (bpf_map_update_elem(&bench_map, key, value, BPF_EXIST))
			misses++;
	}
	ops += OPS_PER_RUN;
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
