// SPDX-License-Identifier: GPL-2.0
/* limits.c — max_entries and the creation-time rules of RHASH.
 * rhtab_map_update_elem(): an insert when nelems >= max_entries is -E2BIG
 * (a hard limit, not a bucket count); updates of present keys still work.
 * rhtab_map_alloc_check(): BPF_F_NO_PREALLOC required (-EINVAL),
 * BPF_F_ZERO_SEED -EINVAL, key_size > U16_MAX -E2BIG, map_extra upper 32
 * bits -EINVAL, map_extra >
 * U16_MAX -E2BIG, map_extra > max_entries -EINVAL; rhtab_map_alloc():
 * max_entries > 2^31 -E2BIG.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include "suite.h"

#define LIMIT 64

/* The limit from user space, and from BPF through bpf_map_update_elem()
 * of the map_op program (ops_map has max_entries 8). */
struct map_op_args {
	__u32 op;
	__u32 key;
	__u64 value;
	__u64 flags;
	__s64 ret;
};

static enum check_status run_max_entries_user(struct check *c)
{
	__u64 v = 1;
	__u32 k;
	int fd, err;

	fd = rhash_create(LIMIT, 0);
	if (fd < 0)
		return check_fail(c, "map create: %s", strerror(-fd));
	for (k = 0; k < LIMIT; k++)
		if (bpf_map_update_elem(fd, &k, &v, BPF_NOEXIST)) {
			err = errno;
			close(fd);
			return check_fail(c, "insert %u of %u failed: %s", k + 1, LIMIT, strerror(err));
		}
	k = LIMIT;
	err = bpf_map_update_elem(fd, &k, &v, BPF_ANY) ? errno : 0;
	if (err != E2BIG) {
		close(fd);
		return check_fail(c, "insert %u into a full map of %u: %s, want E2BIG",
				  LIMIT + 1, LIMIT, err ? strerror(err) : "success");
	}
	k = 3;
	v = 2;
	if (bpf_map_update_elem(fd, &k, &v, BPF_EXIST) || bpf_map_update_elem(fd, &k, &v, BPF_ANY)) {
		err = errno;
		close(fd);
		return check_fail(c, "updating a present key of the full map: %s, want success",
				  strerror(err));
	}
	if (bpf_map_delete_elem(fd, &k)) {
		err = errno;
		close(fd);
		return check_fail(c, "delete: %s", strerror(err));
	}
	k = LIMIT;
	err = bpf_map_update_elem(fd, &k, &v, BPF_NOEXIST) ? errno : 0;
	if (err) {
		close(fd);
		return check_fail(c, "insert after a delete made room: %s, want success", strerror(err));
	}
	k = LIMIT + 1;
	err = bpf_map_update_elem(fd, &k, &v, BPF_NOEXIST) ? errno : 0;
	close(fd);
	if (err != E2BIG)
		return check_fail(c, "insert into the again full map: %s, want E2BIG",
				  err ? strerror(err) : "success");
	return check_pass(c, "%u inserted, #%u -E2BIG, present key updated in the full map, "
			  "one delete made room for exactly one insert", LIMIT, LIMIT + 1);
}

static enum check_status run_max_entries_bpf(struct check *c)
{
	static const char *const progs[] = { "map_op", NULL };
	struct map_op_args args = { .op = 0 /* OP_UPDATE */, .flags = BPF_NOEXIST };
	LIBBPF_OPTS(bpf_test_run_opts, run, .ctx_in = &args, .ctx_size_in = sizeof(args));
	struct bpf_object *obj;
	char why[256];
	__u32 k, max;
	int prog_fd, map_fd;

	obj = suite_open(progs, why, sizeof(why));
	if (!obj)
		return check_fail(c, "%s", why);
	prog_fd = suite_prog_fd(obj, "map_op");
	map_fd = suite_map_fd(obj, "ops_map");
	max = bpf_map__max_entries(bpf_object__find_map_by_name(obj, "ops_map"));
	for (k = 0; k <= max; k++) {
		args.key = k;
		args.value = k;
		args.ret = 1;
		if (bpf_prog_test_run_opts(prog_fd, &run)) {
			bpf_object__close(obj);
			return check_fail(c, "BPF_PROG_TEST_RUN: %s", strerror(errno));
		}
		if (k < max && args.ret) {
			bpf_object__close(obj);
			return check_fail(c, "insert %u of %u from BPF: %lld", k + 1, max, (long long)args.ret);
		}
	}
	if (args.ret != -E2BIG) {
		bpf_object__close(obj);
		return check_fail(c, "insert %u into the full map of %u from BPF: %lld, want -E2BIG (%d)",
				  max + 1, max, (long long)args.ret, -E2BIG);
	}
	k = 0;
	bpf_map_delete_elem(map_fd, &k);
	args.key = max;
	bpf_prog_test_run_opts(prog_fd, &run);
	bpf_object__close(obj);
	if (args.ret)
		return check_fail(c, "insert from BPF after a delete: %lld, want 0", (long long)args.ret);
	return check_pass(c, "%u inserted from BPF, #%u -E2BIG, room again after a delete", max, max + 1);
}

struct create_case {
	__u32 flags, max_entries;
	__u64 map_extra;
	int want;	/* 0 or -errno */
	__u32 key_size;	/* 0: 4 */
};

static enum check_status run_create(struct check *c)
{
	const struct create_case *cc = c->param;
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = cc->flags, .map_extra = cc->map_extra);
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	int fd, err;

	fd = bpf_map_create(BPF_MAP_TYPE_RHASH, "suite_create", cc->key_size ?: 4, 8,
			    cc->max_entries, &opts);
	err = fd < 0 ? -errno : 0;
	if (err != cc->want) {
		if (fd >= 0)
			close(fd);
		return check_fail(c, "key_size %u map_flags %#x max_entries %u map_extra %#llx: %s, want %s",
				  cc->key_size ?: 4, cc->flags, cc->max_entries,
				  (unsigned long long)cc->map_extra,
				  err ? strerror(-err) : "created", cc->want ? strerror(-cc->want) : "created");
	}
	if (fd < 0)
		return check_pass(c, "refused: %s", strerror(-err));
	/* Accepted: the hint is kept as given. */
	err = bpf_map_get_info_by_fd(fd, &info, &len) ? errno : 0;
	close(fd);
	if (err || info.map_extra != cc->map_extra || info.max_entries != cc->max_entries)
		return check_fail(c, "created, but map info says map_extra %#llx max_entries %u (%s)",
				  (unsigned long long)info.map_extra, info.max_entries,
				  err ? strerror(err) : "info ok");
	return check_pass(c, "created; map info: map_extra %llu, max_entries %u",
			  (unsigned long long)info.map_extra, info.max_entries);
}

#define NP BPF_F_NO_PREALLOC
#define CREATE(nm, sem, f, max, extra, errno_want)					\
	{ .name = "limits/" nm, .semantics = sem, .run = run_create,		\
	  .param = &(const struct create_case){ .flags = f, .max_entries = max,	\
						.map_extra = extra, .want = errno_want } }

struct check limits_checks[] = {
	{ .name = "limits/max_entries_user", .semantics = "max_entries is a hard limit for user-space inserts: -E2BIG, room after a delete",
	  .run = run_max_entries_user },
	{ .name = "limits/max_entries_bpf", .semantics = "max_entries is a hard limit for inserts from BPF: -E2BIG, room after a delete",
	  .run = run_max_entries_bpf },
	CREATE("create_valid_hint", "map_extra 1000 <= min(max_entries, 65535) is accepted and reported",
	       NP, 100000, 1000, 0),
	CREATE("create_hint_65535", "map_extra 65535 (U16_MAX) is accepted", NP, 100000, 65535, 0),
	CREATE("create_hint_over_u16", "map_extra 65536 > U16_MAX: -E2BIG", NP, 100000, 65536, -E2BIG),
	CREATE("create_hint_over_max_entries", "map_extra 100 > max_entries 50: -EINVAL", NP, 50, 100, -EINVAL),
	CREATE("create_hint_upper_bits", "map_extra with upper 32 bits set: -EINVAL",
	       NP, 100000, (1ULL << 32) | 10, -EINVAL),
	CREATE("create_needs_no_prealloc", "without BPF_F_NO_PREALLOC: -EINVAL", 0, 100, 0, -EINVAL),
	CREATE("create_zero_seed", "BPF_F_ZERO_SEED: -EINVAL", NP | BPF_F_ZERO_SEED, 100, 0, -EINVAL),
	CREATE("create_max_entries_2g", "max_entries 2^31 is accepted", NP, 1U << 31, 0, 0),
	CREATE("create_max_entries_over_2g", "max_entries 2^31+1: -E2BIG", NP, (1U << 31) + 1, 0, -E2BIG),
	{ .name = "limits/create_key_size_over_u16", .semantics = "key_size 65536 > U16_MAX: -E2BIG",
	  .run = run_create, .param = &(const struct create_case){ .flags = NP, .max_entries = 100,
						    .want = -E2BIG, .key_size = 65536 } },
	{ .name = NULL }
};
