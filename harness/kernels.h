/* SPDX-License-Identifier: GPL-2.0 */
/* kernels.h — which kernel a run boots (--kernel VERSION, BPFUML_KERNEL).
 *
 * The versions are those of kernel-patches/versions.conf, which the default
 * kernel's build copies to build/versions.conf: the first line is the
 * default kernel (build/kernel, build/qemu), each other one is built on
 * request into build/kernels/VERSION (and build/kernels/VERSION-qemu).
 */
#ifndef BPFUML_KERNELS_H
#define BPFUML_KERNELS_H

#include <stdbool.h>

#include "paths.h"

struct common_opts;

#define KERNEL_NAME_MAX 16	/* "7.3", "6.12", "5.10" */

struct kernel_info {
	char version[KERNEL_NAME_MAX];
	bool is_default;
	bool has_jit;		/* its UML runs BPF with the x86_64 JIT too */
};

/* Look VERSION (NULL: the default) up in build/versions.conf.  0, -ENOENT
 * (no such version; KNOWN then lists the versions, space-separated) or
 * another -errno. */
int kernel_lookup(const struct bpfuml_paths *paths, const char *version, struct kernel_info *info,
		  char *known, size_t known_size);

/* Point PATHS at the kernel OPTS asks for, and check that its UML can run
 * BPF as OPTS asks (--jit).  EXIT_OK, or an exit code after fail(). */
int kernel_select(struct bpfuml_paths *paths, const struct common_opts *opts);

#endif
