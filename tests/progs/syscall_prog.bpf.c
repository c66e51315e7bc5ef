// SPDX-License-Identifier: GPL-2.0
/* syscall_prog.bpf.c — a syscall program for `run`: the kernel runs these
 * exactly once per BPF_PROG_TEST_RUN and refuses a repeat count. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

int runs;

SEC("syscall")
int count_runs(void *ctx)
{
	runs++;
	return 7;
}
