// SPDX-License-Identifier: GPL-2.0
/* x86_syscall_target.bpf.c — fentry on an x86_64 syscall wrapper, as many
 * selftests do (SYS_PREFIX "__x64_").  UML has no syscall wrappers: libbpf
 * finds no such function (ESRCH), and bpfuml must say that x86_64 would
 * load the program.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

SEC("fentry/__x64_sys_getpgid")
int on_getpgid(void *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
