// SPDX-License-Identifier: GPL-2.0
/* pt_regs_btf.bpf.c — struct pt_regs as BTF shows it to BPF.  x86_64's is
 * 21 registers, 168 bytes.  UML's C struct is larger (its own register state
 * around the same 21 slots); kernel-patches 0066 describes it to BPF by the
 * x86_64 view alone.
 *  - copy_regs copies sizeof(struct pt_regs) from a kprobe's context into a
 *    global, as the uprobe selftests do: x86_64 accepts it; with UML's
 *    256-byte BTF the copy reached past the context (offset 168).
 *  - task_regs_past_end reads the word after the 21 registers through
 *    bpf_task_pt_regs(): x86_64 rejects the access beyond struct pt_regs;
 *    with UML's BTF it was a register slot of its own.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

struct pt_regs regs;

SEC("kprobe/do_nanosleep")
int copy_regs(struct pt_regs *ctx)
{
	__builtin_memcpy(&regs, ctx, sizeof(regs));
	return 0;
}

SEC("kprobe/do_nanosleep")
int task_regs_past_end(void *ctx)
{
	struct pt_regs *r = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());

	return *(volatile __u64 *)((void *)r + 168) ? 1 : 0;
}

char LICENSE[] SEC("license") = "GPL";
