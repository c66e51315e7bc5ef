// SPDX-License-Identifier: GPL-2.0
/* rhash_suite.bpf.c — the BPF side of the RHASH suite (tests/rhash/): a
 * syscall program that performs one map operation on request (the update-flag
 * matrix from BPF), a bpf_spin_lock writer, timers armed inside RHASH values
 * (one of them rewrites its element from softirq context), and a map-element
 * iterator.  The guest loads only the programs a
 * check needs, so one program the kernel cannot load hides no other.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#define ENOENT 2

/* ---- the update-flag matrix, from BPF ---------------------------------- */

struct {
	__uint(type, BPF_MAP_TYPE_RHASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, __u64);
} ops_map SEC(".maps");

enum map_op { OP_UPDATE, OP_DELETE, OP_LOOKUP };

struct map_op_args {
	__u32 op;
	__u32 key;
	__u64 value;	/* in for OP_UPDATE, out for OP_LOOKUP */
	__u64 flags;
	__s64 ret;	/* the helper's return: 0 or -errno */
};

SEC("syscall")
int map_op(struct map_op_args *args)
{
	__u32 key = args->key;
	__u64 value = args->value, *found;

	switch (args->op) {
	case OP_UPDATE:
		args->ret = bpf_map_update_elem(&ops_map, &key, &value, args->flags);
		break;
	case OP_DELETE:
		args->ret = bpf_map_delete_elem(&ops_map, &key);
		break;
	case OP_LOOKUP:
		found = bpf_map_lookup_elem(&ops_map, &key);
		args->ret = found ? 0 : -ENOENT;
		if (found)
			args->value = *found;
		break;
	}
	return 0;
}

/* ---- values written together under a bpf_spin_lock ---------------------- */

#define LOCKED_WORDS 30	/* 240 bytes: a copy long enough to be interrupted */

struct locked_value {
	struct bpf_spin_lock lock;
	__u32 pad;
	__u64 words[LOCKED_WORDS];	/* all equal, always, to a reader holding the lock */
};

struct {
	__uint(type, BPF_MAP_TYPE_RHASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, struct locked_value);
} locked_map SEC(".maps");

struct locked_write_args {
	__u32 key;
	__u32 rounds;
	__u64 stamp;	/* written into every word, + the round */
	__s64 ret;
};

SEC("syscall")
int locked_write(struct locked_write_args *args)
{
	struct locked_value *v;
	__u32 key = args->key, r;
	int i;

	v = bpf_map_lookup_elem(&locked_map, &key);
	if (!v) {
		args->ret = -ENOENT;
		return 0;
	}
	for (r = 0; r < 64 && r < args->rounds; r++) {
		bpf_spin_lock(&v->lock);
#pragma clang loop unroll(full)
		for (i = 0; i < LOCKED_WORDS; i++)
			v->words[i] = args->stamp + r;
		bpf_spin_unlock(&v->lock);
	}
	args->ret = 0;
	return 0;
}

/* ---- a bpf_timer inside an RHASH value ---------------------------------- */

struct timer_value {
	struct bpf_timer timer;
	__u64 fired;	/* the callback's own count, in the element */
};

struct {
	__uint(type, BPF_MAP_TYPE_RHASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, struct timer_value);
} timer_map SEC(".maps");

/* In a section of its own: the guest reads and writes it as one struct. */
struct timer_ctl {
	__u64 callbacks;	/* all callbacks, also of elements since deleted */
	__u64 delay_ns;		/* in: bpf_timer_start()'s delay */
	__s64 err;		/* the failing helper's return */
	__u32 key;		/* in: which element arm_timer arms */
	__u32 err_step;		/* 1 lookup, 2 init, 3 set_callback, 4 start */
} timer_ctl SEC(".data.timer");

static int timer_cb(void *map, __u32 *key, struct timer_value *value)
{
	__sync_fetch_and_add(&timer_ctl.callbacks, 1);
	value->fired++;
	return 0;
}

/* tc, not syscall: the timer helpers are offered to tc programs on UML the
 * same way tests/progs/callbacks.bpf.c uses them. */
SEC("tc")
int arm_timer(struct __sk_buff *skb)
{
	struct timer_value *v;
	__u32 key = timer_ctl.key;
	long err;

	v = bpf_map_lookup_elem(&timer_map, &key);
	if (!v) {
		timer_ctl.err_step = 1;
		return 1;
	}
	err = bpf_timer_init(&v->timer, &timer_map, 1 /* CLOCK_MONOTONIC */);
	if (err) {
		timer_ctl.err_step = 2;
		goto out;
	}
	err = bpf_timer_set_callback(&v->timer, timer_cb);
	if (err) {
		timer_ctl.err_step = 3;
		goto out;
	}
	err = bpf_timer_start(&v->timer, timer_ctl.delay_ns, 0);
	if (err)
		timer_ctl.err_step = 4;
out:
	timer_ctl.err = err;
	return err ? 1 : 0;
}

/* ---- a writer in interrupt context: a timer that re-arms itself ---------
 * On one CPU a syscall's copy of a value can only be cut in two by an
 * interrupt.  This timer's callback (softirq) rewrites every word of its
 * element every period, under the element's bpf_spin_lock or not. */

#define TEAR_WORDS 256	/* 2 KiB: a copy long enough to be interrupted */

struct tear_value {
	struct bpf_spin_lock lock;
	__u32 pad;
	struct bpf_timer timer;
	__u64 words[TEAR_WORDS];
};

struct {
	__uint(type, BPF_MAP_TYPE_RHASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct tear_value);
} tear_map SEC(".maps");

struct tear_ctl {
	__u64 callbacks;
	__u64 period_ns;	/* in */
	__s64 err;
	__u32 use_lock;		/* in: write under the element's lock */
	__u32 stop;		/* in: do not re-arm */
} tear_ctl SEC(".data.tear");

static int tear_cb(void *map, __u32 *key, struct tear_value *v)
{
	__u64 stamp = __sync_fetch_and_add(&tear_ctl.callbacks, 1) + 1;
	int i;

	if (tear_ctl.use_lock) {
		bpf_spin_lock(&v->lock);
		for (i = 0; i < TEAR_WORDS; i++)
			v->words[i] = stamp;
		bpf_spin_unlock(&v->lock);
	} else {
		for (i = 0; i < TEAR_WORDS; i++)
			v->words[i] = stamp;
	}
	if (!tear_ctl.stop)
		bpf_timer_start(&v->timer, tear_ctl.period_ns, 0);
	return 0;
}

SEC("tc")
int arm_tear_timer(struct __sk_buff *skb)
{
	struct tear_value *v;
	__u32 key = 0;
	long err;

	v = bpf_map_lookup_elem(&tear_map, &key);
	if (!v)
		return 1;
	err = bpf_timer_init(&v->timer, &tear_map, 1 /* CLOCK_MONOTONIC */);
	if (!err)
		err = bpf_timer_set_callback(&v->timer, tear_cb);
	if (!err)
		err = bpf_timer_start(&v->timer, tear_ctl.period_ns, 0);
	tear_ctl.err = err;
	return err ? 1 : 0;
}

/* ---- the map-element iterator -------------------------------------------- */

/* In a section of its own: the guest reads it as one struct. */
struct iter_totals {
	__u64 key_sum, value_sum, elems;
} iter_totals SEC(".data.iter");

SEC("iter/bpf_map_elem")
int dump_rhash(struct bpf_iter__bpf_map_elem *ctx)
{
	__u32 *key = ctx->key;
	__u64 *value = ctx->value;

	if (!key || !value)
		return 0;
	iter_totals.key_sum += *key;
	iter_totals.value_sum += *value;
	iter_totals.elems++;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
