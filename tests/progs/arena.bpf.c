// SPDX-License-Identifier: GPL-2.0
/* arena.bpf.c — a BPF arena, which only a JIT can run (its pointers become
 * PROBE_MEM32 accesses).  Stock UML rejects it ("JIT is required to use
 * arena"); with kernel-patches 0008 UML verifies it as x86_64 does and then
 * refuses to load it with ENOTSUPP, as it has no JIT to run it.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#define __arena __attribute__((address_space(1)))

struct {
	__uint(type, BPF_MAP_TYPE_ARENA);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);	/* pages */
} arena SEC(".maps");

void __arena *bpf_arena_alloc_pages(void *map, void __arena *addr, __u32 page_cnt,
				    int node_id, __u64 flags) __ksym;

SEC("syscall")
int arena_write(void *ctx)
{
	int __arena *page = bpf_arena_alloc_pages(&arena, NULL, 1, -1, 0);

	if (!page)
		return 1;
	*page = 42;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
