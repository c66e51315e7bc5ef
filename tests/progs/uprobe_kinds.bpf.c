// SPDX-License-Identifier: GPL-2.0
/* uprobe_kinds.bpf.c — uprobes as programs built for x86_64 use them, each
 * attached to the host's libc in every process and fired on UML
 * (kernel-patches 0063-0065: x86's uprobes on the user traps UML relays):
 *  - a uprobe on getpgid(), reading its argument from x86_64's %rdi, and
 *    bpf_get_func_ip() giving the probed function's address;
 *  - a uretprobe on getppid() reading its return value.
 * Both functions start with a mov, which x86's uprobes step out of line
 * with the trap flag (not emulated).  Only the guest's process named by
 * target_comm is counted.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "target_comm.h"

long getpgids = 0;
long getpgid_arg = 0;
__u64 getpgid_func_ip = 0;
long getppid_returns = 0;
long getppid_ret = 0;

SEC("uprobe/libc.so.6:getpgid")
int BPF_UPROBE(on_getpgid, int pid)
{
	if (!is_target())
		return 0;
	getpgids++;
	getpgid_arg = pid;
	getpgid_func_ip = bpf_get_func_ip(ctx);
	return 0;
}

SEC("uretprobe/libc.so.6:getppid")
int BPF_URETPROBE(on_getppid_return, long ret)
{
	if (!is_target())
		return 0;
	getppid_returns++;
	getppid_ret = ret;
	return 0;
}

char _license[] SEC("license") = "GPL";
