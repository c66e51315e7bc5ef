// SPDX-License-Identifier: GPL-2.0
/* notrace_target.bpf.c — fentry on a notrace kernel function.  x86_64's
 * ftrace leaves no NOP there, so the trampoline cannot be patched in and
 * the attach fails with EBUSY; UML gives notrace functions no patchable
 * entry either (kernel-patches 0046, 0049).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

SEC("fentry/bpf_spin_lock")
int BPF_PROG(on_spin_lock, struct bpf_spin_lock *lock)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
