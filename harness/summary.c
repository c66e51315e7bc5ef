// SPDX-License-Identifier: GPL-2.0
/* summary.c — a Markdown summary of a run for CI pages (`--summary FILE`,
 * e.g. GitHub's $GITHUB_STEP_SUMMARY): counts, a table of what was judged,
 * and for each failure the last lines of its log.  The file is appended
 * to, as CI steps share it.
 *
 * Every name and log line comes from an object or a guest: in table cells
 * '|', '<', '>', '&', '`', '*', '_', '[' and ']' are escaped and control
 * characters dropped; logs go into a fence longer than any run of
 * backticks in them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpfuml.h"
#include "diag.h"
#include "kselftest.h"
#include "summary.h"
#include "verdict.h"

/* Lines of a failure's log shown, from its end. */
#define SUMMARY_LOG_LINES 25
#define FENCE "````````````````"
#define FENCE_MAX 16

/* TEXT in a table cell (MARKDOWN: Markdown's specials escaped too) or in
 * HTML, as a <summary> is. */
static void md_text(FILE *out, const char *text, bool markdown)
{
	for (const unsigned char *p = (const unsigned char *)(text ?: ""); *p; p++) {
		if (*p == '\n' || *p == '\t')
			fputc(' ', out);
		else if (*p < 0x20 || *p == 0x7f)
			continue;
		else if (*p == '<')
			fputs("&lt;", out);
		else if (*p == '>')
			fputs("&gt;", out);
		else if (*p == '&')
			fputs("&amp;", out);
		else if (markdown && strchr("|`*_[]\\", *p))
			fprintf(out, "\\%c", *p);
		else
			fputc(*p, out);
	}
}

static void md_cell(FILE *out, const char *text)
{
	md_text(out, text, true);
}

/* The last SUMMARY_LOG_LINES lines of TEXT in a fenced block, folded away
 * under TITLE. */
static void md_log(FILE *out, const char *title, const char *text)
{
	const char *start = text + strlen(text), *p;
	size_t run = 0, longest = 0;
	int lines = 0, fence;

	while (start > text && (start[-1] == '\n' || start[-1] == ' '))
		start--;
	for (p = start; p > text; p--)
		if (p[-1] == '\n' && ++lines == SUMMARY_LOG_LINES)
			break;
	for (const char *q = p; q < start; q++) {
		run = *q == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	/* A fence longer than any run inside; past FENCE_MAX, backticks in the
	 * log become quotes. */
	fence = longest < 3 ? 3 : longest + 1 > FENCE_MAX ? FENCE_MAX : longest + 1;
	fputs("<details><summary>", out);
	md_text(out, title, false);
	fprintf(out, "</summary>\n\n%.*s\n", fence, FENCE);
	for (const unsigned char *q = (const unsigned char *)p; q < (const unsigned char *)start; q++)
		if (*q == '`' && longest >= FENCE_MAX)
			fputc('\'', out);
		else if (*q >= 0x20 || *q == '\n' || *q == '\t')
			fputc(*q, out);
	fprintf(out, "\n%.*s\n\n</details>\n\n", fence, FENCE);
}

/* ---- verify ---------------------------------------------------------------- */

static const char *verdict_mark(const struct program_verdict *v)
{
	return v->accepted ? "✅" : v->needs_jit ? "⚠️" : "❌";
}

int summary_verify(const char *path, struct session *s, const struct summary_object *objects, size_t n)
{
	size_t i, j, k, programs = 0, not_accepted = 0;
	struct program_verdict *verdicts;
	char reason[1024], title[512];
	FILE *out;

	for (i = 0; i < n; i++)
		programs += objects[i].programs ? json_object_array_length(objects[i].programs) : 0;
	/* Each program judged once (its log parsed), for its row and its log. */
	verdicts = calloc(programs ?: 1, sizeof(*verdicts));
	out = verdicts ? fopen(path, "a") : NULL;
	if (!out) {
		free(verdicts);
		return -1;
	}
	for (i = 0, k = 0; i < n; i++)
		for (j = 0; objects[i].programs && j < json_object_array_length(objects[i].programs); j++, k++) {
			program_verdict_init(&verdicts[k], s, json_object_array_get_idx(objects[i].programs, j));
			not_accepted += !verdicts[k].accepted;
		}
	fprintf(out, "### bpfuml verify: %zu program(s) in %zu object(s), %zu accepted, %zu not accepted\n\n",
		programs, n, programs - not_accepted, not_accepted);
	fputs("| | Object | Program | Verdict | Insns | Why |\n|---|---|---|---|---|---|\n", out);
	for (i = 0, k = 0; i < n; i++) {
		if (objects[i].error) {
			fputs("| ❌ | ", out);
			md_cell(out, objects[i].file);
			fputs(" | | could not be opened | | ", out);
			md_cell(out, objects[i].error);
			fputs(" |\n", out);
		}
		for (j = 0; objects[i].programs && j < json_object_array_length(objects[i].programs); j++, k++) {
			const struct program_verdict *v = &verdicts[k];

			fprintf(out, "| %s | ", verdict_mark(v));
			md_cell(out, objects[i].file);
			fputs(" | ", out);
			md_cell(out, v->name);
			fputs(" | ", out);
			md_cell(out, v->verdict);
			fputs(" | ", out);
			if (v->log && v->log->stats.present)
				fprintf(out, "%ld", v->log->stats.insns_processed);
			fputs(" | ", out);
			if (!v->accepted) {
				program_verdict_reason(v, reason, sizeof(reason));
				md_cell(out, reason);
			}
			fputs(" |\n", out);
		}
	}
	fputc('\n', out);
	for (k = 0; k < programs; k++) {
		if (!verdicts[k].accepted && verdicts[k].log_text && *verdicts[k].log_text) {
			snprintf(title, sizeof(title), "%s: %s, the end of its verifier log", verdicts[k].name,
				 verdicts[k].verdict);
			md_log(out, title, verdicts[k].log_text);
		}
		program_verdict_free(&verdicts[k]);
	}
	free(verdicts);
	return fclose(out) ? -1 : 0;
}

/* ---- kselftest ------------------------------------------------------------- */

int summary_kselftest(const char *path, const struct ks_results *r, double wall_s)
{
	int tests[KS_NR_STATUS], subtests[KS_NR_STATUS], shown = 0;
	FILE *out = fopen(path, "a");
	size_t i;

	if (!out)
		return -1;
	ks_count(r, false, tests);
	ks_count(r, true, subtests);
	fprintf(out, "### bpfuml kselftest: %s in %.1f s\n\n",
		tests[KS_FAIL] || subtests[KS_FAIL] || tests[KS_ERROR] || subtests[KS_ERROR] ?
		"not passed" : "passed", wall_s);
	fputs("| | passed | failed | skipped | denied | error |\n|---|---|---|---|---|---|\n", out);
	fprintf(out, "| tests | %d | %d | %d | %d | %d |\n", tests[KS_PASS], tests[KS_FAIL], tests[KS_SKIP],
		tests[KS_DENIED], tests[KS_ERROR]);
	fprintf(out, "| subtests | %d | %d | %d | %d | %d |\n\n", subtests[KS_PASS], subtests[KS_FAIL],
		subtests[KS_SKIP], subtests[KS_DENIED], subtests[KS_ERROR]);
	for (i = 0; i < r->n; i++) {
		const struct ks_result *x = &r->v[i];
		char title[700];

		if (x->status != KS_FAIL && x->status != KS_ERROR)
			continue;
		if (!shown++)
			fputs("Not passed:\n\n", out);
		snprintf(title, sizeof(title), "%s %s (%s)", x->status == KS_FAIL ? "❌" : "💥", x->name,
			 ks_status_name[x->status]);
		md_log(out, title, x->reason ?: "(no log)");
	}
	return fclose(out) ? -1 : 0;
}
