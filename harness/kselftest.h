/* SPDX-License-Identifier: GPL-2.0 */
/* kselftest.h — `bpfuml kselftest`: the kernel's BPF selftests (test_progs,
 * test_verifier, test_maps) in UML guests.  cmd_kselftest.c lists, shards and
 * runs them; kselftest_report.c parses the runners' output into results and
 * prints them (summary, KTAP, JSON).
 */
#ifndef BPFUML_KSELFTEST_H
#define BPFUML_KSELFTEST_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum ks_status {
	KS_PASS,
	KS_FAIL,
	KS_SKIP,
	KS_DENIED,	/* in DENYLIST.uml: not run, with the reason */
	KS_ERROR,	/* no result: its guest timed out, crashed or died */
	KS_NR_STATUS,
};

extern const char *const ks_status_name[KS_NR_STATUS];

struct ks_result {
	char *name;		/* "test" or "test/subtest", as test_progs names them */
	char *runner;		/* test_progs, test_verifier, test_maps */
	bool subtest;
	enum ks_status status;
	char *reason;		/* skip/deny reason, failure log (may be NULL) */
	size_t order;		/* when it was added: keeps subtests in run order */
	double duration_s;	/* how long it ran; < 0 when not known */
	unsigned int cpus;	/* its guest's CPUs; 0 when it did not run */
	/* A test run again with more CPUs: how its first run ended (status
	 * KS_NR_STATUS when there was none). */
	enum ks_status first_status;
	unsigned int first_cpus;
	char *first_reason;
};

struct ks_results {
	struct ks_result *v;
	size_t n, cap;
};

/* The result added (its duration not known yet). */
struct ks_result *ks_add(struct ks_results *r, const char *runner, const char *name, bool subtest,
			 enum ks_status status, const char *reason);
struct ks_result *ks_find(struct ks_results *r, const char *runner, const char *name);
void ks_free(struct ks_results *r);
/* Take out the results of RUNNER's TEST and its subtests, but for denied
 * ones (known before anything ran). */
void ks_remove_test(struct ks_results *r, const char *runner, const char *test);

/* One entry of DENYLIST.uml: a test or test/subtest name (globs allowed)
 * and why UML cannot run it. */
struct ks_deny {
	char *pattern;
	char *reason;
};

struct ks_denylist {
	struct ks_deny *v;
	size_t n;
};

/* Parse FILE; every entry must carry a reason ("name  # reason").  An
 * entry whose reason starts with KS_DENY_INTERPRETER_TAG holds only when
 * the guests interpret BPF (JIT false): x86_64's JIT in UML runs it.
 * Returns 0 or -errno; on a malformed line, -EINVAL with *bad_line set. */
#define KS_DENY_INTERPRETER_TAG "[interpreter]"
int ks_denylist_load(struct ks_denylist *d, const char *file, bool jit, int *bad_line);
/* The entries' patterns, a line each: the -d file test_progs reads. */
char *ks_denylist_text(const struct ks_denylist *d);
/* The entry that denies a whole test NAME, or NULL. */
const struct ks_deny *ks_denied_test(const struct ks_denylist *d, const char *name);
void ks_denylist_free(struct ks_denylist *d);

/* test_progs' lines that mean it is done for (NULL-terminated): its crash
 * handler's, and its watchdog's, which "terminates" a stuck test with a
 * SIGSEGV that the handler survives when the test is blocked in a system
 * call.  The agent watches the output for them (agent/fatal_watch.c). */
extern const char *const ks_fatal_output[];

/* Parsers of the runners' stdout.  Append what they find to R.  Return the
 * number of top-level results found. */
int ks_parse_test_progs(struct ks_results *r, const char *out);
int ks_parse_test_verifier(struct ks_results *r, const char *out);
/* test_progs' -J file: attach failure logs to the failed results. */
void ks_attach_test_progs_json(struct ks_results *r, json_object *summary);
/* The prefix of the lines whose times the agent records (its exec job's
 * "time_lines"): test_progs' result lines. */
#define KS_TIMED_LINES "#"
/* The agent's "line_times" of a test_progs run: each test's duration is the
 * time from the result line before it (or the start) to its own. */
void ks_attach_line_times(struct ks_results *r, json_object *line_times);

/* Runners in a fixed order, tests by name, subtests after their test. */
void ks_sort(struct ks_results *r);
/* Output.  Counts are per status, tests and subtests apart. */
void ks_count(const struct ks_results *r, bool subtests, int counts[KS_NR_STATUS]);
void ks_print_ktap(FILE *out, const struct ks_results *r);
void ks_print_summary(FILE *out, const struct ks_results *r, double wall_s, int jobs);
json_object *ks_results_json(const struct ks_results *r, double wall_s, int jobs);
/* Read PATH, a `kselftest --json` document (the user's file: size-capped,
 * its shape checked), into R, with its wall time and jobs when asked:
 * 0, or -1 with WHY (kselftest_gate.c). */
int ks_results_load(struct ks_results *r, const char *path, double *wall_s, int *jobs, char *why, size_t len);

/* ---- the gate against a baseline (kselftest_gate.c) ---------------------- */

/* A test whose status differs from the baseline's in a way that counts: a
 * pass lost (a regression) or a pass gained.  WAS/NOW are enum ks_status,
 * -1 when absent. */
struct ks_change {
	const char *runner, *name;	/* borrowed from the results compared */
	bool subtest;
	int was, now;
	bool flaky;			/* a regression that passed when retried alone */
};

struct ks_gate {
	struct ks_results base;
	struct ks_change *changes;
	size_t n_changes;
};

/* The changes from G->base to NOW (which must outlive G's use), for the
 * baseline's tests whose runner this run SELECTED; a test of the baseline
 * that NOW lacks is a regression when MISSING_COUNTS (a run of everything),
 * else it was left out of this run. */
int ks_gate_compare(struct ks_gate *g, struct ks_results *now, bool (*selected)(const char *runner, void *ctx),
		    bool missing_counts, void *ctx);
bool ks_change_is_regression(const struct ks_change *c);
/* Regressions, the flaky ones too or not. */
size_t ks_gate_regressions(const struct ks_gate *g, bool count_flaky);
/* Regressions that passed in RETRIED are flaky. */
void ks_gate_mark_flaky(struct ks_gate *g, struct ks_results *retried);
void ks_gate_print(FILE *out, const struct ks_gate *g, const char *file);
json_object *ks_gate_json(const struct ks_gate *g, const char *file);
void ks_gate_free(struct ks_gate *g);

#endif
