// SPDX-License-Identifier: GPL-2.0
/* growth.c — an RHASH map grown from 1 to 100k elements and deleted back to
 * 0.  What is reported as the map's memory (fdinfo "memlock:", which is
 * bpf_map_memory_usage()) is rhtab_map_mem_usage(): sizeof(struct bpf_rhtab)
 * + nelems * elem_size, elem_size = sizeof(struct rhtab_elem) (one
 * rhash_head pointer) + round_up(key_size, 8) + round_up(value_size, 8).
 * Bucket tables are left out on purpose (its comment), so the figure follows
 * the element count exactly, up and down; the deferred shrink of the bucket
 * table is not in it, so its effect is only reported, from /proc/meminfo.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "suite.h"

#define GROW_TO 100000
/* sizeof(struct rhtab_elem) + round_up(4, 8) + round_up(8, 8) on 64-bit */
#define ELEM_SIZE (8 + 8 + 8)

static const __u32 milestones[] = { 1, 10, 100, 1000, 10000, 100000 };
#define NR_MILESTONES (sizeof(milestones) / sizeof(milestones[0]))

static int map_fd = -1;
static long long base_memlock;
static long long grown_memlock[NR_MILESTONES];
static bool grown;

static long long mem_available_kb(void)
{
	char line[128];
	long long kb = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %lld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static long long mem_before_kb, mem_full_kb;

static enum check_status run_grow(struct check *c)
{
	__u32 k, m = 0;
	__u64 v;

	map_fd = rhash_create(GROW_TO, 0);
	if (map_fd < 0)
		return check_fail(c, "map create: %s", strerror(-map_fd));
	mem_before_kb = mem_available_kb();
	base_memlock = map_memlock(map_fd);
	if (base_memlock <= 0)
		return check_fail(c, "no memlock in fdinfo of the empty map: %lld", base_memlock);
	for (k = 0; k < GROW_TO; k++) {
		v = (__u64)k * 3;
		if (bpf_map_update_elem(map_fd, &k, &v, BPF_NOEXIST))
			return check_fail(c, "insert %u: %s", k + 1, strerror(errno));
		if (k + 1 == milestones[m]) {
			grown_memlock[m] = map_memlock(map_fd);
			if (grown_memlock[m] != base_memlock + (long long)milestones[m] * ELEM_SIZE)
				return check_fail(c, "at %u elements memlock is %lld, want %lld + %u * %d = %lld",
						  milestones[m], grown_memlock[m], base_memlock,
						  milestones[m], ELEM_SIZE,
						  base_memlock + (long long)milestones[m] * ELEM_SIZE);
			m++;
		}
	}
	mem_full_kb = mem_available_kb();
	grown = true;
	return check_pass(c, "memlock %lld empty, %lld at 1, %lld at 100k: +%d bytes per element at every "
			  "milestone (1, 10, ..., 100k)", base_memlock, grown_memlock[0],
			  grown_memlock[NR_MILESTONES - 1], ELEM_SIZE);
}

static enum check_status run_all_found(struct check *c)
{
	__u32 k, bad = 0, first_bad = 0;
	__u64 v;

	if (!grown)
		return check_fail(c, "the map was not grown (growth/grow_to_100k failed)");
	for (k = 0; k < GROW_TO; k++)
		if (bpf_map_lookup_elem(map_fd, &k, &v) || v != (__u64)k * 3)
			if (!bad++)
				first_bad = k;
	if (bad)
		return check_fail(c, "%u of %u keys missing or wrong, the first %u", bad, GROW_TO, first_bad);
	k = GROW_TO;
	if (!bpf_map_lookup_elem(map_fd, &k, &v) || errno != ENOENT)
		return check_fail(c, "a key never inserted is found");
	return check_pass(c, "all %u keys found with their values after the resizes", GROW_TO);
}

static enum check_status run_shrink(struct check *c)
{
	long long memlock, mem_empty_kb;
	__u32 k, m = NR_MILESTONES - 1, left;
	__u64 v = 1;

	if (!grown)
		return check_fail(c, "the map was not grown (growth/grow_to_100k failed)");
	for (k = GROW_TO; k-- > 0;) {
		if (bpf_map_delete_elem(map_fd, &k))
			return check_fail(c, "delete of key %u: %s", k, strerror(errno));
		left = k;
		if (m < NR_MILESTONES && left + 1 == milestones[m]) {
			/* One element fewer than the milestone: compare with
			 * what the way up reported one element earlier. */
			memlock = map_memlock(map_fd);
			if (memlock != grown_memlock[m] - ELEM_SIZE)
				return check_fail(c, "at %u elements on the way down memlock is %lld, want %lld",
						  left, memlock, grown_memlock[m] - ELEM_SIZE);
			m--;
		}
	}
	memlock = map_memlock(map_fd);
	if (memlock != base_memlock)
		return check_fail(c, "empty again, memlock is %lld, want %lld as when created",
				  memlock, base_memlock);
	if (map_count_keys(map_fd) != 0)
		return check_fail(c, "empty map walk finds %ld keys", map_count_keys(map_fd));
	/* The shrink runs in rht_deferred_worker: let it, then use the map. */
	usleep(200000);
	mem_empty_kb = mem_available_kb();
	k = 42;
	if (bpf_map_update_elem(map_fd, &k, &v, BPF_NOEXIST) || bpf_map_lookup_elem(map_fd, &k, &v))
		return check_fail(c, "insert/lookup after the shrink: %s", strerror(errno));
	memlock = map_memlock(map_fd);
	close(map_fd);
	if (memlock != base_memlock + ELEM_SIZE)
		return check_fail(c, "one element after the shrink: memlock %lld, want %lld",
				  memlock, base_memlock + ELEM_SIZE);
	return check_pass(c, "memlock back down by %d bytes per delete to %lld at 0; the map works after "
			  "the shrink (MemAvailable, not asserted: %lld kB before, %lld full, %lld empty)",
			  ELEM_SIZE, base_memlock, mem_before_kb, mem_full_kb, mem_empty_kb);
}

struct check growth_checks[] = {
	{ "growth/grow_to_100k", "memlock = base + nelems * elem_size while inserting 1 -> 100k",
	  .run = run_grow },
	{ .name = "growth/all_keys_found", .semantics = "every key inserted is found with its value after the table grew",
	  .run = run_all_found },
	{ "growth/shrink_to_0", "memlock follows deletes back to base at 0; the shrunk map works",
	  .run = run_shrink },
	{ .name = NULL }
};
