// SPDX-License-Identifier: GPL-2.0
/* x86_syscall_target.bpf.c — fentry on an x86_64 syscall wrapper, as many
 * selftests do (SYS_PREFIX "__x64_"): the program reads the system call's
 * arguments from the user's registers, as on x86_64.  UML calls its system
 * calls through the same wrappers (kernel-patches 0047).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

/* bpf(BPF_PROG_TEST_RUN, ...) calls seen: the test run after the attach. */
long test_run_calls = 0;

SEC("fentry/__x64_sys_bpf")
int BPF_PROG(on_bpf, struct pt_regs *regs)
{
	if (BPF_CORE_READ(regs, di) == BPF_PROG_TEST_RUN)
		test_run_calls++;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
