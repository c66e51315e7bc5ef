// SPDX-License-Identifier: GPL-2.0
/* fprobe_target.bpf.c — a multi-kprobe, which needs fprobe (ftrace's
 * function graph tracer): UML has the function tracer but not that, so it
 * verifies but cannot attach, and bpfuml says so.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

SEC("kprobe.multi/do_nanosleep")
int on_nanosleep_multi(struct pt_regs *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
