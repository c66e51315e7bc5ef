// SPDX-License-Identifier: GPL-2.0
/* missing_kfunc.bpf.c — calls a kfunc no kernel has (as an object built for
 * a module that is not loaded does): libbpf refuses it before the verifier
 * sees it, and says which extern. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

extern void bpfuml_no_such_kfunc(void) __ksym;

SEC("tc")
int calls_missing_kfunc(struct __sk_buff *skb)
{
	bpfuml_no_such_kfunc();
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
