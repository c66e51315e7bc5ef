// SPDX-License-Identifier: GPL-2.0
/* guest.c — the start and report helper shared by the guest programs of
 * tests/ (rhash_smoke, callback_slots, rhash_suite), run by `bpfuml exec`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <bpf/libbpf.h>
#include "guest.h"

static int started;

static int print_warnings(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static int print_nothing(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

void guest_quiet_libbpf(void)
{
	libbpf_set_print(print_nothing);
}

const char *guest_boot(int argc, char **argv, const char *name)
{
	/* Programs and maps are file descriptors; some tests hold hundreds. */
	struct rlimit nofile = { 65536, 65536 };

	if (argc < 2) {
		fprintf(stderr, "usage: bpfuml exec --file OBJECT -- %s OBJECT [ARGS...]\n", name);
		return NULL;
	}
	setrlimit(RLIMIT_NOFILE, &nofile);
	setvbuf(stdout, NULL, _IOLBF, 0);
	libbpf_set_print(print_warnings);
	started = 1;
	return argv[1];
}

void guest_report(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
}

void guest_power_off(void)
{
	fflush(stdout);
	exit(started ? 0 : 2);
}
