// SPDX-License-Identifier: GPL-2.0
/* kernels.c — which kernel a run boots: see kernels.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bpfuml.h"
#include "kernels.h"

/* One line of versions.conf: VERSION PACKAGE PIN SUITE BPF-MODES SERIES. */
static bool parse_line(char *line, struct kernel_info *info)
{
	char *fields[6], *save = NULL, *tok;
	int n = 0;

	line[strcspn(line, "#\n")] = '\0';
	for (tok = strtok_r(line, " \t", &save); tok && n < 6; tok = strtok_r(NULL, " \t", &save))
		fields[n++] = tok;
	if (n < 5 || strlen(fields[0]) >= sizeof(info->version))
		return false;
	snprintf(info->version, sizeof(info->version), "%s", fields[0]);
	info->has_jit = strstr(fields[4], "jit") != NULL;
	return true;
}

int kernel_lookup(const struct bpfuml_paths *paths, const char *version, struct kernel_info *info,
		  char *known, size_t known_size)
{
	char file[PATH_MAX], line[512];
	size_t used = 0;
	bool first = true;
	FILE *f;

	if (snprintf(file, sizeof(file), "%s/versions.conf", paths->build_dir) >= (int)sizeof(file))
		return -ENAMETOOLONG;
	f = fopen(file, "re");
	if (!f)
		return -errno;
	if (known_size)
		known[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		struct kernel_info row = { .is_default = first };

		if (!parse_line(line, &row))
			continue;
		first = false;
		if (!version || !strcmp(version, row.version)) {
			*info = row;
			fclose(f);
			return 0;
		}
		if (used < known_size)
			used += snprintf(known + used, known_size - used, "%s%s", used ? " " : "", row.version);
	}
	fclose(f);
	return -ENOENT;
}

int kernel_select(struct bpfuml_paths *paths, const struct common_opts *opts)
{
	struct kernel_info info;
	char known[128];
	int err;

	err = kernel_lookup(paths, opts->kernel, &info, known, sizeof(known));
	if (err == -ENOENT && opts->kernel)
		return fail(opts, EXIT_USAGE, "usage", "no kernel %s: bpfuml builds %s "
			    "(kernel-patches/versions.conf)", opts->kernel, known);
	if (err && !opts->kernel)
		return EXIT_OK;		/* a build directory of before the kernel matrix */
	if (err)
		return fail(opts, EXIT_INFRA, "infrastructure", "cannot read %s/versions.conf (%s); "
			    "run make or ./run.sh", paths->build_dir, strerror(-err));
	snprintf(paths->kernel_version, sizeof(paths->kernel_version), "%s", info.version);
	if (!info.is_default &&
	    (snprintf(paths->kernel, sizeof(paths->kernel), "%s/kernels/%s/kernel/linux",
		      paths->build_dir, info.version) >= (int)sizeof(paths->kernel) ||
	     snprintf(paths->qemu_kernel, sizeof(paths->qemu_kernel), "%s/kernels/%s-qemu/bzImage",
		      paths->build_dir, info.version) >= (int)sizeof(paths->qemu_kernel)))
		return fail(opts, EXIT_INFRA, "infrastructure", "the build directory's path is too long");
	paths->kernel_is_default = info.is_default;
	paths->kernel_has_jit = info.has_jit;
	/* x86_64 has its JIT in every version; UML only where a series ports it. */
	if (!strcmp(opts->backend, "uml") && !strcmp(bpf_mode_of(opts), "jit") && !info.has_jit)
		return fail(opts, EXIT_USAGE, "usage", "kernel %s runs BPF in UML with the interpreter "
			    "only (its patch series has no JIT: kernel-patches/versions.conf); drop --jit, "
			    "or use --backend qemu for x86_64's JIT", info.version);
	return EXIT_OK;
}
