// SPDX-License-Identifier: GPL-2.0
/* suite.c — the RHASH suite's main (PID 1 in UML) and the helpers its
 * checks share.  usage (kernel command line):
 *   init=rhash_suite -- rhash_suite.bpf.o RESULT_DIR [only=SUBSTRING]
 * only= runs the checks whose names contain SUBSTRING.  (UML appends its own
 * console=tty0 to init's arguments, hence a named argument.)
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "guest.h"
#include "suite.h"

const char *suite_object_path;

static enum check_status set_detail(struct check *c, enum check_status st,
				    const char *fmt, va_list ap)
{
	vsnprintf(c->detail, sizeof(c->detail), fmt, ap);
	return st;
}

#define DEFINE_RESULT(fn, status)						\
enum check_status fn(struct check *c, const char *fmt, ...)			\
{										\
	enum check_status st;							\
	va_list ap;								\
										\
	va_start(ap, fmt);							\
	st = set_detail(c, status, fmt, ap);					\
	va_end(ap);								\
	return st;								\
}
DEFINE_RESULT(check_pass, CHECK_PASS)
DEFINE_RESULT(check_fail, CHECK_FAIL)
DEFINE_RESULT(check_skip, CHECK_SKIP)
DEFINE_RESULT(check_xfail, CHECK_XFAIL)

struct bpf_object *suite_open(const char *const *progs, char *why, size_t why_len)
{
	struct bpf_program *p;
	struct bpf_object *obj;
	int err, i;

	obj = bpf_object__open_file(suite_object_path, NULL);
	if (!obj) {
		snprintf(why, why_len, "open %s: %s", suite_object_path, strerror(errno));
		return NULL;
	}
	bpf_object__for_each_program(p, obj) {
		bool wanted = false;

		for (i = 0; progs && progs[i]; i++)
			wanted |= !strcmp(bpf_program__name(p), progs[i]);
		bpf_program__set_autoload(p, wanted);
	}
	err = bpf_object__load(obj);
	if (err) {
		snprintf(why, why_len, "load %s: %s", suite_object_path, strerror(-err));
		bpf_object__close(obj);
		errno = -err;
		return NULL;
	}
	return obj;
}

int suite_map_fd(struct bpf_object *obj, const char *name)
{
	struct bpf_map *map = bpf_object__find_map_by_name(obj, name);

	return map ? bpf_map__fd(map) : -ENOENT;
}

int suite_prog_fd(struct bpf_object *obj, const char *name)
{
	struct bpf_program *prog = bpf_object__find_program_by_name(obj, name);

	return prog ? bpf_program__fd(prog) : -ENOENT;
}

int rhash_create(__u32 max_entries, __u64 map_extra)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_NO_PREALLOC,
		    .map_extra = map_extra);
	int fd = bpf_map_create(BPF_MAP_TYPE_RHASH, "suite_rhash", sizeof(__u32),
				sizeof(__u64), max_entries, &opts);

	return fd < 0 ? -errno : fd;
}

long long map_memlock(int map_fd)
{
	char path[64], line[128];
	long long memlock = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", map_fd);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %lld", &memlock) == 1)
			break;
	fclose(f);
	return memlock;
}

long map_count_keys(int map_fd)
{
	__u32 key, next;
	long n = 0;
	void *prev = NULL;

	while (!bpf_map_get_next_key(map_fd, prev, &next)) {
		key = next;
		prev = &key;
		n++;
	}
	return errno == ENOENT ? n : -errno;
}

static struct check *areas[] = {
	flags_checks, limits_checks, growth_checks, iteration_checks,
	values_checks, concurrency_checks,
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void run_all(const char *only)
{
	static const char *const words[] = { "PASS", "FAIL", "SKIP", "XFAIL" };
	struct check *c;
	unsigned int a;
	double start;

	/* The plan first: a check missing from the results has crashed. */
	for (a = 0; a < sizeof(areas) / sizeof(areas[0]); a++)
		for (c = areas[a]; c->name; c++)
			if (!only || strstr(c->name, only))
				guest_report("PLAN %s\n", c->name);
	for (a = 0; a < sizeof(areas) / sizeof(areas[0]); a++)
		for (c = areas[a]; c->name; c++) {
			enum check_status st;

			if (only && !strstr(c->name, only))
				continue;
			c->detail[0] = 0;
			start = now_ms();
			st = c->run(c);
			guest_report("%s %s: %s -- %s (%.0f ms)\n", words[st], c->name,
				     c->semantics, c->detail, now_ms() - start);
		}
}

int main(int argc, char **argv)
{
	const char *only = NULL;
	int i;

	for (i = 2; i < argc; i++)
		if (!strncmp(argv[i], "only=", 5) && argv[i][5])
			only = argv[i] + 5;
	suite_object_path = guest_boot(argc, argv, "rhash_suite");
	if (suite_object_path) {
		/* Many checks provoke errors on purpose: keep the console for
		 * the kernel's own messages, which the host scans. */
		guest_quiet_libbpf();
		run_all(only);
	}
	guest_power_off();
}
