// SPDX-License-Identifier: GPL-2.0
/* perf_event_ctx.bpf.c — a perf_event program's context as x86_64 lays it
 * out: 168 bytes of registers, then sample_period (offset 168) and addr
 * (176).  UML's bpf_user_pt_regs_t is its whole struct pt_regs, so without
 * kernel-patches 0026 sample_period is at offset 256 in UML's vmlinux.h,
 * offset 168 is a register slot (only 8-byte loads allowed) and offset 184
 * is still inside the context.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

SEC("perf_event")
int sample_period_narrow(struct bpf_perf_event_data *ctx)
{
	/* x86_64 allows narrow loads of sample_period (test_verifier 490-492) */
	__u8 b = *(volatile __u8 *)&ctx->sample_period;
	__u16 h = *(volatile __u16 *)&ctx->sample_period;
	__u32 w = *(volatile __u32 *)&ctx->sample_period;

	return (b + h + w + ctx->addr) ? 1 : 0;
}

SEC("perf_event")
int past_context(struct bpf_perf_event_data *ctx)
{
	/* one word past addr: x86_64 says "invalid bpf_context access off=184" */
	return *(volatile __u64 *)((void *)ctx + 184) ? 1 : 0;
}

char LICENSE[] SEC("license") = "GPL";
