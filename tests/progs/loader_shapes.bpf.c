// SPDX-License-Identifier: GPL-2.0
/* loader_shapes.bpf.c — map shapes and program types that real loaders set
 * at run time: a stack trace map without a value size (bcc's libbpf-tools
 * size it from --perf-max-stack-depth), a ring buffer that names its event
 * type (cilium/ebpf drops the value size), a section name libbpf knows only
 * by its prefix (ebpf_exporter's "perf_event/type=...,config=..."), and one
 * it cannot know at all (the loader sets the type). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

struct event {
	__u32 pid;
	__u32 stack_id;
};

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(key_size, sizeof(__u32));
	/* value_size and max_entries: set by user space */
} stack_traces SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 16);
	__type(value, struct event);
} events SEC(".maps");

SEC("perf_event/type=0,config=3,frequency=1")
int on_cache_miss(struct bpf_perf_event_data *ctx)
{
	struct event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e)
		return 0;
	e->pid = bpf_get_current_pid_tgid() >> 32;
	e->stack_id = bpf_get_stackid(ctx, &stack_traces, 0);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("program1")
int typed_by_its_loader(void *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
