// SPDX-License-Identifier: GPL-2.0
/* tracing_types.bpf.c — one program of each type stock UML lacks (kprobe,
 * tracepoint, raw_tracepoint, perf_event: no BPF_EVENTS; fentry, fexit,
 * fmod_ret, tp_btf, iter, lsm: no BPF_JIT), and tracing helpers in an XDP
 * program.  An x86_64 kernel loads and verifies each; with kernel-patches
 * 0005-0009 UML does too.  Globals record what the runs saw.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

long kprobe_mode = -1;
long raw_tp_arg0 = -1, raw_tp_arg1 = -1;
int fentry_arg = -1, fexit_ret = -1;
__u64 perf_period = 0;
int xdp_printk_ret = -1;
long xdp_probe_read_ret = -1;
int xdp_pid = -1;

SEC("kprobe/do_nanosleep")
int BPF_KPROBE(kprobe_args, void *sleeper, int mode)
{
	kprobe_mode = mode;
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_nanosleep")
int tracepoint_nanosleep(struct trace_event_raw_sys_enter *ctx)
{
	return ctx->id == 35;
}

/* Test-run with a context of two u64 arguments. */
SEC("raw_tp/sys_enter")
int raw_tp_args(struct bpf_raw_tracepoint_args *ctx)
{
	raw_tp_arg0 = ctx->args[0];
	raw_tp_arg1 = ctx->args[1];
	return 0;
}

SEC("raw_tp.w/sys_enter")
int raw_tp_writable(struct bpf_raw_tracepoint_args *ctx)
{
	return 0;
}

SEC("perf_event")
int perf_sample(struct bpf_perf_event_data *ctx)
{
	perf_period = ctx->sample_period;
	return 0;
}

SEC("fentry/bpf_fentry_test1")
int BPF_PROG(fentry_test1, int a)
{
	fentry_arg = a;
	return 0;
}

SEC("fexit/bpf_fentry_test1")
int BPF_PROG(fexit_test1, int a, int ret)
{
	fexit_ret = ret;
	return 0;
}

SEC("fmod_ret/bpf_modify_return_test")
int BPF_PROG(fmod_ret_test, int a, int *b, int ret)
{
	return ret ? ret : 1;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(tp_btf_sys_enter, struct pt_regs *regs, long id)
{
	return 0;
}

SEC("iter/task")
int iter_tasks(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;

	if (task)
		BPF_SEQ_PRINTF(ctx->meta->seq, "%d\n", task->pid);
	return 0;
}

SEC("lsm/file_open")
int BPF_PROG(lsm_file_open, struct file *file)
{
	return 0;
}

/* bpf_printk() is bpf_trace_printk(); it, bpf_get_current_task() and
 * bpf_probe_read_kernel() are built with BPF_EVENTS only. */
SEC("xdp")
int xdp_printk(struct xdp_md *ctx)
{
	struct task_struct *task = (void *)bpf_get_current_task();
	int pid = -1;

	xdp_printk_ret = bpf_printk("xdp_printk on %d", ctx->ingress_ifindex);
	xdp_probe_read_ret = bpf_probe_read_kernel(&pid, sizeof(pid), &task->pid);
	xdp_pid = pid;
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
