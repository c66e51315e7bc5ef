// SPDX-License-Identifier: GPL-2.0
/* kfunc_calls.bpf.c — kfunc calls, which stock UML rejects with "JIT is
 * required for calling kernel function" before verifying anything, and
 * which an x86_64 kernel verifies and runs.  Each kfunc family leaves its
 * result in a global; the program returns 0 when every call worked.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

struct pair {
	long key;
	long data;
};

int iter_sum = -1;		/* bpf_for(): bpf_iter_num_{new,next,destroy} */
long obj_sum = -1;		/* bpf_obj_new() / bpf_obj_drop() */
int slice_byte = -1;		/* bpf_dynptr_from_skb() / bpf_dynptr_slice() */

SEC("tc")
int kfunc_calls(struct __sk_buff *skb)
{
	struct bpf_dynptr ptr;
	struct pair *p;
	__u8 buf[1], *b;
	int i, sum = 0;

	bpf_for(i, 0, 100)
		sum += i;
	iter_sum = sum;

	p = bpf_obj_new(bpf_core_type_id_local(struct pair));
	if (!p)
		return 2;
	p->key = 42;
	p->data = 7;
	obj_sum = p->key + p->data;
	bpf_obj_drop(p);

	if (bpf_dynptr_from_skb(skb, 0, &ptr))
		return 3;
	b = bpf_dynptr_slice(&ptr, 0, buf, sizeof(buf));
	if (!b)
		return 4;
	slice_byte = *b;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
