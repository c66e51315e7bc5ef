// SPDX-License-Identifier: GPL-2.0
/* callbacks.bpf.c — BPF subprogs passed to the kernel as callbacks, which
 * stock UML rejects with "callbacks are not allowed in non-JITed programs"
 * and an x86_64 kernel runs.  Each program returns 0 when its callbacks ran
 * and computed what they should; the globals show what they saw.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#define __contains(name, node) __attribute__((btf_decl_tag("contains:" #name ":" #node)))
#define private(name) SEC(".data." #name) __hidden __attribute__((aligned(8)))

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, __u64);
} array SEC(".maps");

struct loop_ctx {
	__u64 sum;
	__u32 stop_at;
};

__u64 loop_sum, loop_iters;
__u64 for_each_sum, for_each_elems;
long rbtree_first_key = -1, rbtree_less_calls;

/* A stack frame of its own, so that the trampoline's stack size matters. */
static int loop_cb(__u64 index, struct loop_ctx *ctx)
{
	volatile __u64 scratch[8];

	scratch[index & 7] = index * index;
	ctx->sum += scratch[index & 7];
	return index + 1 == ctx->stop_at;	/* 1 stops the loop */
}

SEC("tc")
int loop(struct __sk_buff *skb)
{
	struct loop_ctx ctx = { .stop_at = 10 };
	/* A flags value the verifier cannot see as constant keeps bpf_loop()
	 * a real helper call instead of inlining it. */
	__u64 flags = skb->len > 100000 ? 1 : 0;
	long n;

	n = bpf_loop(100, loop_cb, &ctx, flags);
	loop_iters = n;
	loop_sum = ctx.sum;
	return n == 10 && ctx.sum == 285 ? 0 : 1;	/* 0^2 + ... + 9^2 */
}

/* Constant flags: the verifier inlines this bpf_loop() into a loop that
 * calls loop_cb() as a BPF subprog; the ld_imm64 of the callback stays. */
SEC("tc")
int loop_inlined(struct __sk_buff *skb)
{
	struct loop_ctx ctx = { .stop_at = 10 };
	long n;

	n = bpf_loop(100, loop_cb, &ctx, 0);
	loop_iters = n;
	loop_sum = ctx.sum;
	return n == 10 && ctx.sum == 285 ? 0 : 1;
}

static __u64 sum_elem(struct bpf_map *map, __u32 *key, __u64 *value, __u64 *sum)
{
	*sum += *value;
	for_each_elems++;
	return 0;
}

SEC("tc")
int for_each(struct __sk_buff *skb)
{
	__u64 sum = 0, value;
	__u32 i, key;

	/* The counter stays in a register, see rhash_smoke.bpf.c. */
	for (i = 0; i < 8; i++) {
		key = i;
		value = i * 10;
		bpf_map_update_elem(&array, &key, &value, BPF_ANY);
	}
	bpf_for_each_map_elem(&array, sum_elem, &sum, 0);
	for_each_sum = sum;
	return sum == 280 && for_each_elems == 8 ? 0 : 1;
}

struct node_data {
	long key;
	struct bpf_rb_node node;
};

private(A) struct bpf_spin_lock glock;
private(A) struct bpf_rb_root groot __contains(node_data, node);

static bool less(struct bpf_rb_node *a, const struct bpf_rb_node *b)
{
	struct node_data *node_a = container_of(a, struct node_data, node);
	struct node_data *node_b = container_of(b, struct node_data, node);

	rbtree_less_calls++;
	return node_a->key < node_b->key;
}

static int add_key(long key)
{
	struct node_data *n = bpf_obj_new(bpf_core_type_id_local(struct node_data));

	if (!n)
		return 1;
	n->key = key;
	bpf_spin_lock(&glock);
	bpf_rbtree_add(&groot, &n->node, less);
	bpf_spin_unlock(&glock);
	return 0;
}

SEC("tc")
int rbtree(struct __sk_buff *skb)
{
	struct bpf_rb_node *first;

	if (add_key(5) || add_key(1) || add_key(3))
		return 2;
	bpf_spin_lock(&glock);
	first = bpf_rbtree_first(&groot);
	if (first)
		rbtree_first_key = container_of(first, struct node_data, node)->key;
	bpf_spin_unlock(&glock);
	return rbtree_first_key == 1 && rbtree_less_calls >= 2 ? 0 : 1;
}

/* An async callback: the timer fires after the program has returned, from
 * the hrtimer interrupt.  tests/smoke/callback_slots.c runs this and waits. */
struct timer_elem {
	struct bpf_timer t;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, struct timer_elem);
} timers SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, __u64);
} timer_fired SEC(".maps");

static int timer_cb(void *map, int *key, struct timer_elem *elem)
{
	int zero = 0;
	__u64 *fired = bpf_map_lookup_elem(&timer_fired, &zero);

	if (fired)
		*fired += 1;
	return 0;
}

long timer_err;

SEC("tc")
int timer(struct __sk_buff *skb)
{
	struct timer_elem *elem;
	int key = 0;

	elem = bpf_map_lookup_elem(&timers, &key);
	if (!elem)
		return 1;
	timer_err = bpf_timer_init(&elem->t, &timers, 1 /* CLOCK_MONOTONIC */);
	if (timer_err)
		return 2;
	timer_err = bpf_timer_set_callback(&elem->t, timer_cb);
	if (timer_err)
		return 3;
	timer_err = bpf_timer_start(&elem->t, 1000 /* ns */, 0);
	if (timer_err)
		return 4;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
