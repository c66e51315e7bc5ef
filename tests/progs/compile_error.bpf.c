// SPDX-License-Identifier: GPL-2.0
/* compile_error.bpf.c — does not compile: bpfuml must show clang's message
 * and exit 4 without booting a guest. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

SEC("xdp")
int broken(struct xdp_md *ctx)
{
	return undeclared_variable;
}
