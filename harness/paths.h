/* SPDX-License-Identifier: GPL-2.0 */
/* paths.h — where bpfuml finds its kernel, guest agent and headers: beside
 * its own binary (build/bin/bpfuml -> build/), or under $BPFUML_BUILD_DIR.
 */
#ifndef BPFUML_PATHS_H
#define BPFUML_PATHS_H

#include <limits.h>
#include <stdbool.h>

struct bpfuml_paths {
	char build_dir[PATH_MAX];
	char kernel[PATH_MAX];		/* build/kernel/linux */
	char qemu_kernel[PATH_MAX];	/* build/qemu/bzImage (make qemu-kernel) */
	/* Which kernel those are (kernels.c): "7.3"; "" until known. */
	char kernel_version[16];
	bool kernel_is_default;		/* the default kernel's build/kernel */
	/* Its UML series has the x86_64 JIT and what came with it: trampolines
	 * on kernel functions, kprobes, uprobes, ftrace (kernel-patches
	 * 0040-0071, issue 14). */
	bool kernel_has_jit;
	char agent[PATH_MAX];		/* build/bin/bpfuml-agent */
	char include_dir[PATH_MAX];	/* build/include: vmlinux.h, bpf/ */
};

int paths_init(struct bpfuml_paths *paths);

#endif
