// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests for the parsers of what guests print, on output recorded from
 * the real kernel (tests/unit/record-fixtures.sh) and on variations of it:
 * the selftest runners' output (harness/kselftest_report.c), the console
 * scan for kernel trouble (harness/console_scan.c), the exec job's watch
 * for fatal lines (harness/agent/fatal_watch.c) and its clock on timed lines
 * (harness/agent/line_clock.c) with the durations taken from it, and the
 * denylist's modes.
 * Usage: test_parsers FIXTURE_DIR.  Prints "ok NAME" / "FAIL NAME: why" per
 * test and "N passed, N failed" last; exits 1 on any failure.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "console_scan.h"
#include "fatal_watch.h"
#include "kselftest.h"
#include "line_clock.h"
#include "unit.h"

/* ---- the selftest runners' output ---------------------------------------- */

/* Status of NAME in R, or -1 when it is not there. */
static int status_of(struct ks_results *r, const char *runner, const char *name)
{
	struct ks_result *x = ks_find(r, runner, name);

	return x ? (int)x->status : -1;
}

static const char *reason_of(struct ks_results *r, const char *runner, const char *name)
{
	struct ks_result *x = ks_find(r, runner, name);

	return x ? x->reason : NULL;
}

/* The runner's own count lines, added up (test_verifier's file has two runs):
 * "Summary: 7/56 PASSED, 1 SKIPPED, 3/3 FAILED" (test_progs: tests/subtests)
 * or "Summary: 161 PASSED, 0 SKIPPED, 0 FAILED" (test_verifier). */
struct summary {
	int passed, sub_passed, skipped, failed, sub_failed;
};

static struct summary runner_summary(const char *text)
{
	struct summary sum = { 0 };
	const char *line;

	for (line = strstr(text, "Summary: "); line; line = strstr(line + 1, "Summary: ")) {
		int p = 0, sp = 0, sk = 0, f = 0, sf = 0;

		if (sscanf(line, "Summary: %d/%d PASSED, %d SKIPPED, %d/%d FAILED", &p, &sp, &sk, &f, &sf) < 5 &&
		    sscanf(line, "Summary: %d PASSED, %d SKIPPED, %d FAILED", &p, &sk, &f) < 3)
			continue;
		sum.passed += p;
		sum.sub_passed += sp;
		sum.skipped += sk;
		sum.failed += f;
		sum.sub_failed += sf;
	}
	return sum;
}

/* test_progs on UML with tests that pass, have subtests, skip a subtest and
 * fail; its failure logs printed twice (after the test and under "All error
 * logs"), so that each result must be counted once.  The parser's counts
 * must be test_progs' own. */
static void test_test_progs_recorded(void)
{
	int counts[KS_NR_STATUS], sub[KS_NR_STATUS], tests;
	struct ks_results r = { 0 };
	struct buf b = { 0 };
	struct summary want;

	begin();
	if (!read_file("recorded-test_progs.out", &b)) {
		CHECK(0, "cannot read recorded-test_progs.out");
		end("test_progs_recorded");
		return;
	}
	want = runner_summary(b.s);
	tests = ks_parse_test_progs(&r, b.s);
	ks_count(&r, false, counts);
	ks_count(&r, true, sub);
	CHECK(want.passed > 0 && want.failed > 0, "no summary line in the recording");
	CHECK(counts[KS_PASS] == want.passed && sub[KS_PASS] == want.sub_passed,
	      "passed %d/%d, test_progs says %d/%d", counts[KS_PASS], sub[KS_PASS], want.passed,
	      want.sub_passed);
	CHECK(counts[KS_FAIL] == want.failed && sub[KS_FAIL] == want.sub_failed,
	      "failed %d/%d, test_progs says %d/%d", counts[KS_FAIL], sub[KS_FAIL], want.failed,
	      want.sub_failed);
	CHECK(sub[KS_SKIP] == want.skipped, "%d subtests skipped, test_progs says %d", sub[KS_SKIP],
	      want.skipped);
	CHECK(tests == counts[KS_PASS] + counts[KS_FAIL] + counts[KS_SKIP], "%d tests returned", tests);
	CHECK(status_of(&r, "test_progs", "atomics/add") == KS_PASS &&
	      ks_find(&r, "test_progs", "atomics/add")->subtest, "atomics/add: %d",
	      status_of(&r, "test_progs", "atomics/add"));
	CHECK(status_of(&r, "test_progs", "verify_pkcs7_sig/pkcs7_sig_fsverity") == KS_SKIP, "pkcs7 fsverity: %d",
	      status_of(&r, "test_progs", "verify_pkcs7_sig/pkcs7_sig_fsverity"));
	/* A failure's reason is the log test_progs printed before its line. */
	CHECK(status_of(&r, "test_progs", "arena_atomics") == KS_FAIL &&
	      strstr(S(reason_of(&r, "test_progs", "arena_atomics")), "skeleton load unexpected error: -524"),
	      "arena_atomics' reason: %s", S(reason_of(&r, "test_progs", "arena_atomics")));
	CHECK(strstr(S(reason_of(&r, "test_progs", "d_path/basic")), "setup attach failed") &&
	      !strstr(S(reason_of(&r, "test_progs", "d_path/basic")), "#"),
	      "d_path/basic's reason: %s", S(reason_of(&r, "test_progs", "d_path/basic")));
	ks_free(&r);
	free(b.s);
	end("test_progs_recorded");
}

/* test_verifier: one result per "#N/x desc OK|FAIL|SKIP" line; "Did not
 * run the program" is a note, not part of the name. */
static void test_test_verifier_recorded(void)
{
	struct ks_results r = { 0 };
	struct buf b = { 0 };
	int counts[KS_NR_STATUS];
	struct summary want;
	bool noted = false;

	begin();
	if (!read_file("recorded-test_verifier.out", &b)) {
		CHECK(0, "cannot read recorded-test_verifier.out");
		end("test_verifier_recorded");
		return;
	}
	want = runner_summary(b.s);
	ks_parse_test_verifier(&r, b.s);
	ks_count(&r, true, counts);
	CHECK(want.passed > 0 && want.failed > 0, "no failure in the recording");
	CHECK(counts[KS_PASS] == want.passed && counts[KS_FAIL] == want.failed && counts[KS_SKIP] == want.skipped,
	      "%d passed, %d failed, %d skipped; test_verifier says %d, %d, %d", counts[KS_PASS], counts[KS_FAIL],
	      counts[KS_SKIP], want.passed, want.failed, want.skipped);
	for (size_t i = 0; i < r.n; i++) {
		CHECK(!strncmp(r.v[i].name, "test_verifier/", 14) && !strstr(r.v[i].name, "Did not run"),
		      "name %s", r.v[i].name);
		noted |= r.v[i].reason && strstr(r.v[i].reason, "Did not run the program");
	}
	CHECK(noted, "no result kept its \"Did not run the program\" note");
	CHECK(status_of(&r, "test_verifier", "test_verifier/458/p ld_dw: xor semi-random 64 bit imms, test 5") ==
	      KS_FAIL, "ld_dw test 5 not failed");
	ks_free(&r);
	free(b.s);
	end("test_verifier_recorded");
}

/* ---- the console scan ------------------------------------------------------ */

/* A verify's console on UML, as it is (quiet) and with the whole boot
 * said (loglevel=8): nothing in either is trouble. */
static void test_console_clean_boot(void)
{
	static const char *const files[] = { "recorded-console-verify.log", "recorded-console-verbose.log" };

	begin();
	for (size_t i = 0; i < 2; i++) {
		struct buf b = { 0 };
		char *found;

		CHECK(read_file(files[i], &b), "cannot read %s", files[i]);
		if (!b.s)
			break;
		found = console_find_trouble(b.s, b.n);
		CHECK(!found, "%s: trouble found in a clean boot: %.300s", files[i], S(found));
		free(found);
		free(b.s);
	}
	end("console_clean_boot");
}

/* --test-fault panic: the trouble is the panic line and what follows it. */
static void test_console_panic(void)
{
	struct buf b = { 0 };
	char *found = NULL, *nl;
	int lines = 0;

	begin();
	CHECK(read_file("recorded-console-panic.log", &b), "cannot read recorded-console-panic.log");
	if (!failed) {
		found = console_find_trouble(b.s, b.n);
		CHECK(found, "no trouble found in a panic");
	}
	if (found) {
		for (nl = found; (nl = strchr(nl, '\n')); nl++)
			lines++;
		CHECK(strstr(found, "Kernel panic") || strstr(found, "BUG") || strstr(found, "Oops"),
		      "trouble without the panic: %.300s", found);
		/* It starts at a whole line of the console. */
		CHECK(strstr(b.s, found) == b.s || strstr(b.s, found)[-1] == '\n', "not at a line start");
		CHECK(lines <= 25, "%d lines kept", lines);
	}
	free(found);
	free(b.s);
	end("console_panic");
}

/* Each line of kernel_trouble.def, put in the middle of the clean console
 * and at its very end without a newline, is found from its line on. */
static void test_console_every_trouble_line(void)
{
	static const char *const markers[] = {
#define TROUBLE(text) text,
#include "kernel_trouble.def"
#undef TROUBLE
	};
	struct buf b = { 0 };
	size_t i;

	begin();
	CHECK(read_file("recorded-console-verify.log", &b), "cannot read recorded-console-verify.log");
	for (i = 0; !failed && i < sizeof(markers) / sizeof(markers[0]); i++) {
		char *text = NULL, *found;
		size_t half = b.n / 2, len;

		while (half < b.n && b.s[half - 1] != '\n')
			half++;
		len = asprintf(&text, "%.*s[    1.234567] something: %s here\n%s", (int)half, b.s, markers[i],
			       b.s + half);
		found = console_find_trouble(text, len);
		CHECK(found && !strncmp(found, "[    1.234567] something: ", 26),
		      "%s in the middle: found %.120s", markers[i], S(found));
		free(found);
		free(text);
		len = asprintf(&text, "%s%s", b.s, markers[i]);
		found = console_find_trouble(text, len);
		CHECK(found && !strcmp(found, markers[i]), "%s at the end: found %.120s", markers[i], S(found));
		free(found);
		free(text);
	}
	free(b.s);
	end("console_every_trouble_line");
}

static void test_console_tail(void)
{
	char *tail = console_tail("a\nb\nc\n", 6), *all = console_tail("no newline", 10);
	char text[4096] = "";
	int i;

	begin();
	CHECK(tail && !strcmp(tail, "a\nb\nc\n"), "short console: %s", S(tail));
	CHECK(all && !strcmp(all, "no newline"), "one line: %s", S(all));
	free(tail);
	for (i = 0; i < 40; i++)
		snprintf(text + strlen(text), sizeof(text) - strlen(text), "line %d\n", i);
	tail = console_tail(text, strlen(text));
	CHECK(tail && !strncmp(tail, "line 25\n", 8) && strstr(tail, "line 39\n"), "tail: %s", S(tail));
	free(tail);
	free(all);
	end("console_tail");
}

/* ---- the fatal-line watch ----------------------------------------------- */

/* A watch over a file of the test's own, with the kselftest markers. */
struct watched {
	char path[64];
	int fd;
	json_object *markers;
	struct fatal_watch w;
};

static void watch_start(struct watched *t)
{
	snprintf(t->path, sizeof(t->path), "/tmp/test_parsers.XXXXXX");
	t->fd = mkstemp(t->path);
	t->markers = json_object_new_array();
	for (size_t i = 0; ks_fatal_output[i]; i++)
		json_object_array_add(t->markers, json_object_new_string(ks_fatal_output[i]));
	fatal_watch_init(&t->w, t->markers, t->path);
}

static void watch_write(struct watched *t, const char *text, size_t len)
{
	if (write(t->fd, text, len) != (ssize_t)len)
		CHECK(0, "write: %s", strerror(errno));
}

static const char *watch_line(struct watched *t, size_t i)
{
	return t->w.lines && i < json_object_array_length(t->w.lines) ?
	       json_object_get_string(json_object_array_get_idx(t->w.lines, i)) : NULL;
}

static void watch_stop(struct watched *t)
{
	fatal_watch_free(&t->w);
	json_object_put(t->markers);
	close(t->fd);
	unlink(t->path);
}

/* test_progs killed by SIGSEGV in the middle of a test (its crash handler
 * printed the lines), read at once and as it grew. */
static void test_fatal_watch_recorded_crash(void)
{
	struct watched whole, grown;
	struct buf b = { 0 };
	size_t off;

	begin();
	if (!read_file("recorded-test_progs-crash.out", &b)) {
		CHECK(0, "cannot read recorded-test_progs-crash.out");
		end("fatal_watch_recorded_crash");
		return;
	}
	watch_start(&whole);
	watch_write(&whole, b.s, b.n);
	CHECK(fatal_watch_scan(&whole.w, 42), "no fatal line found");
	CHECK(whole.w.first_ns == 42, "first_ns %lld", whole.w.first_ns);
	CHECK(watch_line(&whole, 0) && !strncmp(watch_line(&whole, 0), "Caught signal #11", 17),
	      "first line %s", S(watch_line(&whole, 0)));
	/* In pieces of 100 bytes, scanned after each: the same lines, whole. */
	watch_start(&grown);
	for (off = 0; off < b.n; off += 100) {
		watch_write(&grown, b.s + off, b.n - off < 100 ? b.n - off : 100);
		fatal_watch_scan(&grown.w, 42);
	}
	CHECK(grown.w.lines && json_object_equal(grown.w.lines, whole.w.lines),
	      "grown: %s, whole: %s", grown.w.lines ? json_object_to_json_string(grown.w.lines) : "-",
	      json_object_to_json_string(whole.w.lines));
	watch_stop(&whole);
	watch_stop(&grown);
	free(b.s);
	end("fatal_watch_recorded_crash");
}

/* A marker across the 64 KiB read boundary; a marker inside a long line
 * (kept from the marker on, cut); no more than FATAL_MAX_LINES lines. */
static void test_fatal_watch_edges(void)
{
	struct watched t;
	char *filler = malloc(65536), line[1024];
	int i;

	begin();
	watch_start(&t);
	memset(filler, 'x', 65536);
	for (i = 79; i < 65536; i += 80)
		filler[i] = '\n';
	watch_write(&t, filler, 65530);
	watch_write(&t, "\nCaught signal #11!\n", 20);
	CHECK(fatal_watch_scan(&t.w, 1) && streq(watch_line(&t, 0), "Caught signal #11!"),
	      "across the boundary: %s", S(watch_line(&t, 0)));
	watch_stop(&t);

	watch_start(&t);
	/* 500 bytes, the marker, 400 bytes: kept from the marker, cut. */
	memset(line, 'y', 500);
	strcpy(line + 500, "terminating with SIGSEGV");
	memset(line + 524, 'z', 400);
	strcpy(line + 924, "\n");
	watch_write(&t, line, strlen(line));
	CHECK(fatal_watch_scan(&t.w, 1) && watch_line(&t, 0) &&
	      !strncmp(watch_line(&t, 0), "terminating with SIGSEGV", 24) &&
	      strlen(watch_line(&t, 0)) == FATAL_LINE_MAX,
	      "long line: %s", S(watch_line(&t, 0)));
	watch_stop(&t);

	watch_start(&t);
	for (i = 0; i < 10; i++)
		watch_write(&t, "Caught signal #11!\n", 19);
	fatal_watch_scan(&t.w, 1);
	CHECK(t.w.lines && json_object_array_length(t.w.lines) == FATAL_MAX_LINES, "%zu lines kept",
	      t.w.lines ? json_object_array_length(t.w.lines) : 0);
	watch_stop(&t);

	/* Nothing to watch for: never fatal. */
	fatal_watch_init(&t.w, NULL, "/nonexistent");
	CHECK(!fatal_watch_scan(&t.w, 1), "fatal without markers");
	fatal_watch_free(&t.w);
	free(filler);
	end("fatal_watch_edges");
}

static bool put(int fd, const char *text)
{
	return write(fd, text, strlen(text)) == (ssize_t)strlen(text);
}

/* Timed lines of a file written in pieces: a line is stamped when its end
 * is read, other lines are not timed, a long line is cut. */
static void test_line_clock(void)
{
	char path[] = "/tmp/test_parsers.XXXXXX", long_line[600];
	int fd = mkstemp(path);
	struct line_clock c;
	json_object *times;

	begin();
	line_clock_init(&c, "#", path, 1000000);
	line_clock_scan(&c, 2000000);
	CHECK(put(fd, "test log\n#1       alpha:O"), "write");
	line_clock_scan(&c, 5000000);		/* alpha's line not ended yet */
	CHECK(put(fd, "K\n#2/1     beta/one:OK\n"), "write");
	line_clock_scan(&c, 9000000);
	memset(long_line, '#', sizeof(long_line) - 1);
	long_line[sizeof(long_line) - 1] = '\n';
	CHECK(write(fd, long_line, sizeof(long_line)) == sizeof(long_line), "write");
	line_clock_scan(&c, 12000000);
	times = line_clock_times(&c);
	CHECK(times && json_object_array_length(times) == 3, "times %s", times ? json_object_to_json_string(times) : "-");
	if (times && json_object_array_length(times) == 3) {
		json_object *first = json_object_array_get_idx(times, 0), *last = json_object_array_get_idx(times, 2);

		CHECK(streq(json_object_get_string(json_object_array_get_idx(first, 0)), "#1       alpha:OK") &&
		      json_object_get_int64(json_object_array_get_idx(first, 1)) == 8,
		      "first %s", json_object_to_json_string(first));
		CHECK(strlen(json_object_get_string(json_object_array_get_idx(last, 0))) == LINE_CLOCK_LINE_MAX &&
		      json_object_get_int64(json_object_array_get_idx(last, 1)) == 11,
		      "long line %s", json_object_to_json_string(last));
	}
	json_object_put(times);
	line_clock_free(&c);
	/* Off: nothing timed, nothing opened. */
	line_clock_init(&c, NULL, path, 0);
	line_clock_scan(&c, 1);
	CHECK(!line_clock_on(&c) && !line_clock_times(&c) && c.fd < 0, "an off clock timed something");
	line_clock_free(&c);
	close(fd);
	unlink(path);
	end("line_clock");
}

/* Durations from the line times: a test's time since the result line
 * before it; subtest lines and unknown tests move no clock. */
static void test_durations_from_line_times(void)
{
	struct ks_results r = { 0 };
	json_object *times = json_tokener_parse(
		"[[\"#1       alpha:OK\", 120], [\"#2/1     beta/one:OK\", 300], [\"#2       beta:FAIL\", 450],"
		" [\"#9       gone:OK\", 500], [\"#3       gamma:SKIP\", 2500]]");

	begin();
	ks_parse_test_progs(&r, "#1       alpha:OK\n#2/1     beta/one:OK\n#2       beta:FAIL\n#3       gamma:SKIP\n");
	ks_attach_line_times(&r, times);
	CHECK(ks_find(&r, "test_progs", "alpha")->duration_s == 0.12, "alpha %g",
	      ks_find(&r, "test_progs", "alpha")->duration_s);
	CHECK(ks_find(&r, "test_progs", "beta")->duration_s == 0.33, "beta %g", ks_find(&r, "test_progs", "beta")->duration_s);
	CHECK(ks_find(&r, "test_progs", "gamma")->duration_s == 2.0, "gamma %g (from gone's line)",
	      ks_find(&r, "test_progs", "gamma")->duration_s);
	CHECK(ks_find(&r, "test_progs", "beta/one")->duration_s < 0, "a subtest got a duration");
	json_object_put(times);
	ks_free(&r);
	end("durations_from_line_times");
}

/* An entry tagged [interpreter] holds only without the JIT; test_progs'
 * -d file lists the patterns of the mode's entries. */
static void test_denylist_modes(void)
{
	char path[] = "/tmp/test_parsers.XXXXXX", *text;
	int fd = mkstemp(path), bad = 0;
	struct ks_denylist d;
	const char *file = "# comment\narena_htab  # [interpreter] only JITed code runs it\n"
			   "kprobe_multi_test/attach  # UML has no kprobes\n";

	begin();
	CHECK(put(fd, file), "write");
	CHECK(!ks_denylist_load(&d, path, false, &bad) && d.n == 2, "interpreter: %zu entries", d.n);
	text = ks_denylist_text(&d);
	CHECK(streq(text, "arena_htab\nkprobe_multi_test/attach\n"), "text %s", S(text));
	free(text);
	ks_denylist_free(&d);
	CHECK(!ks_denylist_load(&d, path, true, &bad) && d.n == 1 && streq(d.v[0].pattern, "kprobe_multi_test/attach"),
	      "jit: %zu entries", d.n);
	ks_denylist_free(&d);
	close(fd);
	unlink(path);
	end("denylist_modes");
}

int main(int argc, char **argv)
{
	if (argc != 2 || !realpath(argv[1], fixture_dir)) {
		fprintf(stderr, "usage: %s FIXTURE_DIR\n", argv[0]);
		return 2;
	}
	test_test_progs_recorded();
	test_test_verifier_recorded();
	test_console_clean_boot();
	test_console_panic();
	test_console_every_trouble_line();
	test_console_tail();
	test_fatal_watch_recorded_crash();
	test_fatal_watch_edges();
	test_line_clock();
	test_durations_from_line_times();
	test_denylist_modes();
	return unit_summary();
}
