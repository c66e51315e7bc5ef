// SPDX-License-Identifier: GPL-2.0
/* paths.c — locate the build directory from the running binary. */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "paths.h"

int paths_init(struct bpfuml_paths *paths)
{
	const char *env = getenv("BPFUML_BUILD_DIR");
	char exe[PATH_MAX];
	ssize_t n;

	if (env && *env) {
		if (!realpath(env, paths->build_dir))
			return -errno;
	} else {
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n < 0)
			return -errno;
		exe[n] = '\0';
		/* build/bin/bpfuml: two levels up is build/ */
		snprintf(paths->build_dir, sizeof(paths->build_dir), "%s", dirname(dirname(exe)));
	}
	paths->kernel_version[0] = '\0';
	paths->kernel_is_default = true;
	paths->kernel_has_jit = true;
	if (snprintf(paths->kernel, sizeof(paths->kernel), "%s/kernel/linux",
		     paths->build_dir) >= (int)sizeof(paths->kernel) ||
	    snprintf(paths->qemu_kernel, sizeof(paths->qemu_kernel), "%s/qemu/bzImage",
		     paths->build_dir) >= (int)sizeof(paths->qemu_kernel) ||
	    snprintf(paths->agent, sizeof(paths->agent), "%s/bin/bpfuml-agent",
		     paths->build_dir) >= (int)sizeof(paths->agent) ||
	    snprintf(paths->include_dir, sizeof(paths->include_dir), "%s/include",
		     paths->build_dir) >= (int)sizeof(paths->include_dir))
		return -ENAMETOOLONG;
	return 0;
}
