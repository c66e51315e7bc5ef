// SPDX-License-Identifier: GPL-2.0
/* cgroup_controllers.bpf.c — programs of container and resource agents
 * attach to the functions of cgroup controllers that distribution x86_64
 * kernels enable (uml-config/30-real-world.config): a write to a cpuset's
 * cpus or mems, and the pids controller's fork check.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

long cpuset_writes = 0;
long pids_forks = 0;

SEC("fentry/cpuset_write_resmask")
int BPF_PROG(on_cpuset_write, struct kernfs_open_file *of, char *buf, size_t nbytes, loff_t off)
{
	cpuset_writes++;
	return 0;
}

SEC("fentry/pids_can_fork")
int BPF_PROG(on_pids_fork, struct task_struct *task, struct css_set *cset)
{
	pids_forks++;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
