// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests for the verifier log parser and renderers (harness/diag*.c).
 * Usage: test_diag FIXTURE_DIR.  Prints "ok NAME" / "FAIL NAME: why" per test
 * and "N passed, N failed" last; exits 1 on any failure.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "diag.h"
#include "term.h"
#include "unit.h"

static struct diag_log *parse_str(const char *s)
{
	return diag_parse(s, strlen(s));
}

static void human(char **out, size_t *len, const struct diag_log *log, bool color)
{
	FILE *f = open_memstream(out, len);

	diag_print_human(f, log, color);
	fclose(f);
}

static void gcc(char **out, size_t *len, const struct diag_log *log, const char *prog,
		const char *fallback)
{
	FILE *f = open_memstream(out, len);

	diag_print_gcc(f, log, prog, fallback);
	fclose(f);
}

/* "func @ file:line:col [insn N]" or "insn N" */
static void site_desc(char *buf, size_t size, const struct diag_site *s)
{
	if (s->file && s->function)
		snprintf(buf, size, "%s @ %s:%d:%d [insn %d]", s->function, s->file, s->line,
			 s->column, s->insn);
	else if (s->file)
		snprintf(buf, size, "%s:%d:%d [insn %d]", s->file, s->line, s->column, s->insn);
	else
		snprintf(buf, size, "insn %d", s->insn);
}

static void event_kinds(char *buf, size_t size, const struct diag_report *r)
{
	size_t i, o = 0;

	buf[0] = '\0';
	for (i = 0; i < r->n_events && o < size; i++)
		o += snprintf(buf + o, size - o, "%s%s", i ? "," : "", r->events[i].kind);
}

/* ---- the fixture table -------------------------------------------------- */

/* For string fields: NULL = not checked, NONE = must be NULL. */
#define NONE "\001none"

struct expect {
	const char *file;
	int reports;			/* number of reports */
	const char *category;		/* primary report */
	enum diag_category category_id;
	const char *problem;
	const char *at;			/* site_desc() of the At site */
	const char *events;		/* causal path kinds, "" = empty, NONE = no section */
	const char *legacy;		/* log-level legacy error line */
	int failing_insn;
	const char *linfo;		/* "text @ file:line" */
	long stats_insns;		/* -1: no stats line */
	bool truncated;
};

/*
 * One entry per fixture.  A recorded log (tests/unit/fixtures/recorded-*.log)
 * is added the same way: one line here states what it must parse to.
 */
static const struct expect fixtures[] = {
	{ "synthetic-register-nullable-deref.log", 1, "Register Type Safety", DIAG_CAT_REGISTER_TYPE,
	  "Invalid dereference", "xdp_count @ prog.bpf.c:23:9 [insn 7]", "update",
	  "R0 invalid mem access 'map_value_or_null'", 7, "return *value; @ prog.bpf.c:23", 8,
	  false },
	{ "synthetic-register-spill-fill.log", 1, "Register Type Safety", DIAG_CAT_REGISTER_TYPE,
	  "Invalid dereference", "xdp_count @ prog.bpf.c:25:11 [insn 11]",
	  "update,spilled,branch,update", "R1 invalid mem access 'map_value_or_null'", 11,
	  "return *saved; @ prog.bpf.c:25", 12, false },
	{ "synthetic-register-unreadable-invalidated.log", 1, "Register Type Safety",
	  DIAG_CAT_REGISTER_TYPE, "Unreadable register", "tc_sock @ sock.bpf.c:39:13 [insn 6]",
	  "update,branch,invalidated", "R7 !read_ok", 6, "return sk->family; @ sock.bpf.c:39", 7,
	  false },
	{ "synthetic-register-var-stack-write.log", 1, "Register Type Safety",
	  DIAG_CAT_REGISTER_TYPE, "Invalid dereference", "var_write @ var.bpf.c:12:23 [insn 6]",
	  "spilled,invalidated,update", "R1 invalid mem access 'scalar'", 6,
	  "return ((struct ctx *)ctx_save)->len; @ var.bpf.c:12", 7, false },
	{ "synthetic-memory-bounds.log", 1, "Memory Safety", DIAG_CAT_MEMORY,
	  "Access outside bounds", "xdp_parse @ bounds.bpf.c:46:9 [insn 8]", "branch,update,update",
	  "R2 offset is outside of the packet", 8, NULL, 9, false },
	{ "synthetic-memory-uninit-stack.log", 1, "Memory Safety", DIAG_CAT_MEMORY,
	  "Uninitialized stack read", "uninit @ stack.bpf.c:10:9 [insn 1]", NONE,
	  "invalid read from stack off -24+0 size 8", 1, "return buf[1]; @ stack.bpf.c:10", 2,
	  false },
	{ "synthetic-resource-leak.log", 2, "Resource Lifetime Safety",
	  DIAG_CAT_RESOURCE_LIFETIME, "Unreleased resource", "two_leaks @ leak.bpf.c:18:2 [insn 6]",
	  "acquired", "BPF_EXIT instruction in main prog would lead to reference leak", 6,
	  "return 0; @ leak.bpf.c:18", 7, false },
	{ "synthetic-resource-released.log", 1, "Resource Lifetime Safety",
	  DIAG_CAT_RESOURCE_LIFETIME, "Unreleased resource", "two_leaks @ leak.bpf.c:18:2 [insn 6]",
	  "acquired,released", "BPF_EXIT instruction in main prog would lead to reference leak", 6,
	  NULL, 7, false },
	{ "synthetic-resource-lock.log", 1, "Resource Lifetime Safety", DIAG_CAT_RESOURCE_LIFETIME,
	  "Nested spin lock", "double_lock @ lock.bpf.c:53:2 [insn 5]", NONE,
	  "Locking two bpf_spin_locks are not allowed", 5, NULL, 6, false },
	{ "synthetic-resource-irq.log", 1, "Resource Lifetime Safety", DIAG_CAT_RESOURCE_LIFETIME,
	  "IRQ flag restore out of order", "irq_order @ irq.bpf.c:22:2 [insn 8]", "context,context",
	  "cannot restore irq state out of order, expected id=6 acquired at insn_idx=8", 8, NULL, 9,
	  false },
	{ "synthetic-call-type.log", 1, "Call Type Safety", DIAG_CAT_CALL_TYPE,
	  "Invalid call argument", "call_bad @ call.bpf.c:5:2 [insn 2]", "update",
	  "R1 type=scalar expected=ptr_, trusted_ptr_, rcu_ptr_", 2, NULL, 3, false },
	{ "synthetic-exec-context-forbidden.log", 1, "Execution Context Safety",
	  DIAG_CAT_EXECUTION_CONTEXT, "Operation is not allowed in this context",
	  "rcu_prog @ rcu.bpf.c:31:2 [insn 2]", "context",
	  "sleepable global function may_sleep() called in rcu_read_lock region", 2,
	  "may_sleep(ctx); @ rcu.bpf.c:31", 3, false },
	{ "synthetic-exec-context-underflow.log", 1, "Execution Context Safety",
	  DIAG_CAT_EXECUTION_CONTEXT, "Unmatched context exit", "unbalanced @ unl.bpf.c:8:2 [insn 0]",
	  "", "unmatched rcu read unlock (kernel function bpf_rcu_read_unlock)", 0, NULL, 1, false },
	{ "synthetic-program-structure.log", 1, "Program Structure", DIAG_CAT_PROGRAM_STRUCTURE,
	  "Jump out of range", "insn 10", NONE, "jump out of range from insn 10 to 40", -1, NONE, 0,
	  false },
	{ "synthetic-policy.log", 1, "Policy", DIAG_CAT_POLICY, "Operation is not allowed",
	  "handler @ pol.bpf.c:1:44 [insn 0]", NONE,
	  "program of this type cannot use helper bpf_probe_write_user#36", 0, NULL, 1, false },
	{ "synthetic-omitted-events.log", 1, "Register Type Safety", DIAG_CAT_REGISTER_TYPE,
	  "Invalid dereference", "loopy @ loop.bpf.c:16:9 [insn 4]", NULL,
	  "R1 invalid mem access 'scalar'", 4, NULL, 304, false },
	{ "synthetic-no-report.log", 0, NULL, 0, NULL, NULL, NULL,
	  "R0 invalid mem access 'map_value_or_null'", 7, "return *value; @ prog.bpf.c:23", 8,
	  false },
	{ "synthetic-passed.log", 0, NULL, 0, NULL, NULL, NULL, NONE, 8,
	  "return *value; @ prog.bpf.c:23", 8, false },
	{ "synthetic-truncated.log", 1, "Register Type Safety", DIAG_CAT_REGISTER_TYPE,
	  "Invalid dereference", "xdp_count @ prog.bpf.c:23:9 [insn 7]", "update",
	  "R0 invalid mem access 'map_value_or_null'", 7, "return *value; @ prog.bpf.c:23", -1,
	  true },
	{ "synthetic-level2.log", 1, "Register Type Safety", DIAG_CAT_REGISTER_TYPE,
	  "Invalid dereference", "xdp_count @ prog.bpf.c:25:2 [insn 10]", "branch,update",
	  "R0 invalid mem access 'scalar'", 10, "v += ((struct big *)value)->tail; @ prog.bpf.c:25",
	  14, false },
};

#define N_FIXTURES (sizeof(fixtures) / sizeof(fixtures[0]))

static bool check_str(const char *what, const char *got, const char *want)
{
	if (!want)
		return true;
	if (!strcmp(want, NONE)) {
		CHECK(!got, "%s: want NULL, got \"%s\"", what, got);
		return !got;
	}
	CHECK(streq(got, want), "%s: want \"%s\", got \"%s\"", what, want, S(got));
	return streq(got, want);
}

static void test_fixture(const struct expect *e)
{
	char name[256], buf[4096];
	struct diag_log *log;
	struct buf b;

	snprintf(name, sizeof(name), "fixture/%s", e->file);
	begin();
	if (!read_file(e->file, &b)) {
		CHECK(0, "cannot read %s/%s: %s", fixture_dir, e->file, strerror(errno));
		end(name);
		return;
	}
	log = diag_parse(b.s, b.n);
	CHECK(log, "diag_parse returned NULL");
	if (!log)
		goto out;

	CHECK((int)log->n_reports == e->reports, "reports: want %d, got %zu", e->reports,
	      log->n_reports);
	CHECK(log->has_report == (e->reports > 0), "has_report");
	CHECK(log->report == (log->n_reports ? &log->reports[0] : NULL), "primary report");
	if (log->report && e->reports) {
		const struct diag_report *r = log->report;

		check_str("category", r->category, e->category);
		CHECK(r->category_id == e->category_id, "category_id: want %d, got %d",
		      e->category_id, r->category_id);
		check_str("problem", r->problem, e->problem);
		CHECK(r->reason && r->reason[0], "no reason text");
		CHECK(r->has_at, "no At site");
		if (r->has_at) {
			site_desc(buf, sizeof(buf), &r->at);
			check_str("at", buf, e->at);
			check_str("at kind", r->at.kind, "error");
			CHECK(r->at.kind_id == DIAG_EVENT_ERROR, "at kind_id");
			CHECK(r->at.message[0], "at message empty");
		}
		if (e->events && !strcmp(e->events, NONE)) {
			CHECK(!r->has_causal_path, "unexpected causal path");
		} else if (e->events) {
			CHECK(r->has_causal_path, "no causal path");
			event_kinds(buf, sizeof(buf), r);
			check_str("events", buf, e->events);
		}
		CHECK(r->complete == !e->truncated, "complete: %d", r->complete);
		if (!e->truncated)
			CHECK(r->suggestion && r->suggestion[0], "no suggestion");
		CHECK(r->raw_len > 0 && !strncmp(b.s + r->raw_off, "Verification failed: ", 21),
		      "raw span does not start at the header");
	}
	check_str("legacy_error", log->legacy_error, e->legacy);
	CHECK(log->failing_insn == e->failing_insn, "failing_insn: want %d, got %d",
	      e->failing_insn, log->failing_insn);
	if (e->linfo && strcmp(e->linfo, NONE)) {
		snprintf(buf, sizeof(buf), "%s @ %s:%d", S(log->linfo_text), S(log->linfo_file),
			 log->linfo_line);
		check_str("linfo", buf, e->linfo);
	} else if (e->linfo) {
		CHECK(!log->linfo_text && log->linfo_line == -1, "unexpected line info");
	}
	if (e->stats_insns < 0) {
		CHECK(!log->stats.present, "unexpected stats");
	} else {
		CHECK(log->stats.present, "no stats line");
		CHECK(log->stats.insns_processed == e->stats_insns && log->stats.insn_limit == 1000000,
		      "stats: insns %ld limit %ld", log->stats.insns_processed,
		      log->stats.insn_limit);
	}
	CHECK(log->truncated == e->truncated, "truncated: want %d, got %d", e->truncated,
	      log->truncated);
	diag_free(log);
out:
	free(b.s);
	end(name);
}

/*
 * The human renderer re-wraps the unwrapped texts with the kernel's
 * algorithm, so printing a complete report must give back the kernel's bytes
 * (the report is preceded by the kernel's "\n").
 */
static void test_roundtrip(const struct expect *e)
{
	char name[256];
	struct diag_log *log, one;
	struct buf b;
	size_t i;

	if (!read_file(e->file, &b))
		return;
	log = diag_parse(b.s, b.n);
	for (i = 0; log && i < log->n_reports; i++) {
		const struct diag_report *r = &log->reports[i];
		char *out = NULL, *want;
		size_t len = 0;

		if (!r->complete)
			continue;
		snprintf(name, sizeof(name), "roundtrip/%s#%zu", e->file, i);
		begin();
		memset(&one, 0, sizeof(one));
		one.reports = (struct diag_report *)r;
		one.n_reports = 1;
		one.report = r;
		one.has_report = true;
		human(&out, &len, &one, false);
		want = malloc(r->raw_len + 2);
		want[0] = '\n';
		memcpy(want + 1, b.s + r->raw_off, r->raw_len);
		want[r->raw_len + 1] = '\0';
		if (strcmp(out, want)) {
			size_t k = 0;

			while (out[k] && out[k] == want[k])
				k++;
			CHECK(0, "differs at byte %zu: got \"%.40s\", want \"%.40s\"", k, out + k,
			      want + k);
		}
		free(want);
		free(out);
		end(name);
	}
	diag_free(log);
	free(b.s);
}

/* ---- focused tests ------------------------------------------------------ */

static struct diag_log *load(const char *file, struct buf *b)
{
	if (!read_file(file, b)) {
		b->s = NULL;
		return NULL;
	}
	return diag_parse(b->s, b->n);
}

static void test_all_categories(void)
{
	bool seen[DIAG_CAT_VERIFIER_ERROR + 1] = {};
	size_t i, k;
	int c;

	begin();
	for (i = 0; i < N_FIXTURES; i++) {
		struct buf b;
		struct diag_log *log = load(fixtures[i].file, &b);

		for (k = 0; log && k < log->n_reports; k++)
			seen[log->reports[k].category_id] = true;
		diag_free(log);
		free(b.s);
	}
	for (c = DIAG_CAT_REGISTER_TYPE; c <= DIAG_CAT_POLICY; c++)
		CHECK(seen[c], "no fixture of category %s", diag_category_name(c));
	end("categories/all-seven-covered");
}

static void test_all_event_kinds(void)
{
	static const enum diag_event_kind kinds[] = {
		DIAG_EVENT_ERROR, DIAG_EVENT_UPDATE, DIAG_EVENT_SPILLED, DIAG_EVENT_INVALIDATED,
		DIAG_EVENT_BRANCH, DIAG_EVENT_ACQUIRED, DIAG_EVENT_RELEASED, DIAG_EVENT_CONTEXT,
	};
	bool seen[DIAG_EVENT_CONTEXT + 1] = {};
	size_t i, k, j, m;

	begin();
	for (i = 0; i < N_FIXTURES; i++) {
		struct buf b;
		struct diag_log *log = load(fixtures[i].file, &b);

		for (k = 0; log && k < log->n_reports; k++) {
			const struct diag_report *r = &log->reports[k];

			if (r->has_at)
				seen[r->at.kind_id] = true;
			for (j = 0; j < r->n_events; j++) {
				seen[r->events[j].kind_id] = true;
				CHECK(!strcmp(r->events[j].kind,
					      diag_event_kind_id(r->events[j].kind_id)),
				      "kind \"%s\" mapped to %s", r->events[j].kind,
				      diag_event_kind_id(r->events[j].kind_id));
			}
			for (j = 0; j < r->n_extra; j++)
				for (m = 0; m < r->extra[j].n_sites; m++)
					seen[r->extra[j].sites[m].kind_id] = true;
		}
		diag_free(log);
		free(b.s);
	}
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		CHECK(seen[kinds[i]], "no fixture emits \"%s\"", diag_event_kind_id(kinds[i]));
	end("events/every-kernel-label-covered");
}

/* Replace the first @from in @s by @to; returns malloc()ed text. */
static char *replace(const char *s, const char *from, const char *to)
{
	const char *p = strstr(s, from);
	size_t n = strlen(s) - strlen(from) + strlen(to);
	char *o;

	if (!p)
		return strdup(s);
	o = malloc(n + 1);
	memcpy(o, s, p - s);
	strcpy(o + (p - s), to);
	strcat(o, p + strlen(from));
	return o;
}

static void test_unknown_kind_and_category(void)
{
	struct buf b;
	char *t1, *t2;
	struct diag_log *log;

	begin();
	if (!read_file("synthetic-register-nullable-deref.log", &b)) {
		CHECK(0, "fixture missing");
		end("events/unknown-label-is-other");
		return;
	}
	t1 = replace(b.s, "^-- update: ", "^-- mutated: ");
	t2 = replace(t1, "Register Type Safety: Invalid", "Frobnication Safety: Invalid");
	log = parse_str(t2);
	CHECK(log && log->report && log->report->n_events == 1, "parse");
	if (log && log->report && log->report->n_events == 1) {
		const struct diag_site *ev = &log->report->events[0];

		CHECK(streq(ev->kind, "mutated"), "kind \"%s\"", ev->kind);
		CHECK(ev->kind_id == DIAG_EVENT_OTHER, "kind_id %d", ev->kind_id);
		CHECK(!strncmp(ev->message, "R0 changed from", 15), "message \"%s\"", ev->message);
	}
	end("events/unknown-label-is-other");

	begin();
	CHECK(log && log->report, "parse");
	if (log && log->report) {
		CHECK(log->report->category_id == DIAG_CAT_UNKNOWN, "category_id %d",
		      log->report->category_id);
		CHECK(streq(log->report->category, "Frobnication Safety"), "category \"%s\"",
		      log->report->category);
		CHECK(streq(log->report->problem, "Invalid dereference"), "problem \"%s\"",
		      log->report->problem);
	}
	end("categories/unknown-category-kept-verbatim");
	diag_free(log);
	free(t1);
	free(t2);

	/* bpf_diag_source()'s default label and a header without problem text. */
	begin();
	t1 = replace(b.s, "^-- update: ", "^-- note: ");
	t2 = replace(t1, "Register Type Safety: Invalid dereference", "Verifier Error");
	log = parse_str(t2);
	CHECK(log && log->report && log->report->n_events == 1, "parse");
	if (log && log->report && log->report->n_events == 1) {
		CHECK(log->report->events[0].kind_id == DIAG_EVENT_NOTE, "note kind");
		CHECK(log->report->category_id == DIAG_CAT_VERIFIER_ERROR, "category %d",
		      log->report->category_id);
		CHECK(streq(log->report->problem, ""), "problem \"%s\"", log->report->problem);
	}
	end("events/default-note-label-and-bare-header");
	diag_free(log);
	free(t1);
	free(t2);
	free(b.s);
}

static void test_truncated(void)
{
	struct buf b;
	struct diag_log *log = load("synthetic-truncated.log", &b);

	begin();
	CHECK(log && log->report, "no report");
	if (log && log->report) {
		const struct diag_report *r = log->report;

		CHECK(log->truncated, "not truncated");
		CHECK(log->truncation == (DIAG_TRUNC_NO_STATS | DIAG_TRUNC_REPORT),
		      "truncation %#x", log->truncation);
		CHECK(!r->complete && !r->suggestion, "report marked complete");
		CHECK(r->n_events == 1 && r->events[0].has_insn_context &&
			      r->events[0].n_insns == 0,
		      "partial event not kept (%zu events)", r->n_events);
		CHECK(!log->stats.present, "stats");
	}
	end("truncated/cut-inside-causal-path");
	diag_free(log);
	free(b.s);

	/* Cut inside the Suggestion, no trailing newline. */
	begin();
	log = parse_str("R1 !read_ok\n\nVerification failed: Policy: Operation is not allowed\n\n"
			"Reason:\n  x.\n\nAt:\n  insn 3\n       | ^-- error: no\n\nSuggestion:\n"
			"  Use a hel");
	CHECK(log && log->report && log->report->complete, "report");
	if (log && log->report) {
		CHECK(streq(log->report->suggestion, "Use a hel"), "suggestion \"%s\"",
		      S(log->report->suggestion));
		CHECK(log->truncation == DIAG_TRUNC_NO_STATS, "truncation %#x", log->truncation);
		CHECK(streq(log->legacy_error, "R1 !read_ok"), "legacy \"%s\"",
		      S(log->legacy_error));
	}
	end("truncated/cut-inside-suggestion-no-newline");
	diag_free(log);
}

static void test_no_report(void)
{
	struct buf b;
	struct diag_log *log = load("synthetic-no-report.log", &b);

	begin();
	CHECK(log && !log->has_report, "report found");
	if (log) {
		CHECK(streq(log->legacy_error, "R0 invalid mem access 'map_value_or_null'"),
		      "legacy \"%s\"", S(log->legacy_error));
		CHECK(log->failing_insn == 7, "insn %d", log->failing_insn);
		CHECK(streq(log->failing_insn_text, "(61) r0 = *(u32 *)(r0 +0)"), "insn text \"%s\"",
		      S(log->failing_insn_text));
		CHECK(streq(log->linfo_text, "return *value;") &&
			      streq(log->linfo_file, "prog.bpf.c") && log->linfo_line == 23,
		      "linfo \"%s\" %s:%d", S(log->linfo_text), S(log->linfo_file),
		      log->linfo_line);
		CHECK(!log->truncated, "truncated");
	}
	end("no-report/legacy-line-insn-and-source");
	diag_free(log);
	free(b.s);

	/* The state comment after an instruction is not part of its text. */
	begin();
	log = parse_str("0: R1=ctx() R10=fp0\n"
			"3: (07) r2 += -4                      ; R2=fp-4\n");
	CHECK(log && log->failing_insn == 3 && streq(log->failing_insn_text, "(07) r2 += -4"),
	      "insn \"%s\"", log ? S(log->failing_insn_text) : "");
	CHECK(log && !log->legacy_error, "a state line is not an error");
	end("no-report/state-comment-stripped");
	diag_free(log);

	/* After "infinite loop detected" the kernel dumps both states: the
	 * error is the line before them (recorded from UML). */
	begin();
	log = parse_str("3: (05) goto pc-2\n"
			"infinite loop detected at insn 2\n"
			"cur state: R1=0 R10=fp0\n"
			"old state: R1=P0 R10=fp0\n"
			"processed 11 insns (limit 1000000) max_states_per_insn 0 total_states 1 "
			"peak_states 1 mark_read 0\n");
	CHECK(log && streq(log->legacy_error, "infinite loop detected at insn 2"), "legacy \"%s\"",
	      log ? S(log->legacy_error) : "");
	end("no-report/infinite-loop-state-dump");
	diag_free(log);

	begin();
	log = diag_parse("", 0);
	CHECK(log && !log->has_report && !log->legacy_error && log->failing_insn == -1 &&
		      log->truncated && log->n_lines == 0,
	      "empty input");
	diag_free(log);
	log = diag_parse(NULL, 0);
	CHECK(log && !log->has_report, "NULL input");
	diag_free(log);
	end("no-report/empty-input");
}

static void test_passed(void)
{
	struct buf b;
	struct diag_log *log = load("synthetic-passed.log", &b);
	char *out = NULL;
	size_t len = 0;

	begin();
	CHECK(log && !log->has_report && !log->legacy_error && !log->truncated,
	      "passed log misread (legacy \"%s\")", log ? S(log->legacy_error) : "");
	CHECK(log && log->stats.present && log->stats.insns_processed == 8, "stats");
	if (log)
		human(&out, &len, log, false);
	CHECK(out && !len, "human output for a passing log: \"%s\"", S(out));
	free(out);
	end("no-report/passed-program-has-no-error");
	diag_free(log);
	free(b.s);
}

static void test_multiple_reports(void)
{
	struct buf b;
	struct diag_log *log = load("synthetic-resource-leak.log", &b);

	begin();
	CHECK(log && log->n_reports == 2, "reports");
	if (log && log->n_reports == 2) {
		CHECK(streq(log->reports[0].legacy_error, "Unreleased reference id=2 alloc_insn=1"),
		      "legacy 0 \"%s\"", S(log->reports[0].legacy_error));
		CHECK(streq(log->reports[1].legacy_error, "Unreleased reference id=3 alloc_insn=4"),
		      "legacy 1 \"%s\"", S(log->reports[1].legacy_error));
		CHECK(log->reports[1].n_events == 1 && log->reports[1].events[0].line == 17,
		      "second report's event");
	}
	end("reports/one-per-leaked-reference");
	diag_free(log);

	/* Back-to-back reports: the second has no line of its own before it. */
	begin();
	if (b.s) {
		char *t = replace(b.s, "Unreleased reference id=3 alloc_insn=4\n", "");

		log = parse_str(t);
		CHECK(log && log->n_reports == 2 && log->reports[0].legacy_error &&
			      !log->reports[1].legacy_error,
		      "second report took the first one's legacy line");
		diag_free(log);
		free(t);
	}
	end("reports/back-to-back-legacy-line");
	free(b.s);
}

static void test_active_lock(void)
{
	struct buf b;
	struct diag_log *log = load("synthetic-resource-lock.log", &b);

	begin();
	CHECK(log && log->report && log->report->n_extra == 1, "extra sections");
	if (log && log->report && log->report->n_extra == 1) {
		const struct diag_section *s = &log->report->extra[0];

		CHECK(streq(s->title, "Active lock"), "title \"%s\"", s->title);
		CHECK(s->n_sites == 1 && s->sites[0].kind_id == DIAG_EVENT_ACQUIRED &&
			      s->sites[0].line == 52 && s->sites[0].insn == 3,
		      "active lock site");
		CHECK(s->n_sites == 1 && streq(s->sites[0].message,
					       "active bpf_spin_lock has verifier identity 4"),
		      "message");
	}
	end("sections/active-lock");
	diag_free(log);
	free(b.s);
}

static void test_insn_only_location(void)
{
	struct buf b;
	struct diag_log *log = load("synthetic-program-structure.log", &b);

	begin();
	CHECK(log && log->report && log->report->has_at, "no At");
	if (log && log->report && log->report->has_at) {
		const struct diag_site *s = &log->report->at;

		CHECK(!s->file && s->line == -1 && s->insn == 10, "location");
		CHECK(!s->has_source_context && s->has_insn_context && s->n_insns == 4,
		      "contexts: src %d insns %zu", s->has_source_context, s->n_insns);
		CHECK(streq(s->message, "jump out of range"), "message \"%s\"", s->message);
		CHECK(s->insn_width == 2, "insn width %d", s->insn_width);
	}
	end("sites/insn-only-location-without-btf");
	diag_free(log);
	free(b.s);
}

static void test_source_lanes(void)
{
	struct buf b;
	struct diag_log *log = load("synthetic-policy.log", &b);

	begin();
	CHECK(log && log->report && log->report->at.n_src == 5, "lanes");
	if (log && log->report && log->report->at.n_src == 5) {
		const struct diag_site *s = &log->report->at;

		CHECK(s->src[0].line == 0 && s->src[1].line == 0, "placeholder lanes");
		CHECK(s->src[2].marked && s->src[2].line == 1 && s->src_width == 1, "marked lane");
		CHECK(streq(s->src[2].caret,
			    "error: policy check failed for helper bpf_probe_write_user#36"),
		      "caret \"%s\"", S(s->src[2].caret));
		CHECK(!s->src[3].caret && streq(s->src[3].text, "..."), "lane 3");
		CHECK(s->caret_column == 0, "caret column %d", s->caret_column);
	}
	end("sites/placeholder-lanes-before-line-1");
	diag_free(log);
	free(b.s);

	log = load("synthetic-memory-bounds.log", &b);
	begin();
	CHECK(log && log->report && log->report->at.n_src == 5, "lanes");
	if (log && log->report && log->report->at.n_src == 5) {
		const struct diag_site *s = &log->report->at;

		CHECK(s->src[2].clipped && !s->src[1].clipped, "clipped flags");
		CHECK(s->caret_column == 8, "caret column %d (tab-expanded indent)",
		      s->caret_column);
	}
	end("sites/clipped-source-lane");
	diag_free(log);
	free(b.s);
}

static void test_wrapping(void)
{
	static const char *want_reason =
		"The verifier cannot prove offset + access_size <= object_size. Here, the maximal "
		"bound for a memory access is 270: start 269 + access_size 1, beyond object_size 14. "
		"R2 is pkt; offset is variable: known bits 0x0, unknown mask 0xff, plus fixed offset "
		"14; signed range [0, 255], unsigned range [0, 255]; access_size is 1; "
		"object_size is 14.";
	static const char *want_caret =
		"R5 changed from integer scalar with signed range [0, 255], unsigned range [0, 255] "
		"to integer scalar with signed range [0, 255], unsigned range [0, 255]";
	static const char *long_name =
		"bpf_very_long_generated_kfunc_name_very_long_generated_kfunc_name_very_long_"
		"generated_kfunc_name_very_long_generated_kfunc_name_for_testing_hard_wraps";
	struct buf b;
	struct diag_log *log = load("synthetic-memory-bounds.log", &b);
	char want[1024];

	begin();
	CHECK(log && log->report, "no report");
	if (log && log->report) {
		CHECK(log->report->n_reason_lines == 4, "reason lines %zu",
		      log->report->n_reason_lines);
		CHECK(streq(log->report->reason, want_reason), "reason \"%s\"",
		      S(log->report->reason));
		CHECK(log->report->n_events == 3 && streq(log->report->events[1].message, want_caret),
		      "wrapped caret \"%s\"",
		      log->report->n_events == 3 ? log->report->events[1].message : "");
	}
	end("wrapping/soft-wrapped-reason-and-caret");
	diag_free(log);
	free(b.s);

	log = load("synthetic-call-type.log", &b);
	begin();
	snprintf(want, sizeof(want),
		 "The first argument (task) to %s does not satisfy the verifier contract: expected "
		 "a trusted kernel object pointer, but R1 is an integer scalar.", long_name);
	CHECK(log && log->report && streq(log->report->reason, want), "reason \"%s\"",
	      log && log->report ? S(log->report->reason) : "");
	snprintf(want, sizeof(want), "invalid first argument (task) for %s", long_name);
	CHECK(log && log->report && streq(log->report->at.message, want), "caret \"%s\"",
	      log && log->report ? log->report->at.message : "");
	end("wrapping/hard-split-long-word");
	diag_free(log);
	free(b.s);

	begin();
	{
		const char *lines[] = { "a b", "c" };
		char *u = diag_unwrap(lines, 2, 98);

		CHECK(streq(u, "a b c"), "unwrap \"%s\"", S(u));
		free(u);
	}
	end("wrapping/diag_unwrap-api");
}

static void test_omitted(void)
{
	struct buf b;
	struct diag_log *log = load("synthetic-omitted-events.log", &b);

	begin();
	CHECK(log && log->report, "no report");
	if (log && log->report) {
		const struct diag_report *r = log->report;

		CHECK(r->n_events == 64, "events %zu", r->n_events);
		CHECK(r->n_omitted == 1 && r->omitted[0].count == 36 && r->omitted[0].before == 32,
		      "omission");
		CHECK(r->n_events == 64 && !strcmp(r->events[63].message,
						   "took the false branch of this conditional, "
						   "goto not followed"),
		      "last event");
	}
	end("causal-path/intermediate-events-omitted");

	begin();
	CHECK(log && log->report && log->report->not_retained == 1 &&
		      !log->report->no_retained_events,
	      "not_retained");
	end("causal-path/truncated-history-not-retained");
	diag_free(log);
	free(b.s);

	log = load("synthetic-exec-context-underflow.log", &b);
	begin();
	CHECK(log && log->report && log->report->has_causal_path &&
		      log->report->no_retained_events && log->report->n_events == 0,
	      "no retained events");
	end("causal-path/no-retained-events");
	diag_free(log);
	free(b.s);
}

static void test_level2(void)
{
	struct buf b;
	struct diag_log *log = load("synthetic-level2.log", &b);

	begin();
	CHECK(log && log->n_reports == 1, "reports");
	if (log) {
		CHECK(log->failing_insn == 10 && streq(log->failing_insn_text,
						       "(61) r1 = *(u32 *)(r0 +8)"),
		      "insn %d \"%s\"", log->failing_insn, S(log->failing_insn_text));
		CHECK(log->stats.present && log->stats.max_states_per_insn == 1 &&
			      log->stats.total_states == 1 && log->stats.peak_states == 1 &&
			      log->stats.mark_read == 2,
		      "stats fields");
		CHECK(log->n_lines > 40, "lines %zu", log->n_lines);
	}
	end("level2/state-and-liveness-lines-ignored");
	diag_free(log);
	free(b.s);
}

static void test_newline_variants(void)
{
	struct buf b;
	struct diag_log *a, *c, *d;
	char *crlf;
	size_t i, o = 0;

	begin();
	if (!read_file("synthetic-register-nullable-deref.log", &b)) {
		CHECK(0, "fixture missing");
		end("input/missing-trailing-newline");
		return;
	}
	a = diag_parse(b.s, b.n);
	c = diag_parse(b.s, b.n - 1);	/* drop the final '\n' */
	CHECK(a && c && c->stats.present && c->stats.mark_read == 0 && !c->truncated &&
		      c->n_reports == 1 && c->report->complete,
	      "no trailing newline");
	end("input/missing-trailing-newline");

	begin();
	crlf = malloc(b.n * 2 + 1);
	for (i = 0; i < b.n; i++) {
		if (b.s[i] == '\n')
			crlf[o++] = '\r';
		crlf[o++] = b.s[i];
	}
	d = diag_parse(crlf, o);
	CHECK(d && d->n_reports == 1 && streq(d->legacy_error, a->legacy_error) &&
		      d->report->n_events == 1 && streq(d->report->reason, a->report->reason),
	      "CRLF parse differs");
	end("input/crlf-tolerated");
	diag_free(a);
	diag_free(c);
	diag_free(d);
	free(crlf);
	free(b.s);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A level-2-looking trace of at least @size bytes, then a real report tail. */
static char *huge_log(size_t size, const char *tail, size_t *len)
{
	static const char *block[] = {
		"from 7 to 9: R0=0 R10=fp0 fp-8=0000????\n",
		"; v = *value; @ prog.bpf.c:24\n",
		"8: (61) r0 = *(u32 *)(r0 +0)          ; R0=map_value(map=counts,ks=4,vs=8)\n",
		"mark_precise: frame0: regs=r0 stack= before 8: (61) r0 = *(u32 *)(r0 +0)\n",
		"9: safe\n",
	};
	size_t tl = strlen(tail), o = 0, i = 0;
	char *s = malloc(size + 256 + tl);

	while (o < size) {
		size_t n = strlen(block[i % 5]);

		memcpy(s + o, block[i++ % 5], n);
		o += n;
	}
	memcpy(s + o, tail, tl);
	o += tl;
	s[o] = '\0';
	*len = o;
	return s;
}

static double time_parse(const char *s, size_t len)
{
	double best = 1e9;
	int i;

	for (i = 0; i < 3; i++) {
		double t = now();
		struct diag_log *log = diag_parse(s, len);

		t = now() - t;
		diag_free(log);
		if (t < best)
			best = t;
	}
	return best;
}

static void test_huge(void)
{
	struct buf b;
	struct diag_log *log;
	char *s1, *s8;
	size_t l1, l8;
	double t1, t8;

	begin();
	if (!read_file("synthetic-register-nullable-deref.log", &b)) {
		CHECK(0, "fixture missing");
		end("huge/1MiB-log");
		return;
	}
	s1 = huge_log(1 << 20, b.s, &l1);
	log = diag_parse(s1, l1);
	CHECK(l1 >= (1 << 20), "generated only %zu bytes", l1);
	CHECK(log && log->n_reports == 1 && log->report->n_events == 1 &&
		      log->failing_insn == 7 && log->stats.insns_processed == 8 &&
		      streq(log->legacy_error, "R0 invalid mem access 'map_value_or_null'"),
	      "1 MiB log misparsed");
	diag_free(log);
	end("huge/1MiB-log");

	/* Linear time: 8x the input must not cost anywhere near 64x. */
	begin();
	s8 = huge_log(8 << 20, b.s, &l8);
	t1 = time_parse(s1, l1);
	t8 = time_parse(s8, l8);
	CHECK(t8 < 24 * t1 + 0.05, "1 MiB %.4fs, 8 MiB %.4fs", t1, t8);
	end("huge/linear-time");
	free(s1);
	free(s8);

	/* One 2 MiB line without a newline: no report, it is the legacy line. */
	begin();
	s1 = malloc((2 << 20) + 1);
	memset(s1, 'x', 2 << 20);
	s1[2 << 20] = '\0';
	log = diag_parse(s1, 2 << 20);
	CHECK(log && !log->has_report && log->legacy_error &&
		      strlen(log->legacy_error) == (size_t)(2 << 20),
	      "huge line");
	diag_free(log);
	free(s1);
	end("huge/single-2MiB-line");
	free(b.s);
}

static void test_human_color(void)
{
	struct buf b;
	struct diag_log *log = load("synthetic-memory-bounds.log", &b);
	char *plain = NULL, *color = NULL;
	size_t lp = 0, lc = 0, i, o = 0;

	begin();
	if (log) {
		human(&plain, &lp, log, false);
		human(&color, &lc, log, true);
		CHECK(strstr(color, "\033["), "no escapes in colour output");
		/* Strip CSI sequences: the layout must be the plain one. */
		for (i = 0; i < lc; i++) {
			if (color[i] == '\033' && color[i + 1] == '[') {
				i += 2;
				while (i < lc && color[i] != 'm')
					i++;
				continue;
			}
			color[o++] = color[i];
		}
		color[o] = '\0';
		CHECK(streq(plain, color), "colour changes the layout");
	}
	free(plain);
	free(color);
	end("human/colour-only-adds-escapes");
	diag_free(log);
	free(b.s);

	log = load("synthetic-no-report.log", &b);
	begin();
	plain = NULL;
	if (log)
		human(&plain, &lp, log, false);
	CHECK(plain && strstr(plain, "Verification failed: R0 invalid mem access "
				     "'map_value_or_null'\n") &&
		      strstr(plain, ">>> 23 | return *value;") &&
		      strstr(plain, ">>> 7 | (61) r0 = *(u32 *)(r0 +0)"),
	      "legacy block: \"%s\"", S(plain));
	free(plain);
	end("human/legacy-log-block");
	diag_free(log);
	free(b.s);
}

static char *first_line(const char *s)
{
	const char *nl = strchr(s, '\n');

	return strndup(s, nl ? (size_t)(nl - s) : strlen(s));
}

static void test_gcc(void)
{
	char tmpl[] = "/tmp/test_diag.XXXXXX", cwd[PATH_MAX], path[PATH_MAX + 64];
	char *out = NULL, *line;
	size_t len = 0;
	struct buf b;
	struct diag_log *log = load("synthetic-memory-bounds.log", &b);
	FILE *f;

	begin();
	gcc(&out, &len, log, "xdp_parse", NULL);
	line = first_line(out);
	CHECK(streq(line, "bounds.bpf.c:46:9: error: Memory Safety: Access outside bounds "
			  "[prog xdp_parse]"),
	      "error line \"%s\"", line);
	CHECK(strstr(out, "\nbounds.bpf.c:43:11: note: branch: took the false branch of this "
			  "conditional, goto not followed\n"),
	      "branch note missing: %s", out);
	CHECK(strstr(out, "\nbounds.bpf.c:46:9: note: suggestion: Add or adjust"),
	      "suggestion note");
	free(line);
	free(out);
	end("gcc/error-and-notes");

	/* Path resolution: next to the fallback file, then relative to cwd. */
	begin();
	CHECK(mkdtemp(tmpl), "mkdtemp");
	snprintf(path, sizeof(path), "%s/bounds.bpf.c", tmpl);
	f = fopen(path, "w");
	CHECK(f, "create %s", path);
	if (f)
		fclose(f);
	snprintf(path, sizeof(path), "%s/bounds.bpf.o", tmpl);
	out = NULL;
	gcc(&out, &len, log, "xdp_parse", path);
	line = first_line(out);
	snprintf(path, sizeof(path), "%s/bounds.bpf.c:46:9: error: Memory Safety: Access outside "
		 "bounds [prog xdp_parse]", tmpl);
	CHECK(streq(line, path), "fallback dir: \"%s\"", line);
	free(line);
	free(out);

	CHECK(getcwd(cwd, sizeof(cwd)) && !chdir(tmpl), "chdir");
	out = NULL;
	gcc(&out, &len, log, "xdp_parse", "/nonexistent/x.bpf.o");
	line = first_line(out);
	CHECK(!strncmp(line, "bounds.bpf.c:46:9: error:", 25), "cwd: \"%s\"", line);
	free(line);
	free(out);
	CHECK(!chdir(cwd), "chdir back");
	snprintf(path, sizeof(path), "%s/bounds.bpf.c", tmpl);
	unlink(path);
	rmdir(tmpl);
	end("gcc/path-resolution");
	diag_free(log);
	free(b.s);

	log = load("synthetic-no-report.log", &b);
	begin();
	out = NULL;
	gcc(&out, &len, log, "xdp_count", NULL);
	CHECK(streq(out, "prog.bpf.c:23: error: R0 invalid mem access 'map_value_or_null' "
			 "[prog xdp_count]\n"),
	      "legacy gcc \"%s\"", S(out));
	free(out);
	end("gcc/legacy-error-at-line-info");
	diag_free(log);
	free(b.s);

	log = load("synthetic-program-structure.log", &b);
	begin();
	out = NULL;
	gcc(&out, &len, log, "p", "obj/p.bpf.o");
	line = first_line(out);
	CHECK(streq(line, "obj/p.bpf.o: error: Program Structure: Jump out of range [prog p]"),
	      "no-location \"%s\"", line);
	free(line);
	free(out);
	end("gcc/no-source-location-uses-fallback");
	diag_free(log);
	free(b.s);
}

static json_object *get(json_object *o, const char *path)
{
	char key[128];
	const char *p = path;

	/* "a.b.0.c": objects by key, arrays by index. */
	while (o && *p) {
		size_t n = strcspn(p, ".");

		snprintf(key, sizeof(key), "%.*s", (int)n, p);
		if (json_object_is_type(o, json_type_array))
			o = json_object_array_get_idx(o, atoi(key));
		else if (!json_object_object_get_ex(o, key, &o))
			return NULL;
		p += n + (p[n] == '.');
	}
	return o;
}

static const char *get_str(json_object *o, const char *path)
{
	json_object *v = get(o, path);

	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static long long get_int(json_object *o, const char *path)
{
	json_object *v = get(o, path);

	return v && json_object_is_type(v, json_type_int) ? json_object_get_int64(v) : -999;
}

static void test_json(void)
{
	struct buf b;
	struct diag_log *log = load("synthetic-register-spill-fill.log", &b);
	json_object *o, *back;
	const char *text;

	begin();
	o = diag_to_json(log);
	CHECK(o, "diag_to_json NULL");
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	back = json_tokener_parse(text);
	CHECK(back, "output does not parse back");
	CHECK(streq(get_str(back, "schema"), "bpfuml-diag/1"), "schema");
	CHECK(json_object_get_boolean(get(back, "has_report")), "has_report");
	CHECK(streq(get_str(back, "reports.0.category_id"), "register_type_safety"), "category");
	CHECK(json_object_array_length(get(back, "reports.0.causal_path.events")) == 4, "events");
	CHECK(streq(get_str(back, "reports.0.causal_path.events.1.kind_id"), "spilled"),
	      "spilled");
	CHECK(get_int(back, "reports.0.at.location.line") == 25, "at line");
	CHECK(get_int(back, "reports.0.at.insn") == 11, "at insn");
	CHECK(get_int(back, "failing_insn.index") == 11, "failing insn");
	CHECK(get_int(back, "stats.total_states") == 1, "stats");
	CHECK(json_object_array_length(get(back, "truncation")) == 0, "truncation");
	CHECK(streq(get_str(back, "reports.0.at.source_context.2.caret"),
		    "error: invalid dereference of R1 (a nullable map value pointer)"),
	      "caret");
	json_object_put(back);
	json_object_put(o);
	end("json/schema-and-fields");
	diag_free(log);
	free(b.s);

	log = load("synthetic-truncated.log", &b);
	begin();
	o = diag_to_json(log);
	CHECK(o && json_object_get_boolean(get(o, "truncated")) &&
		      streq(get_str(o, "truncation.0"), "no_stats") &&
		      streq(get_str(o, "truncation.1"), "incomplete_report") &&
		      get(o, "stats") == NULL && get(o, "reports.0.suggestion") == NULL,
	      "truncated JSON");
	json_object_put(o);
	end("json/truncated-log");
	diag_free(log);
	free(b.s);

	log = load("synthetic-program-structure.log", &b);
	begin();
	o = diag_to_json(log);
	CHECK(o && get(o, "reports.0.at.location") == NULL &&
		      get(o, "reports.0.at.source_context") == NULL &&
		      get_int(o, "reports.0.at.insn") == 10 && get(o, "failing_insn") == NULL,
	      "null members");
	json_object_put(o);
	end("json/absent-values-are-null");
	diag_free(log);
	free(b.s);
}

static void test_sarif(void)
{
	struct buf b1, b2;
	struct diag_log *l1 = load("synthetic-register-spill-fill.log", &b1);
	struct diag_log *l2 = load("synthetic-no-report.log", &b2);
	struct diag_sarif_result res[] = {
		{ "xdp_count", "build/prog.bpf.o", l1 },
		{ "other", "build/other.bpf.o", l2 },
		{ "passed", "build/ok.bpf.o", NULL },
		{ "again", "build/again.bpf.o", l1 },
	};
	json_object *o, *r0;

	begin();
	o = diag_to_sarif(res, 4);
	CHECK(o, "NULL");
	CHECK(streq(get_str(o, "version"), "2.1.0"), "version");
	CHECK(json_object_array_length(get(o, "runs")) == 1, "one run");
	CHECK(json_object_array_length(get(o, "runs.0.results")) == 3, "results: %zu",
	      json_object_array_length(get(o, "runs.0.results")));
	CHECK(json_object_array_length(get(o, "runs.0.tool.driver.rules")) == 2, "rules");
	r0 = get(o, "runs.0.results.0");
	CHECK(streq(get_str(r0, "ruleId"), "Register Type Safety") &&
		      get_int(r0, "ruleIndex") == 0 && streq(get_str(r0, "level"), "error"),
	      "rule");
	CHECK(!strncmp(S(get_str(r0, "message.text")),
		       "Register Type Safety: Invalid dereference [prog xdp_count]\nR1 may be",
		       60),
	      "message \"%s\"", S(get_str(r0, "message.text")));
	CHECK(streq(get_str(r0, "locations.0.physicalLocation.artifactLocation.uri"),
		    "prog.bpf.c") &&
		      get_int(r0, "locations.0.physicalLocation.region.startLine") == 25 &&
		      get_int(r0, "locations.0.physicalLocation.region.startColumn") == 11,
	      "location");
	CHECK(streq(get_str(r0, "locations.0.physicalLocation.contextRegion.snippet.text"),
		    "                return *saved;"),
	      "snippet \"%s\"",
	      S(get_str(r0, "locations.0.physicalLocation.contextRegion.snippet.text")));
	CHECK(json_object_array_length(get(r0, "codeFlows.0.threadFlows.0.locations")) == 5,
	      "flow: 4 events + the failure");
	CHECK(streq(get_str(r0, "codeFlows.0.threadFlows.0.locations.2.kinds.0"), "branch") &&
		      streq(get_str(r0, "codeFlows.0.threadFlows.0.locations.4.kinds.0"),
			    "danger"),
	      "flow kinds");
	CHECK(streq(get_str(o, "runs.0.results.1.ruleId"), "Verifier Error") &&
		      get_int(o, "runs.0.results.1.ruleIndex") == 1 &&
		      get_int(o, "runs.0.results.1.locations.0.physicalLocation.region.startLine") ==
			      23,
	      "legacy result");
	CHECK(get_int(o, "runs.0.results.2.ruleIndex") == 0 &&
		      streq(get_str(o, "runs.0.results.2.properties.bpfProgram"), "again"),
	      "rule reuse");
	json_object_put(o);
	end("sarif/one-run-many-programs");
	diag_free(l1);
	diag_free(l2);
	free(b1.s);
	free(b2.s);
}

/*
 * Logs recorded from the real UML 7.3 kernel by tests/unit/record-fixtures.sh.
 * The expectations are facts known independently of the parser: the category
 * each example was written to provoke (its bpfuml-expect line), and the
 * verifier's own legacy message for that check.
 */
struct recorded {
	const char *file;
	const char *category;		/* NULL: no structured report */
	const char *legacy;		/* substring of the legacy line, NULL: none */
	bool stats;			/* a statistics line is expected */
	int min_events;			/* causal-path events at least */
};

static const struct recorded recorded_fixtures[] = {
	{ "recorded-accepted.log", NULL, NULL, true, 0 },
	{ "recorded-register_type_null_deref.log", "Register Type Safety",
	  "invalid mem access 'map_value_or_null'", true, 1 },
	{ "recorded-register_type_null_deref-level2.log", "Register Type Safety",
	  "invalid mem access 'map_value_or_null'", true, 1 },
	{ "recorded-memory_packet_bounds.log", "Memory Safety",
	  "min value is outside of the allowed memory range", true, 0 },
	{ "recorded-resource_ringbuf_leak.log", "Resource Lifetime Safety",
	  "would lead to reference leak", true, 1 },
	{ "recorded-call_type_ctx_as_map.log", "Call Type Safety", "type=ctx expected=map_ptr", true, 0 },
	{ "recorded-exec_context_call_under_lock.log", "Execution Context Safety",
	  "function calls are not allowed while holding a lock", true, 0 },
	{ "recorded-program_structure_unreachable.log", "Program Structure", "unreachable insn 2",
	  true, 0 },
	{ "recorded-policy_helper_not_allowed.log", "Policy",
	  "cannot use helper bpf_skb_store_bytes", true, 0 },
	{ "recorded-no_report_ctx_as_value.log", NULL, "R3 type=ctx expected=fp", true, 0 },
};

static void test_recorded(const struct recorded *r)
{
	char name[256];
	struct diag_log *log;
	struct buf b;

	begin();
	log = load(r->file, &b);
	CHECK(log, "cannot read or parse %s", r->file);
	if (log) {
		CHECK(log->has_report == (r->category != NULL), "has_report %d", log->has_report);
		CHECK(!r->category || streq(log->report->category, r->category),
		      "category '%s', want '%s'", S(log->report ? log->report->category : NULL),
		      S(r->category));
		CHECK(!r->category || log->report->complete, "report not complete");
		CHECK(!r->category || (int)log->report->n_events >= r->min_events,
		      "%zu causal events, want >= %d", log->report->n_events, r->min_events);
		CHECK(r->legacy ? log->legacy_error && strstr(log->legacy_error, r->legacy) :
				  !log->legacy_error,
		      "legacy line '%s', want '%s'", S(log->legacy_error), S(r->legacy));
		CHECK(log->stats.present == r->stats, "stats present %d", log->stats.present);
		CHECK(!r->stats || !log->truncated, "a whole recorded log parsed as truncated");
	}
	snprintf(name, sizeof(name), "recorded/%s", r->file);
	end(name);
	diag_free(log);
	free(b.s);
}

/* ---- hostile input (issue 21) ------------------------------------------- */

/* Parse and render @s in every format; NULL if the parser gave up. */
static struct diag_log *parse_and_render(const char *s, size_t n)
{
	struct diag_sarif_result res = { .prog_name = "p", .object_file = "p.bpf.o" };
	struct diag_log *log = diag_parse(s, n);
	char *out = NULL;
	size_t len = 0;
	json_object *doc;

	if (!log)
		return NULL;
	res.log = log;
	human(&out, &len, log, true);
	free(out);
	gcc(&out, &len, log, "p", "p.bpf.o");
	free(out);
	doc = diag_to_json(log);
	json_object_put(doc);
	doc = diag_to_sarif(&res, 1);
	json_object_put(doc);
	return log;
}

/*
 * libFuzzer's first find: a continuation line shorter than the "^--" line's
 * text offset, after a line that is not part of the annotation, made
 * unwrap_lines() memcpy about 2^64 bytes.
 */
static void test_annotation_shorter_than_offset(void)
{
	static const char log_text[] = "Verification failed: \nC:\n  p:2:0\n  Source context:\n"
				       "   |  ^-- \n  \n    |     \005";
	struct diag_log *log;

	begin();
	log = parse_and_render(log_text, sizeof(log_text) - 1);
	CHECK(log && log->n_reports == 1 && log->report->n_extra == 1,
	      "the report and its section \"C\" are not kept");
	if (log && log->n_reports == 1 && log->report->n_extra == 1)
		CHECK(log->report->extra[0].n_sites == 1 &&
			      streq(log->report->extra[0].sites[0].kind, ""),
		      "the section's site");
	diag_free(log);
	end("hostile/annotation-line-shorter-than-text-offset");
}

/* A continuation line belongs to the "^--" line only directly below it. */
static void test_annotation_continuation_not_adjacent(void)
{
	struct buf b;
	char *t;
	struct diag_log *log;

	begin();
	if (!read_file("synthetic-resource-lock.log", &b)) {
		CHECK(0, "fixture missing");
		end("hostile/annotation-continuation-after-a-lane");
		return;
	}
	/* A lane, then a line shaped like the error's continuation. */
	t = replace(b.s, "      54 | ...\n      55 | ...\n",
		    "      54 | ...........................\n"
		    "         |             not a continuation\n");
	log = parse_and_render(t, strlen(t));
	CHECK(log && log->report && log->report->has_at, "parse");
	if (log && log->report && log->report->has_at)
		CHECK(streq(log->report->at.message, "nested spin lock"), "message \"%s\"",
		      log->report->at.message);
	diag_free(log);
	free(t);
	free(b.s);
	end("hostile/annotation-continuation-after-a-lane");
}

/*
 * A lane whose number is padded to 200,000 columns: the kernel pads to the
 * widest line number, so the human output must not repeat that width for
 * every lane (100 lanes would be 20 MB).
 */
static void test_wide_lane_output_bounded(void)
{
	static const char head[] = "Verification failed: Memory Safety: x\n\nAt:\n  f @ a.c:3:1\n"
				   "  Source context:\n  >>> ";
	size_t pad = 200000, i, o = 0, len = 0;
	char *s = malloc(sizeof(head) + pad + 100 * 16 + 64), *out = NULL;
	struct diag_log *log;

	begin();
	o = sprintf(s, "%s", head);
	memset(s + o, ' ', pad);
	o += pad;
	o += sprintf(s + o, "3 | x\n");
	for (i = 0; i < 100; i++)
		o += sprintf(s + o, "      4 | y\n");
	log = diag_parse(s, o);
	CHECK(log && log->report && log->report->at.n_src == 101, "lanes not parsed");
	if (log)
		human(&out, &len, log, false);
	CHECK(len < 100000, "human output of a %zu-byte log is %zu bytes", o, len);
	free(out);
	diag_free(log);
	free(s);
	end("hostile/wide-lane-number-does-not-multiply-output");
}

/* term_write() on its own: what passes, what is shown as \xNN. */
static void test_term_write(void)
{
	static const struct {
		const char *in, *want;
		unsigned int flags;
	} cases[] = {
		{ "plain text", "plain text", 0 },
		{ "a\033]52;c;ZXZpbA==\007b", "a\\x1b]52;c;ZXZpbA==\\x07b", 0 },
		{ "\033[8mhidden\033[0m", "\\x1b[8mhidden\\x1b[0m", 0 },
		{ "tab\tkept", "tab\tkept", 0 },
		{ "two\nlines", "two\\x0alines", 0 },
		{ "two\nlines", "two\nlines", TERM_KEEP_NEWLINES },
		{ "cr\rover", "cr\\x0dover", TERM_KEEP_NEWLINES },
		{ "del\177", "del\\x7f", 0 },
		{ "c1 csi \302\233" "31m", "c1 csi \\xc2\\x9b31m", 0 },
		{ "raw \233 byte", "raw \\x9b byte", 0 },
		{ "caf\303\251 \342\202\254 \360\237\220\235", "caf\303\251 \342\202\254 \360\237\220\235", 0 },
		{ "rlo \342\200\256x", "rlo \\xe2\\x80\\xaex", 0 },
		{ "overlong \300\257", "overlong \\xc0\\xaf", 0 },
		{ "surrogate \355\240\200", "surrogate \\xed\\xa0\\x80", 0 },
		{ "cut \342\202", "cut \\xe2\\x82", 0 },
		{ "\377\376", "\\xff\\xfe", 0 },
	};
	char *out, small[8];
	size_t len, i;
	FILE *f;

	begin();
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		out = NULL;
		f = open_memstream(&out, &len);
		term_write(f, cases[i].in, strlen(cases[i].in), cases[i].flags);
		fclose(f);
		CHECK(streq(out, cases[i].want), "case %zu: \"%s\", want \"%s\"", i, out,
		      cases[i].want);
		free(out);
	}
	term_escape(small, sizeof(small), "\033[31mred");
	CHECK(streq(small, "\\x1b[31"), "term_escape cut: \"%s\"", small);
	end("term/escapes-controls-and-invalid-utf8");
}

/* No ESC, BEL or CSI byte in @s except our colours when @color. */
static bool terminal_safe(const char *s, size_t n, bool color, char *why, size_t size)
{
	static const char *const ours[] = { "\033[0m", "\033[1m", "\033[1;31m", "\033[36m",
					     "\033[2m", "\033[1;35m" };
	size_t i, k;

	for (i = 0; i < n; i++) {
		unsigned char c = s[i];

		if (c == '\033' && color) {
			for (k = 0; k < sizeof(ours) / sizeof(ours[0]); k++)
				if (!strncmp(s + i, ours[k], strlen(ours[k])))
					break;
			if (k < sizeof(ours) / sizeof(ours[0]))
				continue;
		}
		if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f || c == 0x9b) {
			char ctx[64], shown[256];

			/* The context shown escaped: a failure must not hit the terminal. */
			snprintf(ctx, sizeof(ctx), "%.60s", s + (i > 20 ? i - 20 : 0));
			snprintf(why, size, "byte 0x%02x at %zu: \"%s\"", c, i,
				 term_escape(shown, sizeof(shown), ctx));
			return false;
		}
	}
	return true;
}

/*
 * Terminal escapes in the object's text (function and file names, BTF
 * source lines, messages, libbpf's names) are shown, not sent: no ESC, BEL
 * or C1 CSI reaches the terminal from human or gcc output.
 */
static void test_escapes_in_rendered_text(void)
{
	static const char osc[] = "\033]52;c;ZXZpbA==\007";
	static const char *const files[] = { "synthetic-resource-lock.log",
					     "synthetic-no-report.log" };
	char why[256], *t[8], *out;
	struct diag_log *log;
	size_t len, f, k;
	struct buf b;
	bool color;

	for (f = 0; f < 2; f++) {
		begin();
		if (!read_file(files[f], &b)) {
			CHECK(0, "fixture missing");
			end(f ? "hostile/escapes-in-legacy-log-not-sent" :
				"hostile/escapes-in-report-not-sent");
			continue;
		}
		/* Every kind of text the renderers print from a log. */
		t[0] = replace(b.s, "double_lock @", "double\033[8m_lock @");
		t[1] = replace(t[0], "lock.bpf.c:53:2", "lo\302\233" "2Jck.bpf.c:53:2");
		t[2] = replace(t[1], ">>> 53 |         bpf_spin_lock(&e->lock);",
			       ">>> 53 |         bpf_spin_lock(&e->lock); // \033]52;c;ZXZpbA==\007");
		t[3] = replace(t[2], "Nested spin lock", "Nested \033[2J spin lock");
		t[4] = replace(t[3], "error: nested spin lock", "error: nested \033]0;x\007 lock");
		t[5] = replace(t[4], "Unlock the current", "Unlock \033[1A the current");
		t[6] = replace(t[5], "return *value; @", "return *value; /* \033]52;c;eA==\007 */ @");
		t[7] = replace(t[6], "invalid mem access", "invalid \233" "2J mem access");
		CHECK(strstr(t[7], f ? "\033]52;c;eA==" : "\033]52;c;ZXZpbA=="), "fixture changed");
		log = diag_parse(t[7], strlen(t[7]));
		CHECK(log, "parse");
		for (k = 0; log && k < 3; k++) {
			out = NULL;
			color = k == 1;
			if (k < 2)
				human(&out, &len, log, color);
			else
				gcc(&out, &len, log, osc, "x\033[2J.bpf.o");
			CHECK(terminal_safe(out, len, color, why, sizeof(why)), "%s: %s",
			      k < 2 ? "human" : "gcc", why);
			CHECK(strstr(out, "\\x1b") && strstr(out, "\\x9b"),
			      "%s: the escapes are not shown as \\x1b and \\x9b",
			      k < 2 ? "human" : "gcc");
			free(out);
		}
		diag_free(log);
		for (k = 0; k < 8; k++)
			free(t[k]);
		free(b.s);
		end(f ? "hostile/escapes-in-legacy-log-not-sent" :
			"hostile/escapes-in-report-not-sent");
	}
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc != 2 || !realpath(argv[1], fixture_dir)) {
		fprintf(stderr, "usage: %s FIXTURE_DIR\n", argv[0]);
		return 2;
	}
	for (i = 0; i < N_FIXTURES; i++)
		test_fixture(&fixtures[i]);
	for (i = 0; i < N_FIXTURES; i++)
		test_roundtrip(&fixtures[i]);
	for (i = 0; i < sizeof(recorded_fixtures) / sizeof(recorded_fixtures[0]); i++)
		test_recorded(&recorded_fixtures[i]);
	test_all_categories();
	test_all_event_kinds();
	test_unknown_kind_and_category();
	test_truncated();
	test_no_report();
	test_passed();
	test_multiple_reports();
	test_active_lock();
	test_insn_only_location();
	test_source_lanes();
	test_wrapping();
	test_omitted();
	test_level2();
	test_newline_variants();
	test_huge();
	test_human_color();
	test_gcc();
	test_json();
	test_sarif();
	test_annotation_shorter_than_offset();
	test_annotation_continuation_not_adjacent();
	test_wide_lane_output_bounded();
	test_term_write();
	test_escapes_in_rendered_text();

	return unit_summary();
}
