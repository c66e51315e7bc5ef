// SPDX-License-Identifier: GPL-2.0
/* many_rejected.bpf.c — 40 programs the verifier rejects, each then loaded
 * alone with its own 16 MiB log buffer: the agent must not keep 40 such
 * buffers' worth of memory (it once filled the 512 MiB guest and panicked
 * it with "System is deadlocked on memory"). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

/* Reads the packet without a bounds check: rejected. */
#define REJECTED(n)							\
SEC("xdp") int rejected_##n(struct xdp_md *ctx)				\
{									\
	return *(unsigned char *)(long)ctx->data;			\
}

#define TEN(n) REJECTED(n##0) REJECTED(n##1) REJECTED(n##2) REJECTED(n##3) REJECTED(n##4) \
	       REJECTED(n##5) REJECTED(n##6) REJECTED(n##7) REJECTED(n##8) REJECTED(n##9)

TEN(1) TEN(2) TEN(3) TEN(4)
