// SPDX-License-Identifier: GPL-2.0
/* flags.c — update flags and deletes, from user space and from BPF.
 * rhtab_map_update_elem(): a present key is updated in place unless
 * BPF_NOEXIST (-EEXIST); an absent key is inserted unless BPF_EXIST
 * (-ENOENT); flags other than BPF_ANY/NOEXIST/EXIST (| BPF_F_LOCK) are
 * -EINVAL, and BPF_F_LOCK needs a bpf_spin_lock in the value.  Deleting an
 * absent key is -ENOENT (rhtab_map_delete_elem()); lookup_and_delete copies
 * the value out and removes the key (rhtab_map_lookup_and_delete_elem()).
 */
#include <errno.h>
#include <string.h>
#include "suite.h"

#define PRESENT_KEY 7
#define ABSENT_KEY 8
#define OLD_VALUE 111
#define NEW_VALUE 222

enum map_op { OP_UPDATE, OP_DELETE, OP_LOOKUP };

struct map_op_args {	/* as in rhash_suite.bpf.c */
	__u32 op;
	__u32 key;
	__u64 value;
	__u64 flags;
	__s64 ret;
};

static struct bpf_object *obj;
static int map_fd, prog_fd;
static char load_error[256];

static int setup(void)
{
	static const char *const progs[] = { "map_op", NULL };

	if (!obj) {
		obj = suite_open(progs, load_error, sizeof(load_error));
		if (!obj)
			return -1;
		map_fd = suite_map_fd(obj, "ops_map");
		prog_fd = suite_prog_fd(obj, "map_op");
	}
	return 0;
}

/* One operation, from BPF or from user space: 0 or -errno. */
static int op(bool from_bpf, enum map_op what, __u32 key, __u64 *value, __u64 flags)
{
	struct map_op_args args = { .op = what, .key = key, .flags = flags };
	LIBBPF_OPTS(bpf_test_run_opts, run, .ctx_in = &args, .ctx_size_in = sizeof(args));

	if (!from_bpf) {
		int err = what == OP_UPDATE ? bpf_map_update_elem(map_fd, &key, value, flags) :
			  what == OP_DELETE ? bpf_map_delete_elem(map_fd, &key) :
			  bpf_map_lookup_elem(map_fd, &key, value);

		return err ? -errno : 0;
	}
	if (value)
		args.value = *value;
	if (bpf_prog_test_run_opts(prog_fd, &run))
		return -1000 - errno;	/* the run itself failed: never a map errno */
	if (what == OP_LOOKUP && value)
		*value = args.value;
	return (int)args.ret;
}

static const char *err_name(int err)
{
	static char buf[64];

	if (err == 0)
		return "0";
	if (err <= -1000) {
		snprintf(buf, sizeof(buf), "BPF_PROG_TEST_RUN failed: %s", strerror(-1000 - err));
		return buf;
	}
	snprintf(buf, sizeof(buf), "-%s", err == -EEXIST ? "EEXIST" : err == -ENOENT ? "ENOENT" :
		 err == -EINVAL ? "EINVAL" : err == -E2BIG ? "E2BIG" : strerror(-err));
	return buf;
}

/* The key's value, or -ENOENT, looked up from user space. */
static long long value_of(__u32 key)
{
	__u64 v;

	return bpf_map_lookup_elem(map_fd, &key, &v) ? -errno : (long long)v;
}

struct update_case {
	bool from_bpf;
	__u64 flags;
	bool present;		/* the key is in the map before the update */
	int want;		/* the update's return */
};

static enum check_status run_update(struct check *c)
{
	const struct update_case *uc = c->param;
	__u32 key = uc->present ? PRESENT_KEY : ABSENT_KEY, k;
	__u64 old = OLD_VALUE, new = NEW_VALUE;
	long long after, want_after;
	int err;

	if (setup())
		return check_fail(c, "%s", load_error);
	for (k = 0; k < 16; k++)
		bpf_map_delete_elem(map_fd, &k);
	k = PRESENT_KEY;
	if (bpf_map_update_elem(map_fd, &k, &old, BPF_NOEXIST))
		return check_fail(c, "setup: insert of key %u: %s", k, strerror(errno));
	err = op(uc->from_bpf, OP_UPDATE, key, &new, uc->flags);
	after = value_of(key);
	want_after = uc->want ? (uc->present ? OLD_VALUE : -ENOENT) : NEW_VALUE;
	if (err != uc->want)
		return check_fail(c, "update returned %s, want %s", err_name(err), err_name(uc->want));
	if (after != want_after)
		return check_fail(c, "update returned %s as wanted, but the key's value is then %lld, want %lld",
				  err_name(err), after, want_after);
	if (map_count_keys(map_fd) != 1 + (!uc->present && !uc->want))
		return check_fail(c, "the map holds %ld keys afterwards, want %d",
				  map_count_keys(map_fd), 1 + (!uc->present && !uc->want));
	return check_pass(c, "returned %s; value %s", err_name(err),
			  uc->want ? "unchanged" : "is the new one");
}

static enum check_status run_delete(struct check *c)
{
	const bool *from_bpf = c->param;
	__u64 v = OLD_VALUE;
	__u32 k;
	int err;

	if (setup())
		return check_fail(c, "%s", load_error);
	for (k = 0; k < 16; k++)
		bpf_map_delete_elem(map_fd, &k);
	k = PRESENT_KEY;
	bpf_map_update_elem(map_fd, &k, &v, BPF_NOEXIST);
	err = op(*from_bpf, OP_DELETE, ABSENT_KEY, NULL, 0);
	if (err != -ENOENT)
		return check_fail(c, "delete of an absent key returned %s, want -ENOENT", err_name(err));
	err = op(*from_bpf, OP_DELETE, PRESENT_KEY, NULL, 0);
	if (err)
		return check_fail(c, "delete of a present key returned %s, want 0", err_name(err));
	if (value_of(PRESENT_KEY) != -ENOENT || op(*from_bpf, OP_LOOKUP, PRESENT_KEY, &v, 0) != -ENOENT)
		return check_fail(c, "the deleted key is still found");
	err = op(*from_bpf, OP_DELETE, PRESENT_KEY, NULL, 0);
	if (err != -ENOENT)
		return check_fail(c, "a second delete of the key returned %s, want -ENOENT", err_name(err));
	return check_pass(c, "absent: -ENOENT; present: 0, then gone; again: -ENOENT");
}

static enum check_status run_lookup_and_delete(struct check *c)
{
	__u64 v = OLD_VALUE, out = 0;
	__u32 k;
	int err;

	if (setup())
		return check_fail(c, "%s", load_error);
	for (k = 0; k < 16; k++)
		bpf_map_delete_elem(map_fd, &k);
	k = PRESENT_KEY;
	bpf_map_update_elem(map_fd, &k, &v, BPF_NOEXIST);
	err = bpf_map_lookup_and_delete_elem(map_fd, &k, &out) ? -errno : 0;
	if (err || out != OLD_VALUE)
		return check_fail(c, "on a present key: %s, value %llu; want 0, %u",
				  err_name(err), (unsigned long long)out, OLD_VALUE);
	if (value_of(k) != -ENOENT)
		return check_fail(c, "the key is still there after lookup_and_delete");
	err = bpf_map_lookup_and_delete_elem(map_fd, &k, &out) ? -errno : 0;
	if (err != -ENOENT)
		return check_fail(c, "on the now absent key: %s, want -ENOENT", err_name(err));
	/* BPF_F_LOCK needs a bpf_spin_lock in the value; this one has none. */
	bpf_map_update_elem(map_fd, &k, &v, BPF_NOEXIST);
	err = bpf_map_lookup_and_delete_elem_flags(map_fd, &k, &out, BPF_F_LOCK) ? -errno : 0;
	if (err != -EINVAL)
		return check_fail(c, "with BPF_F_LOCK on a value without a lock: %s, want -EINVAL",
				  err_name(err));
	return check_pass(c, "present: value copied out, key gone; absent: -ENOENT; "
			  "BPF_F_LOCK without a lock: -EINVAL");
}

static enum check_status run_bad_flags(struct check *c)
{
	__u64 v = 1;
	__u32 k = ABSENT_KEY;
	int e1, e2;

	if (setup())
		return check_fail(c, "%s", load_error);
	bpf_map_delete_elem(map_fd, &k);
	e1 = bpf_map_update_elem(map_fd, &k, &v, BPF_EXIST + 1) ? -errno : 0;
	e2 = bpf_map_update_elem(map_fd, &k, &v, BPF_F_LOCK) ? -errno : 0;
	if (e1 != -EINVAL || e2 != -EINVAL)
		return check_fail(c, "flags BPF_EXIST+1: %s, BPF_F_LOCK without a lock: %s; want -EINVAL both",
				  err_name(e1), err_name(e2));
	if (value_of(k) != -ENOENT)
		return check_fail(c, "a refused update inserted the key");
	return check_pass(c, "both -EINVAL, nothing inserted");
}

#define UPDATE(side, bpf, flag, pres, want_err)					\
	{ .name = "flags/" side "_" #flag "_" #pres,				\
	  .semantics = #flag " on a " #pres " key, from " side ": " #want_err, \
	  .run = run_update,							\
	  .param = &(const struct update_case){ bpf, flag, pres##_present, want_err } }
#define present_present true
#define absent_present false

static const bool from_user = false, from_bpf = true;

struct check flags_checks[] = {
	UPDATE("user", false, BPF_ANY, present, 0),
	UPDATE("user", false, BPF_ANY, absent, 0),
	UPDATE("user", false, BPF_NOEXIST, present, -EEXIST),
	UPDATE("user", false, BPF_NOEXIST, absent, 0),
	UPDATE("user", false, BPF_EXIST, present, 0),
	UPDATE("user", false, BPF_EXIST, absent, -ENOENT),
	UPDATE("bpf", true, BPF_ANY, present, 0),
	UPDATE("bpf", true, BPF_ANY, absent, 0),
	UPDATE("bpf", true, BPF_NOEXIST, present, -EEXIST),
	UPDATE("bpf", true, BPF_NOEXIST, absent, 0),
	UPDATE("bpf", true, BPF_EXIST, present, 0),
	UPDATE("bpf", true, BPF_EXIST, absent, -ENOENT),
	{ .name = "flags/user_delete", .semantics = "delete from user space: absent key -ENOENT, present key removed",
	  .run = run_delete, .param = &from_user },
	{ .name = "flags/bpf_delete", .semantics = "bpf_map_delete_elem(): absent key -ENOENT, present key removed",
	  .run = run_delete, .param = &from_bpf },
	{ .name = "flags/user_lookup_and_delete", .semantics = "lookup_and_delete returns the value and removes the key",
	  .run = run_lookup_and_delete },
	{ .name = "flags/user_bad_flags", .semantics = "update flags beyond BPF_EXIST, or BPF_F_LOCK without a lock, are -EINVAL",
	  .run = run_bad_flags },
	{ .name = NULL }
};
