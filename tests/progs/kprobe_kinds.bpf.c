// SPDX-License-Identifier: GPL-2.0
/* kprobe_kinds.bpf.c — kprobes as programs built for x86_64 use them, each
 * attached and fired on UML (kernel-patches 0055-0057: x86's kprobes):
 *  - a kprobe on a kernel function, reading its arguments from x86_64's
 *    registers, and bpf_get_func_ip() giving the function's address;
 *  - a kretprobe reading the return value;
 *  - bpf_override_return() on x86_64's system call wrapper, which makes
 *    getpgid() fail with an errno of the program's choosing.
 * Only the guest's process named by target_comm is counted or failed.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "target_comm.h"

long nanosleeps = 0;
long nanosleep_mode = 0;
__u64 nanosleep_func_ip = 0;
long getppid_returns = 0;
long getppid_ret = 0;
long overridden = 0;

/* do_nanosleep(struct hrtimer_sleeper *t, enum hrtimer_mode mode) */
SEC("kprobe/do_nanosleep")
int BPF_KPROBE(on_nanosleep, void *sleeper, int mode)
{
	if (!is_target())
		return 0;
	nanosleeps++;
	nanosleep_mode = mode;
	nanosleep_func_ip = bpf_get_func_ip(ctx);
	return 0;
}

SEC("kretprobe/__x64_sys_getppid")
int BPF_KRETPROBE(on_getppid_return, long ret)
{
	if (!is_target())
		return 0;
	getppid_returns++;
	getppid_ret = ret;
	return 0;
}

SEC("kprobe/__x64_sys_getpgid")
int override_getpgid(struct pt_regs *ctx)
{
	if (!is_target())
		return 0;
	overridden++;
	bpf_override_return(ctx, -1234);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
