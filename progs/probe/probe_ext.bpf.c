// SPDX-License-Identifier: GPL-2.0
/* probe_ext.bpf.c — the ext (freplace) row of `bpfuml probe`: type_ext
 * replaces the global function ext_target of helper_ext_host, which the
 * agent loads first (an ext program is verified against a loaded target).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

/* Volatile, so that clang cannot fold ext_target() into its caller and
 * drop the call (the target must stay a subprogram of helper_ext_host). */
volatile int ext_bias;

__noinline int ext_target(int x)
{
	return x + ext_bias;
}

SEC("xdp")
int helper_ext_host(void *ctx)
{
	return ext_target(2);	/* XDP_PASS, or what the replacement says */
}

SEC("freplace/ext_target")
int type_ext(int x)
{
	return 1;
}
