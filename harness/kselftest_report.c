// SPDX-License-Identifier: GPL-2.0
/* kselftest_report.c — results of the kernel's BPF selftests: parsing the
 * runners' output (test_progs' "#N name:STATUS" lines and -J summary,
 * test_verifier's "#N/p desc OK" lines), the denylist, and the reports
 * (summary, KTAP, JSON).  No kernel needed: it works on saved text alone.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest.h"
#include "term.h"

const char *const ks_status_name[KS_NR_STATUS] = {
	[KS_PASS] = "passed", [KS_FAIL] = "failed", [KS_SKIP] = "skipped",
	[KS_DENIED] = "denied", [KS_ERROR] = "error",
};

/* Test logs may hold any bytes (a dumped packet, a corrupted string): keep
 * the text valid UTF-8 for JSON, each invalid byte a '?'. */
static char *utf8_copy(const char *text)
{
	const unsigned char *p = (const unsigned char *)text;
	char *out = strdup(text), *o = out;

	while (*p) {
		int len = *p < 0x80 ? 1 : (*p & 0xe0) == 0xc0 ? 2 : (*p & 0xf0) == 0xe0 ? 3 :
			  (*p & 0xf8) == 0xf0 ? 4 : 0;
		int i;

		for (i = 1; i < len; i++)
			if ((p[i] & 0xc0) != 0x80)
				len = 0;
		if (!len) {
			*o++ = '?';
			p++;
			continue;
		}
		memcpy(o, p, len);
		o += len;
		p += len;
	}
	*o = '\0';
	return out;
}

struct ks_result *ks_add(struct ks_results *r, const char *runner, const char *name, bool subtest,
			 enum ks_status status, const char *reason)
{
	struct ks_result *x;

	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 256;
		struct ks_result *v = realloc(r->v, cap * sizeof(*v));

		if (!v)
			abort();
		r->v = v;
		r->cap = cap;
	}
	x = &r->v[r->n++];
	x->runner = strdup(runner);
	x->name = strdup(name);
	x->subtest = subtest;
	x->status = status;
	x->reason = reason ? utf8_copy(reason) : NULL;
	x->order = r->n;
	x->duration_s = -1;
	x->cpus = 0;
	x->first_status = KS_NR_STATUS;
	x->first_cpus = 0;
	x->first_reason = NULL;
	return x;
}

struct ks_result *ks_find(struct ks_results *r, const char *runner, const char *name)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (!strcmp(r->v[i].name, name) && !strcmp(r->v[i].runner, runner))
			return &r->v[i];
	return NULL;
}

void ks_free(struct ks_results *r)
{
	size_t i;

	for (i = 0; i < r->n; i++) {
		free(r->v[i].name);
		free(r->v[i].runner);
		free(r->v[i].reason);
		free(r->v[i].first_reason);
	}
	free(r->v);
	memset(r, 0, sizeof(*r));
}

void ks_remove_test(struct ks_results *r, const char *runner, const char *test)
{
	size_t i, kept = 0, len = strlen(test);

	for (i = 0; i < r->n; i++) {
		struct ks_result *x = &r->v[i];
		bool of_test = !strcmp(x->runner, runner) && !strncmp(x->name, test, len) &&
			       (x->name[len] == '\0' || x->name[len] == '/');

		if (of_test && x->status != KS_DENIED) {
			free(x->name);
			free(x->runner);
			free(x->reason);
			free(x->first_reason);
			continue;
		}
		r->v[kept++] = *x;
	}
	r->n = kept;
}

/* ---- denylist ------------------------------------------------------------ */

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

int ks_denylist_load(struct ks_denylist *d, const char *file, bool jit, int *bad_line)
{
	char *line = NULL, *hash, *name, *reason;
	size_t cap = 0;
	int lineno = 0, err = 0;
	FILE *f;

	memset(d, 0, sizeof(*d));
	f = fopen(file, "r");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) >= 0) {
		lineno++;
		name = trim(line);
		if (!*name || *name == '#')
			continue;
		hash = strchr(name, '#');
		reason = hash ? trim(hash + 1) : "";
		if (hash)
			*hash = '\0';
		name = trim(name);
		/* Names may hold spaces (subtests often do); test_progs reads
		 * the same file up to '#', trimmed. */
		if (!*reason || !*name) {
			*bad_line = lineno;
			err = -EINVAL;
			break;
		}
		if (jit && !strncmp(reason, KS_DENY_INTERPRETER_TAG, strlen(KS_DENY_INTERPRETER_TAG)))
			continue;
		d->v = realloc(d->v, (d->n + 1) * sizeof(*d->v));
		d->v[d->n].pattern = strdup(name);
		d->v[d->n].reason = strdup(reason);
		d->n++;
	}
	free(line);
	fclose(f);
	return err;
}

const struct ks_deny *ks_denied_test(const struct ks_denylist *d, const char *name)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		if (!strchr(d->v[i].pattern, '/') && !fnmatch(d->v[i].pattern, name, 0))
			return &d->v[i];
	return NULL;
}

char *ks_denylist_text(const struct ks_denylist *d)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	for (size_t i = 0; i < d->n; i++)
		fprintf(f, "%s\n", d->v[i].pattern);
	if (fclose(f)) {
		free(text);
		return NULL;
	}
	return text;
}

void ks_denylist_free(struct ks_denylist *d)
{
	size_t i;

	for (i = 0; i < d->n; i++) {
		free(d->v[i].pattern);
		free(d->v[i].reason);
	}
	free(d->v);
	memset(d, 0, sizeof(*d));
}

/* ---- parsers ------------------------------------------------------------- */

const char *const ks_fatal_output[] = { "Caught signal #", "terminating with SIGSEGV", NULL };

/* test_progs: "#12      rhash:OK", "#12/3    rhash/sub:FAIL",
 * ":SKIP", ":SKIP (not built)", ":OK (SKIP: 1/4)". */
static bool parse_progs_line(char *line, char **name, bool *subtest, enum ks_status *status,
			     const char **note)
{
	char *p = line + 1, *colon = NULL, *c;

	if (line[0] != '#' || *p < '0' || *p > '9')
		return false;
	while (*p >= '0' && *p <= '9')
		p++;
	*subtest = *p == '/';
	while (*p && *p != ' ')
		p++;
	while (*p == ' ')
		p++;
	for (c = p; (c = strchr(c, ':')); c++)
		if (!strncmp(c, ":OK", 3) || !strncmp(c, ":FAIL", 5) || !strncmp(c, ":SKIP", 5))
			colon = c;
	if (!colon || colon == p)
		return false;
	*colon = '\0';
	*name = p;
	*note = NULL;
	if (!strncmp(colon + 1, "OK", 2)) {
		*status = KS_PASS;
		if (colon[3] == ' ')
			*note = colon + 4;	/* "(SKIP: 1/4)" */
	} else if (!strncmp(colon + 1, "FAIL", 4)) {
		*status = KS_FAIL;
	} else {
		*status = KS_SKIP;
		if (colon[5] == ' ')
			*note = colon + 6;	/* "(not built)" */
	}
	return true;
}

/* The log test_progs prints before a "#N name:FAIL" line: from the end of
 * the previous result line up to START, its last LOG_TAIL bytes.  It is a
 * failure's reason when no -J summary says more (a killed test_progs writes
 * none). */
#define LOG_TAIL 4000

static char *log_before(const char *out, size_t from, size_t start)
{
	size_t len;

	while (from < start && (out[from] == '\n' || out[from] == ' '))
		from++;
	while (start > from && (out[start - 1] == '\n' || out[start - 1] == ' '))
		start--;
	if (start - from > LOG_TAIL)
		from = start - LOG_TAIL;
	len = start - from;
	return len ? strndup(out + from, len) : NULL;
}

/* A test that passes although one of its subtests failed meant that failure
 * (prog_tests_framework checks test__fail() so): test_progs counts the test
 * as passed and exits 0, and so do we, saying why. */
static void accept_intended_failures(struct ks_results *r, const char *test)
{
	size_t i, len = strlen(test);

	for (i = 0; i < r->n; i++) {
		struct ks_result *x = &r->v[i];

		if (!x->subtest || x->status != KS_FAIL || strncmp(x->name, test, len) ||
		    x->name[len] != '/' || strcmp(x->runner, "test_progs"))
			continue;
		x->status = KS_PASS;
		free(x->reason);
		x->reason = strdup("test_progs printed FAIL, but its test passed: the test "
				   "expects this subtest to fail");
	}
}

int ks_parse_test_progs(struct ks_results *r, const char *out)
{
	size_t pos = 0, log_from = 0;
	int tests = 0;

	while (out[pos]) {
		size_t start = pos, len = strcspn(out + pos, "\n");
		char *line = strndup(out + start, len), *name, *log;
		struct ks_result *seen;
		const char *note;
		enum ks_status status;
		bool subtest;

		pos += len + (out[pos + len] == '\n');
		if (!parse_progs_line(line, &name, &subtest, &status, &note)) {
			free(line);
			continue;
		}
		log = status == KS_FAIL ? log_before(out, log_from, start) : NULL;
		log_from = pos;
		/* Some tests name two subtests alike (sock_xattr's read_sock_xattr):
		 * one entry, failed if either failed. */
		seen = ks_find(r, "test_progs", name);
		if (seen) {
			if (status == KS_FAIL) {
				seen->status = KS_FAIL;
				free(seen->reason);
				seen->reason = log ? utf8_copy(log) : NULL;
			}
		} else {
			ks_add(r, "test_progs", name, subtest, status, log ?: note);
			tests += !subtest;
		}
		if (!subtest && status == KS_PASS)
			accept_intended_failures(r, name);
		free(log);
		free(line);
	}
	return tests;
}

void ks_attach_line_times(struct ks_results *r, json_object *line_times)
{
	long long prev_ms = 0;

	for (size_t i = 0; line_times && i < json_object_array_length(line_times); i++) {
		json_object *pair = json_object_array_get_idx(line_times, i);
		char *line = strdup(json_object_get_string(json_object_array_get_idx(pair, 0)) ?: "");
		long long ms = json_object_get_int64(json_object_array_get_idx(pair, 1));
		const char *note;
		enum ks_status status;
		struct ks_result *x;
		bool subtest;
		char *name;

		if (line && parse_progs_line(line, &name, &subtest, &status, &note) && !subtest &&
		    ms >= prev_ms) {
			x = ks_find(r, "test_progs", name);
			if (x)
				x->duration_s = (ms - prev_ms) / 1000.0;
			prev_ms = ms;
		}
		free(line);
	}
}

/* test_verifier: "#12/u desc OK", "#12/p desc FAIL", "#12/p desc SKIP (...)";
 * a failure's explanation follows on the next lines. */
int ks_parse_test_verifier(struct ks_results *r, const char *out)
{
	char *copy = strdup(out), *line, *save = NULL, *end, *skip, *note;
	char name[600];
	int found = 0;

	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		enum ks_status status;

		if (line[0] != '#' || line[1] < '0' || line[1] > '9' || !strchr(line, '/'))
			continue;
		end = line + strlen(line);
		skip = strstr(line, " SKIP");
		if (end - line > 3 && !strcmp(end - 3, " OK")) {
			status = KS_PASS;
			end[-3] = '\0';
		} else if (end - line > 5 && !strcmp(end - 5, " FAIL")) {
			status = KS_FAIL;
			end[-5] = '\0';
		} else if (skip) {
			status = KS_SKIP;
			*skip = '\0';
		} else {
			continue;
		}
		/* "desc Did not run the program (not supported) OK": loaded
		 * and checked, not run; the note is not part of the name. */
		note = strstr(line, " Did not run the program (");
		if (note)
			*note++ = '\0';
		snprintf(name, sizeof(name), "test_verifier/%s", line + 1);
		ks_add(r, "test_verifier", name, true, status,
		       status == KS_SKIP ? trim(skip + 5) : note);
		found++;
	}
	free(copy);
	return found;
}

/* The summary's message is the test's own log: it replaces the log taken
 * from the output for a failure, and is the only reason of anything else. */
static void attach_message(struct ks_result *x, const char *msg)
{
	if (!x || !msg || !*msg || (x->reason && x->status != KS_FAIL))
		return;
	free(x->reason);
	x->reason = utf8_copy(msg);
}

void ks_attach_test_progs_json(struct ks_results *r, json_object *summary)
{
	json_object *results, *test, *subtests, *sub, *v;
	char name[1024];
	size_t i, j;

	if (!summary || !json_object_object_get_ex(summary, "results", &results))
		return;
	for (i = 0; i < json_object_array_length(results); i++) {
		const char *tname, *msg;
		struct ks_result *x;

		test = json_object_array_get_idx(results, i);
		if (!json_object_object_get_ex(test, "name", &v))
			continue;
		tname = json_object_get_string(v);
		msg = json_object_object_get_ex(test, "message", &v) ? json_object_get_string(v) : "";
		x = ks_find(r, "test_progs", tname);
		attach_message(x, msg);
		if (!json_object_object_get_ex(test, "subtests", &subtests))
			continue;
		for (j = 0; j < json_object_array_length(subtests); j++) {
			sub = json_object_array_get_idx(subtests, j);
			if (!json_object_object_get_ex(sub, "name", &v))
				continue;
			snprintf(name, sizeof(name), "%s/%s", tname, json_object_get_string(v));
			msg = json_object_object_get_ex(sub, "message", &v) ? json_object_get_string(v) : "";
			x = ks_find(r, "test_progs", name);
			attach_message(x, msg);
		}
	}
}

/* ---- reports ------------------------------------------------------------- */

void ks_count(const struct ks_results *r, bool subtests, int counts[KS_NR_STATUS])
{
	size_t i;

	memset(counts, 0, KS_NR_STATUS * sizeof(int));
	for (i = 0; i < r->n; i++)
		if (r->v[i].subtest == subtests)
			counts[r->v[i].status]++;
}

static const char *subtest_part(const char *name)
{
	const char *slash = strchr(name, '/');

	return slash ? slash + 1 : name;
}

static bool is_subtest_of(const struct ks_result *sub, const struct ks_result *test)
{
	size_t len = strlen(test->name);

	return sub->subtest && !strcmp(sub->runner, test->runner) &&
	       !strncmp(sub->name, test->name, len) && sub->name[len] == '/';
}

/* The first line of a reason, for one-line directives. */
static void print_first_line(FILE *out, const char *text)
{
	const char *nl = strchr(text, '\n');

	while (nl && nl == text) {	/* skip leading empty lines */
		text++;
		nl = strchr(text, '\n');
	}
	/* Reasons quote the guest's output: see term.h. */
	term_write(out, text, nl ? (size_t)(nl - text) : strlen(text), 0);
}

static void print_ktap_line(FILE *out, const char *indent, int number, const struct ks_result *x,
			    const char *name)
{
	bool ok = x->status == KS_PASS || x->status == KS_SKIP || x->status == KS_DENIED;

	fprintf(out, "%s%s %d ", indent, ok ? "ok" : "not ok", number);
	term_puts(out, name);
	if (x->status == KS_SKIP || x->status == KS_DENIED) {
		fprintf(out, " # SKIP%s", x->status == KS_DENIED ? " denied: " : x->reason ? " " : "");
		if (x->reason)
			print_first_line(out, x->reason);
	} else if (x->status == KS_ERROR) {
		fprintf(out, " # ERROR ");
		if (x->reason)
			print_first_line(out, x->reason);
	}
	fputc('\n', out);
}

static int runner_rank(const char *runner)
{
	return !strcmp(runner, "test_progs") ? 0 : !strcmp(runner, "test_verifier") ? 1 : 2;
}

/* Runners in a fixed order, tests by name (test_progs' own order), subtests
 * after their test in the order they ran. */
static int compare_results(const void *a, const void *b)
{
	const struct ks_result *x = a, *y = b;
	size_t lx = strcspn(x->name, "/"), ly = strcspn(y->name, "/");
	int c = runner_rank(x->runner) - runner_rank(y->runner);

	if (!c)		/* the test part of the names */
		c = memcmp(x->name, y->name, lx < ly ? lx : ly);
	if (!c && lx != ly)
		c = lx < ly ? -1 : 1;
	if (!c)
		c = (int)x->subtest - (int)y->subtest;
	if (!c)
		c = x->order < y->order ? -1 : x->order > y->order;
	return c;
}

void ks_sort(struct ks_results *r)
{
	qsort(r->v, r->n, sizeof(*r->v), compare_results);
}

void ks_print_ktap(FILE *out, const struct ks_results *r)
{
	size_t i, j, tests = 0;
	int number = 0;

	for (i = 0; i < r->n; i++)
		tests += !r->v[i].subtest;
	fprintf(out, "KTAP version 1\n1..%zu\n", tests);
	for (i = 0; i < r->n; i++) {
		const struct ks_result *t = &r->v[i];
		size_t subs = 0;
		int sub_number = 0;

		if (t->subtest)
			continue;
		for (j = 0; j < r->n; j++)
			subs += is_subtest_of(&r->v[j], t);
		if (subs) {
			fputs("    # Subtest: ", out);
			term_puts(out, t->name);
			fprintf(out, "\n    KTAP version 1\n    1..%zu\n", subs);
			for (j = 0; j < r->n; j++)
				if (is_subtest_of(&r->v[j], t))
					print_ktap_line(out, "    ", ++sub_number, &r->v[j],
							subtest_part(r->v[j].name));
		}
		print_ktap_line(out, "", ++number, t, t->name);
	}
}

static void print_counts(FILE *out, const char *what, const int counts[KS_NR_STATUS])
{
	int s;

	fprintf(out, "# %-9s", what);
	for (s = 0; s < KS_NR_STATUS; s++)
		fprintf(out, " %s %d%s", ks_status_name[s], counts[s], s + 1 < KS_NR_STATUS ? "," : "");
	fputc('\n', out);
}

void ks_print_summary(FILE *out, const struct ks_results *r, double wall_s, int jobs)
{
	int counts[KS_NR_STATUS];
	size_t i;

	fprintf(out, "# Not passed:\n");
	for (i = 0; i < r->n; i++) {
		const struct ks_result *x = &r->v[i];

		if (x->status != KS_FAIL && x->status != KS_ERROR)
			continue;
		fprintf(out, "#   %-6s ", ks_status_name[x->status]);
		term_puts(out, x->name);
		if (x->reason && x->status == KS_ERROR) {
			fprintf(out, ": ");
			print_first_line(out, x->reason);
		}
		fputc('\n', out);
	}
	for (i = 0; i < r->n; i++) {
		const struct ks_result *x = &r->v[i];

		/* A death the result below would hide. */
		if (x->first_status != KS_ERROR || x->status == KS_ERROR || x->status == KS_FAIL)
			continue;
		fprintf(out, "# Its guest died with %u CPU(s), then %s with %u: ", x->first_cpus,
			ks_status_name[x->status], x->cpus);
		term_puts(out, x->name);
		if (x->first_reason) {
			fprintf(out, ": ");
			print_first_line(out, x->first_reason);
		}
		fputc('\n', out);
	}
	ks_count(r, false, counts);
	print_counts(out, "tests:", counts);
	ks_count(r, true, counts);
	print_counts(out, "subtests:", counts);
	fprintf(out, "# wall time %.1f s with %d UML guest(s) in parallel\n", wall_s, jobs);
}

json_object *ks_results_json(const struct ks_results *r, double wall_s, int jobs)
{
	json_object *doc = json_object_new_object(), *list = json_object_new_array(), *c;
	int counts[KS_NR_STATUS], s, sub;
	size_t i;

	json_object_object_add(doc, "schema", json_object_new_string("bpfuml-kselftest/1"));
	for (sub = 0; sub < 2; sub++) {
		c = json_object_new_object();
		ks_count(r, sub, counts);
		for (s = 0; s < KS_NR_STATUS; s++)
			json_object_object_add(c, ks_status_name[s], json_object_new_int(counts[s]));
		json_object_object_add(doc, sub ? "subtests" : "tests", c);
	}
	json_object_object_add(doc, "wall_s", json_object_new_double(wall_s));
	json_object_object_add(doc, "jobs", json_object_new_int(jobs));
	for (i = 0; i < r->n; i++) {
		json_object *x = json_object_new_object();

		json_object_object_add(x, "runner", json_object_new_string(r->v[i].runner));
		json_object_object_add(x, "name", json_object_new_string(r->v[i].name));
		json_object_object_add(x, "subtest", json_object_new_boolean(r->v[i].subtest));
		json_object_object_add(x, "status", json_object_new_string(ks_status_name[r->v[i].status]));
		if (r->v[i].reason)
			json_object_object_add(x, "reason", json_object_new_string(r->v[i].reason));
		if (r->v[i].duration_s >= 0) {
			char text[32];

			snprintf(text, sizeof(text), "%.3f", r->v[i].duration_s);
			json_object_object_add(x, "duration_s", json_object_new_double_s(r->v[i].duration_s, text));
		}
		if (r->v[i].cpus)
			json_object_object_add(x, "cpus", json_object_new_int(r->v[i].cpus));
		if (r->v[i].first_status < KS_NR_STATUS) {
			json_object *first = json_object_new_object();

			json_object_object_add(first, "status",
					       json_object_new_string(ks_status_name[r->v[i].first_status]));
			json_object_object_add(first, "cpus", json_object_new_int(r->v[i].first_cpus));
			if (r->v[i].first_reason)
				json_object_object_add(first, "reason", json_object_new_string(r->v[i].first_reason));
			json_object_object_add(x, "first_run", first);
		}
		json_object_array_add(list, x);
	}
	json_object_object_add(doc, "results", list);
	return doc;
}
