// SPDX-License-Identifier: GPL-2.0
/* preemptible_rcu_target.bpf.c — fentry on __rcu_read_lock(), which
 * kernels with preemptible RCU have (x86_64's distribution kernels:
 * PREEMPT_DYNAMIC) and bpfuml's UML, not preemptible, has not: there
 * rcu_read_lock() is inline.  The selftest tracing_failure's tracing_deny
 * attaches fentry there.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

long locks;

SEC("fentry/__rcu_read_lock")
int BPF_PROG(on_rcu_read_lock)
{
	locks++;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
