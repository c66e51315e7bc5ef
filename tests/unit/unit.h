/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * unit.h — the unit tests' tiny harness (one per test binary: static state).
 * A test is begin(); CHECK(cond, fmt, ...)...; end(name): the first failed
 * CHECK is its reason.  Fixtures are read from the directory given on the
 * command line (fixture_dir).
 */
#ifndef BPFUML_UNIT_H
#define BPFUML_UNIT_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int n_pass, n_fail;
static char fixture_dir[PATH_MAX];

static char fail_msg[8192];
static bool failed;

#define CHECK(cond, ...)                                            \
	do {                                                        \
		if (!failed && !(cond)) {                           \
			failed = true;                              \
			snprintf(fail_msg, sizeof(fail_msg), __VA_ARGS__); \
		}                                                   \
	} while (0)

static void begin(void)
{
	failed = false;
	fail_msg[0] = '\0';
}

static void end(const char *name)
{
	if (failed) {
		printf("FAIL %s: %s\n", name, fail_msg);
		n_fail++;
	} else {
		printf("ok %s\n", name);
		n_pass++;
	}
}

static inline bool streq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

#define S(x) ((x) ? (x) : "(null)")

struct buf {
	char *s;
	size_t n;
};

/* fixture_dir/NAME into B (NUL-terminated); false if it cannot be read. */
static inline bool read_file(const char *name, struct buf *b)
{
	char path[PATH_MAX + 256];
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/%s", fixture_dir, name);
	f = fopen(path, "rb");
	if (!f)
		return false;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	b->s = malloc(n + 1);
	if (!b->s || fread(b->s, 1, n, f) != (size_t)n) {
		fclose(f);
		free(b->s);
		return false;
	}
	fclose(f);
	b->s[n] = '\0';
	b->n = n;
	return true;
}

/* The summary line run_tests.py reads; 1 on any failure. */
static inline int unit_summary(void)
{
	printf("%d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}

#endif
