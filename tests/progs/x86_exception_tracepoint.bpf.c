// SPDX-License-Identifier: GPL-2.0
/* x86_exception_tracepoint.bpf.c — tp_btf on x86's page fault tracepoint,
 * as falco's modern probe does: x86_64 loads it; UML has no such
 * tracepoint, and verify says so (a UML note, not the program's fault). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

long faults;

SEC("tp_btf/page_fault_user")
int BPF_PROG(on_user_fault, unsigned long address, struct pt_regs *regs, unsigned long error_code)
{
	faults++;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
