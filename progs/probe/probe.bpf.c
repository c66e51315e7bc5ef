// SPDX-License-Identifier: GPL-2.0
/* probe.bpf.c — what `bpfuml probe` asks a kernel: one small program per
 * program type (type_*) and per verifier feature (feature_*).
 *
 * The guest agent loads each program on its own (helper_* programs always
 * come along: tail-call targets), then runs it with BPF_PROG_TEST_RUN and
 * attaches it where a type has a way to attach (harness/agent/agent_probe.c).
 * Type programs only need to exist; feature programs return 1 when the
 * feature did what it should, so a run that "works" but computes the wrong
 * thing shows as such.  Programs take `void *ctx` so that they compile
 * against any kernel's vmlinux.h.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "GPL";

/* ---- program types --------------------------------------------------------
 * Return values are ones each type's verifier check accepts. */

SEC("socket") int type_socket_filter(void *ctx) { return 0; }
SEC("kprobe/do_nanosleep") int type_kprobe(void *ctx) { return 0; }
SEC("tcx/ingress") int type_sched_cls(void *ctx) { return 0; }
SEC("action") int type_sched_act(void *ctx) { return 0; }
SEC("tracepoint/sched/sched_switch") int type_tracepoint(void *ctx) { return 0; }
SEC("xdp") int type_xdp(void *ctx) { return 2; /* XDP_PASS */ }
SEC("perf_event") int type_perf_event(void *ctx) { return 0; }
SEC("cgroup_skb/ingress") int type_cgroup_skb(void *ctx) { return 1; }
SEC("cgroup/sock_create") int type_cgroup_sock(void *ctx) { return 1; }
SEC("lwt_in") int type_lwt_in(void *ctx) { return 0; }
SEC("sockops") int type_sock_ops(void *ctx) { return 1; }
SEC("sk_skb/stream_verdict") int type_sk_skb(void *ctx) { return 1; }
SEC("cgroup/dev") int type_cgroup_device(void *ctx) { return 1; }
SEC("sk_msg") int type_sk_msg(void *ctx) { return 1; }
SEC("raw_tp/sched_switch") int type_raw_tracepoint(void *ctx) { return 0; }
SEC("cgroup/connect4") int type_cgroup_sock_addr(void *ctx) { return 1; }
SEC("sk_reuseport") int type_sk_reuseport(void *ctx) { return 1; }
SEC("flow_dissector") int type_flow_dissector(void *ctx) { return 0; }
SEC("cgroup/sysctl") int type_cgroup_sysctl(void *ctx) { return 1; }
SEC("cgroup/getsockopt") int type_cgroup_sockopt(void *ctx) { return 1; }
SEC("fentry/bpf_fentry_test1") int type_tracing_fentry(void *ctx) { return 0; }
SEC("fexit/bpf_fentry_test1") int type_tracing_fexit(void *ctx) { return 0; }
SEC("fmod_ret/bpf_modify_return_test") int type_tracing_fmod_ret(void *ctx) { return 0; }
SEC("tp_btf/sched_switch") int type_tracing_tp_btf(void *ctx) { return 0; }
SEC("iter/bpf_map") int type_tracing_iter(void *ctx) { return 0; }
SEC("lsm/file_open") int type_lsm(void *ctx) { return 0; }
SEC("sk_lookup") int type_sk_lookup(void *ctx) { return 1; /* SK_PASS */ }
SEC("syscall") int type_syscall(void *ctx) { return 0; }
SEC("netfilter") int type_netfilter(void *ctx) { return 1; /* NF_ACCEPT */ }

/* ---- verifier features ---------------------------------------------------- */

SEC("xdp") int helper_tail_target(void *ctx) { return 1; }

/* libbpf puts helper_tail_target into slot 0 at load time. */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, int (void *));
} tail_calls SEC(".maps") = {
	.values = { [0] = (void *)&helper_tail_target },
};

SEC("xdp") int feature_tail_call(void *ctx)
{
	bpf_tail_call(ctx, &tail_calls, 0);
	return 0;	/* only reached if the tail call did not happen */
}

/* Volatile, so that clang cannot fold the subprogram's return value into
 * its caller (which would hide what the tail call returned). */
volatile int no_tail_call_result;

static __noinline int tail_call_from_subprog(void *ctx)
{
	bpf_tail_call(ctx, &tail_calls, 0);
	return no_tail_call_result;
}

SEC("xdp") int feature_tail_call_in_subprog(void *ctx)
{
	return tail_call_from_subprog(ctx);
}

static __noinline int add_one(int x) { return x + 1; }

SEC("syscall") int feature_bpf_to_bpf_call(void *ctx) { return add_one(0); }

__noinline int global_add_one(int x) { return x + 1; }

SEC("syscall") int feature_global_function(void *ctx) { return global_add_one(0); }

extern void bpf_rcu_read_lock(void) __ksym;
extern void bpf_rcu_read_unlock(void) __ksym;

SEC("syscall") int feature_kfunc_call(void *ctx)
{
	bpf_rcu_read_lock();
	bpf_rcu_read_unlock();
	return 1;
}

static long count_to_ten(__u64 index, __u64 *sum)
{
	*sum += 1;
	return 0;
}

SEC("syscall") int feature_callback_bpf_loop(void *ctx)
{
	__u64 sum = 0;

	bpf_loop(10, count_to_ten, &sum, 0);
	return sum == 10;
}

struct bpf_iter_num;
extern int bpf_iter_num_new(struct bpf_iter_num *it, int start, int end) __ksym;
extern int *bpf_iter_num_next(struct bpf_iter_num *it) __ksym;
extern void bpf_iter_num_destroy(struct bpf_iter_num *it) __ksym;

SEC("syscall") int feature_open_coded_iterator(void *ctx)
{
	struct bpf_iter_num it;
	int *v, sum = 0;

	bpf_iter_num_new(&it, 0, 5);
	while ((v = bpf_iter_num_next(&it)))
		sum += *v;
	bpf_iter_num_destroy(&it);
	return sum == 10;
}

struct locked_value {
	struct bpf_spin_lock lock;
	__u64 count;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct locked_value);
} locked SEC(".maps");

SEC("syscall") int feature_spin_lock(void *ctx)
{
	struct locked_value *v;
	__u32 zero = 0;

	v = bpf_map_lookup_elem(&locked, &zero);
	if (!v)
		return 0;
	bpf_spin_lock(&v->lock);
	v->count++;
	bpf_spin_unlock(&v->lock);
	return 1;
}

struct timer_value {
	struct bpf_timer timer;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct timer_value);
} timers SEC(".maps");

SEC("syscall") int feature_timer(void *ctx)
{
	struct timer_value *v;
	__u32 zero = 0;

	v = bpf_map_lookup_elem(&timers, &zero);
	if (!v)
		return 0;
	return bpf_timer_init(&v->timer, &timers, 1 /* CLOCK_MONOTONIC */) == 0;
}

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} ring SEC(".maps");

SEC("syscall") int feature_ringbuf(void *ctx)
{
	__u64 *slot = bpf_ringbuf_reserve(&ring, sizeof(*slot), 0);

	if (!slot)
		return 0;
	*slot = 42;
	bpf_ringbuf_submit(slot, 0);
	return 1;
}

char dynptr_data[8] = "dynptr";

SEC("syscall") int feature_dynptr(void *ctx)
{
	char out[8] = {};
	struct bpf_dynptr ptr;

	if (bpf_dynptr_from_mem(dynptr_data, sizeof(dynptr_data), 0, &ptr))
		return 0;
	if (bpf_dynptr_read(out, sizeof(out), &ptr, 0, 0))
		return 0;
	return out[0] == 'd';
}

struct node_data {
	long key;
};

extern void *bpf_obj_new_impl(__u64 local_type_id, void *meta) __ksym;
extern void bpf_obj_drop_impl(void *kptr, void *meta) __ksym;

SEC("syscall") int feature_allocated_object(void *ctx)
{
	struct node_data *n = bpf_obj_new_impl(bpf_core_type_id_local(struct node_data), NULL);

	if (!n)
		return 0;
	n->key = 1;
	bpf_obj_drop_impl(n, NULL);
	return 1;
}

SEC("syscall") int feature_bpf_printk(void *ctx)
{
	bpf_printk("bpfuml probe");
	return 1;
}

SEC("syscall") int feature_probe_read_kernel(void *ctx)
{
	__u64 src = 7, dst = 0;

	bpf_probe_read_kernel(&dst, sizeof(dst), &src);
	return dst == 7;
}

SEC("syscall") int feature_get_current_task(void *ctx)
{
	return bpf_get_current_task() != 0;
}

SEC("syscall") int feature_atomics(void *ctx)
{
	__u64 v = 1;

	__sync_fetch_and_add(&v, 2);
	return __sync_val_compare_and_swap(&v, 3, 4) == 3 && v == 4;
}

#define __arena __attribute__((address_space(1)))

struct {
	__uint(type, BPF_MAP_TYPE_ARENA);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);	/* pages */
} arena SEC(".maps");

extern void __arena *bpf_arena_alloc_pages(void *map, void __arena *addr, __u32 page_cnt,
					   int node_id, __u64 flags) __ksym;

SEC("syscall") int feature_arena(void *ctx)
{
	int __arena *page = bpf_arena_alloc_pages(&arena, NULL, 1, -1 /* NUMA_NO_NODE */, 0);

	if (!page)
		return 0;
	*page = 1;
	return *page;
}

extern void bpf_throw(__u64 cookie) __ksym;

/* With no exception callback, the cookie of bpf_throw() is the return value. */
SEC("syscall") int feature_exceptions(void *ctx)
{
	bpf_throw(1);
	return 0;
}

struct {
	__uint(type, BPF_MAP_TYPE_RHASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} resizable SEC(".maps");

SEC("syscall") int feature_rhash_map(void *ctx)
{
	__u32 key = 1;
	__u64 value = 2, *found;

	if (bpf_map_update_elem(&resizable, &key, &value, BPF_NOEXIST))
		return 0;
	found = bpf_map_lookup_elem(&resizable, &key);
	return found && *found == 2;
}
