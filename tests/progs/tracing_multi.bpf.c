// SPDX-License-Identifier: GPL-2.0
/* tracing_multi.bpf.c — fentry and fexit programs on several kernel
 * functions at once: one BPF trampoline per function, attached through
 * ftrace's direct calls, as on x86_64 (kernel-patches 0069).  A test run
 * calls bpf_fentry_test1..10 (net/bpf/test_run.c); the globals count what
 * the programs saw.  fentry_nanosleep shares do_nanosleep's ftrace site
 * with the function tracer and a kprobe (tests/areas/ftrace.py).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

__u64 multi_entries = 0;
__u64 multi_first_args = 0;
__u64 multi_exits = 0;
__u64 multi_returns = 0;

SEC("fentry.multi/bpf_fentry_test*")
int BPF_PROG(fentry_multi)
{
	__u64 arg = 0;

	multi_entries++;
	bpf_get_func_arg(ctx, 0, &arg);
	/* test1..test3 and test5 take small integers first */
	if (arg < 100)
		multi_first_args += arg;
	return 0;
}

SEC("fexit.multi/bpf_fentry_test*")
int BPF_PROG(fexit_multi)
{
	__u64 ret = 0;

	multi_exits++;
	bpf_get_func_ret(ctx, &ret);
	multi_returns += ret;
	return 0;
}

__u64 nanosleeps = 0;
__u64 nanosleep_mode = 0;
__u64 nanosleep_func_ip = 0;

SEC("fentry/do_nanosleep")
int BPF_PROG(fentry_nanosleep, void *sleeper, int mode)
{
	nanosleeps++;
	nanosleep_mode = mode;
	nanosleep_func_ip = bpf_get_func_ip(ctx);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
