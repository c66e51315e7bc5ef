/* SPDX-License-Identifier: GPL-2.0 */
/* suite.h — the RHASH suite (issue #6): checks of BPF_MAP_TYPE_RHASH's
 * semantics as kernel/bpf/hashtab.c (rhtab_*) implements them, run by one
 * guest program as PID 1 in UML.  Each check reports one line:
 *   PASS|FAIL|SKIP|XFAIL <area>/<name>: <semantics> -- <what was seen>
 * after a PLAN line per check, so that a check which never reports (the
 * guest or kernel died) is counted as crashed by tests/run_tests.py.
 *
 * UML is built SMP=n (one CPU, CONFIG_PREEMPT_VOLUNTARY): user-space threads
 * interleave on that CPU at syscalls, sleeps and timer ticks; they never run
 * in parallel, and a task inside the kernel is not preempted.
 */
#ifndef BPFUML_RHASH_SUITE_H
#define BPFUML_RHASH_SUITE_H

#include <stdbool.h>
#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

/* XFAIL: a property that does not hold and that the kernel does not
 * promise either (the detail cites where it says so); reported, never
 * counted as passed. */
enum check_status { CHECK_PASS, CHECK_FAIL, CHECK_SKIP, CHECK_XFAIL };

struct check {
	const char *name;	/* area/name, unique */
	const char *semantics;	/* what the kernel promises, in a few words */
	enum check_status (*run)(struct check *c);
	const void *param;	/* for checks that share one run function */
	char detail[512];	/* what was seen, for the report line */
};

/* The check's report detail; returns status, for `return check_fail(...)`. */
enum check_status check_pass(struct check *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
enum check_status check_fail(struct check *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
enum check_status check_skip(struct check *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
enum check_status check_xfail(struct check *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The guest's path of rhash_suite.bpf.o. */
extern const char *suite_object_path;

/* Opens the suite's object with only the programs named (NULL-terminated,
 * or NULL for none) set to load, and loads it: every map is created fresh.
 * NULL on failure, with why (why_len bytes) saying which step and why. */
struct bpf_object *suite_open(const char *const *progs, char *why, size_t why_len);
int suite_map_fd(struct bpf_object *obj, const char *name);
int suite_prog_fd(struct bpf_object *obj, const char *name);

/* A plain RHASH map u32 -> u64 (no BTF): a fd or -errno. */
int rhash_create(__u32 max_entries, __u64 map_extra);
/* The map's "memlock:" in /proc/self/fdinfo (bpf_map_memory_usage(), for
 * RHASH rhtab_map_mem_usage()); -errno if absent. */
long long map_memlock(int map_fd);
/* Keys seen by a full get_next_key walk; -errno on an error mid-walk. */
long map_count_keys(int map_fd);

/* The checks of each area. */
extern struct check flags_checks[], limits_checks[], growth_checks[],
	iteration_checks[], values_checks[], concurrency_checks[];

#endif
