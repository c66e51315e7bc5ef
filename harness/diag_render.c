// SPDX-License-Identifier: GPL-2.0-only
/*
 * Renderers for parsed verifier logs (diag.h): the bpfuml-diag/1 JSON
 * document, the kernel's own human layout (optionally coloured), gcc-style
 * one-line diagnostics, GitHub workflow-command annotations and SARIF
 * 2.1.0.  JSON is built and serialized by json-c; nothing here formats JSON
 * by hand.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "diag.h"
#include "term.h"

/* kernel/bpf/diagnostics.c: BPF_DIAG_TEXT_WIDTH */
#define DIAG_TEXT_WIDTH 100

/* ---- human -------------------------------------------------------------- */

/*
 * Every string that came from the log goes out through term.h: the log is
 * the object's and the kernel's text, not ours.  Only the colours below are
 * our own escape sequences.
 */

struct colors {
	const char *reset, *bold, *err, *note, *dim, *marker;
};

static const struct colors no_colors = { "", "", "", "", "", "" };
static const struct colors ansi_colors = {
	.reset = "\033[0m",
	.bold = "\033[1m",
	.err = "\033[1;31m",
	.note = "\033[36m",
	.dim = "\033[2m",
	.marker = "\033[1;35m",
};

/*
 * The widest number field the kernel prints (an int's digits); a lane that
 * claims more is clamped, so that a crafted log cannot make every line of
 * the output megabytes wide.
 */
#define MAX_NUM_WIDTH 16

static int num_width(int width)
{
	return width < 0 ? 0 : width > MAX_NUM_WIDTH ? MAX_NUM_WIDTH : width;
}

/*
 * diag_print_wrapped_prefixed(), with the prefixes' visible width passed in
 * because they may carry colour escapes.  @on/@off wrap each text piece.
 */
static void print_wrapped(FILE *out, const char *first_prefix, const char *next_prefix,
			  int prefix_width, const char *text, const char *on, const char *off)
{
	const char *prefix = first_prefix;
	int text_width = DIAG_TEXT_WIDTH - prefix_width;

	if (text_width < 1)
		text_width = 1;
	while (*text) {
		const char *line = text;
		int len = 0, last_space = -1;

		while (line[len] && line[len] != '\n' && len < text_width) {
			if (line[len] == ' ')
				last_space = len;
			len++;
		}
		if (line[len] && line[len] != '\n' && line[len] != ' ' && last_space > 0)
			len = last_space;

		fprintf(out, "%s%s", prefix, on);
		term_write(out, line, len, 0);
		fprintf(out, "%s\n", off);

		text = line + len;
		while (*text == ' ')
			text++;
		if (*text == '\n')
			text++;
		prefix = next_prefix;
	}
}

static const char *kind_color(const struct diag_site *s, const struct colors *c)
{
	return s->kind_id == DIAG_EVENT_ERROR ? c->err : c->note;
}

/* diag_print_source_annotation(); @width is 0 when there is no source lane. */
static void print_annotation(FILE *out, const struct diag_site *s, int width,
			     const struct colors *c)
{
	char first[256], next[256], *text;
	int pad = num_width(width) + 4, indent = s->caret_column, pw;
	size_t len;

	if (indent < 0)
		indent = 0;
	if (indent > 100)
		indent = 100;
	snprintf(first, sizeof(first), "  %*s | %*s%s^-- %s", pad, "", indent, "",
		 kind_color(s, c), c->reset);
	snprintf(next, sizeof(next), "  %*s | %*s    ", pad, "", indent, "");
	pw = 2 + pad + 3 + indent + 4;

	len = strlen(s->kind) + 2 + strlen(s->message) + 1;
	text = malloc(len);
	if (!text)
		return;
	snprintf(text, len, "%s: %s", s->kind, s->message);
	print_wrapped(out, first, next, pw, text, kind_color(s, c), c->reset);
	free(text);
}

/* "  >>> N | text" or "      N | text", the number right-aligned. */
static void print_lane(FILE *out, bool marked, int width, int num, const char *text,
		       const struct colors *c)
{
	fprintf(out, "  %s%s%s%s%*d%s | ", marked ? c->marker : "", marked ? ">>> " : "    ",
		marked ? c->reset : "", c->dim, num_width(width), num, c->reset);
	term_puts(out, text);
	fputc('\n', out);
}

static void print_site(FILE *out, const struct diag_site *s, const struct colors *c)
{
	size_t i;

	if (s->file && s->function) {
		fprintf(out, "  %s", c->bold);
		term_puts(out, s->function);
		fprintf(out, "%s @ ", c->reset);
		term_puts(out, s->file);
		fprintf(out, ":%d:%d\n", s->line, s->column);
	} else if (s->file) {
		fputs("  ", out);
		term_puts(out, s->file);
		fprintf(out, ":%d:%d\n", s->line, s->column);
	} else {
		fprintf(out, "  insn %d\n", s->insn);
	}

	if (s->has_source_context) {
		fprintf(out, "  Source context:\n");
		for (i = 0; i < s->n_src; i++) {
			const struct diag_src_line *l = &s->src[i];

			if (l->line <= 0) {
				fprintf(out, "  \n");
				continue;
			}
			print_lane(out, l->marked, s->src_width, l->line, l->text, c);
			if (l->marked)
				print_annotation(out, s, s->src_width, c);
		}
	} else if (s->kind[0]) {
		print_annotation(out, s, 0, c);
	}

	if (s->has_insn_context) {
		fprintf(out, "  Instruction context:\n");
		for (i = 0; i < s->n_insns; i++)
			print_lane(out, s->insns[i].marked, s->insn_width, s->insns[i].idx,
				   s->insns[i].text, c);
	}
}

static void print_section_title(FILE *out, const char *title, const struct colors *c)
{
	fprintf(out, "\n%s", c->bold);
	term_puts(out, title);
	fprintf(out, ":%s\n", c->reset);
}

static void print_text(FILE *out, const char *text)
{
	print_wrapped(out, "  ", "  ", 2, text, "", "");
}

/*
 * The summaries printed before events[before].  The parser records them in
 * order, so one cursor walks them once for the whole path (@k).
 */
static void print_omissions(FILE *out, const struct diag_report *r, size_t before, size_t *k,
			    bool *first)
{
	for (; *k < r->n_omitted && r->omitted[*k].before <= before; (*k)++) {
		if (!*first)
			fputc('\n', out);
		*first = false;
		fprintf(out, "  %llu intermediate causal-history events omitted\n",
			r->omitted[*k].count);
	}
}

static void print_report(FILE *out, const struct diag_report *r, const struct colors *c)
{
	size_t i, j;

	fprintf(out, "\n%sVerification failed:%s %s", c->err, c->reset, c->bold);
	term_puts(out, r->category);
	fputs(c->reset, out);
	if (r->problem[0]) {
		fputs(": ", out);
		term_puts(out, r->problem);
	}
	fputc('\n', out);

	if (r->reason) {
		print_section_title(out, "Reason", c);
		print_text(out, r->reason);
	}
	if (r->has_at) {
		print_section_title(out, "At", c);
		print_site(out, &r->at, c);
	}
	if (r->has_causal_path) {
		bool first = true;
		size_t k = 0;

		print_section_title(out, "Causal path", c);
		for (i = 0; i < r->n_events; i++) {
			print_omissions(out, r, i, &k, &first);
			if (!first)
				fputc('\n', out);
			first = false;
			print_site(out, &r->events[i], c);
		}
		print_omissions(out, r, r->n_events, &k, &first);
		if (r->no_retained_events)
			fprintf(out, "  no retained diagnostic events on this path\n");
		if (r->not_retained)
			fprintf(out, "  %llu older causal-history event%s not retained because "
				"diagnostic event storage reached capacity\n",
				r->not_retained, r->not_retained == 1 ? "" : "s");
	}
	for (i = 0; i < r->n_extra; i++) {
		const struct diag_section *sec = &r->extra[i];

		print_section_title(out, sec->title, c);
		if (!sec->n_sites) {
			for (j = 0; j < sec->n_lines; j++) {
				term_puts(out, sec->lines[j]);
				fputc('\n', out);
			}
			continue;
		}
		for (j = 0; j < sec->n_sites; j++) {
			if (j)
				fputc('\n', out);
			print_site(out, &sec->sites[j], c);
		}
	}
	if (r->suggestion) {
		print_section_title(out, "Suggestion", c);
		print_text(out, r->suggestion);
		if (r->complete)
			fputc('\n', out);
	}
}

void diag_print_human(FILE *out, const struct diag_log *log, bool color)
{
	const struct colors *c = color ? &ansi_colors : &no_colors;
	size_t i;

	if (!log)
		return;
	for (i = 0; i < log->n_reports; i++)
		print_report(out, &log->reports[i], c);

	/*
	 * No report: the same shape from what the trace tells, so a reader
	 * sees one layout whichever kernel produced the log.
	 */
	if (!log->n_reports && log->legacy_error) {
		fprintf(out, "\n%sVerification failed:%s ", c->err, c->reset);
		term_puts(out, log->legacy_error);
		fputc('\n', out);
		if (log->linfo_file || log->failing_insn >= 0)
			print_section_title(out, "At", c);
		if (log->linfo_file) {
			int w = snprintf(NULL, 0, "%d", log->linfo_line);

			fputs("  ", out);
			term_puts(out, log->linfo_file);
			fprintf(out, ":%d\n", log->linfo_line);
			fprintf(out, "  Source context:\n");
			print_lane(out, true, 0, log->linfo_line, log->linfo_text, c);
			fprintf(out, "  %*s | %s^-- error: ", w + 4, "", c->err);
			term_puts(out, log->legacy_error);
			fprintf(out, "%s\n", c->reset);
		}
		if (log->failing_insn >= 0) {
			fprintf(out, "  Instruction context:\n");
			print_lane(out, true, 0, log->failing_insn,
				   log->failing_insn_text ? log->failing_insn_text : "", c);
		}
	}
	if (log->truncated && (log->n_reports || log->legacy_error))
		fprintf(out, "\n%snote:%s the verifier log is truncated (%s%s%s)\n", c->note,
			c->reset, log->truncation & DIAG_TRUNC_NO_STATS ? "no statistics line" : "",
			(log->truncation & DIAG_TRUNC_NO_STATS) &&
					(log->truncation & DIAG_TRUNC_REPORT) ? ", " : "",
			log->truncation & DIAG_TRUNC_REPORT ? "incomplete report" : "");
}

/* ---- gcc style ---------------------------------------------------------- */

static bool exists(const char *path)
{
	return path && *path && access(path, F_OK) == 0;
}

const char *diag_resolve_path(const char *file, const char *fallback_file, char *buf,
			      size_t size)
{
	const char *base, *slash;

	if (!file || exists(file))
		return file;
	if (fallback_file && size) {
		base = strrchr(file, '/');
		base = base ? base + 1 : file;
		slash = strrchr(fallback_file, '/');
		if (slash) {
			int n = snprintf(buf, size, "%.*s/%s", (int)(slash - fallback_file),
					 fallback_file, base);

			if (n > 0 && (size_t)n < size && exists(buf))
				return buf;
		} else if (exists(base)) {
			return base;
		}
	}
	return file;
}

/*
 * Write "path:line:col", "path:line" (column 0 is "unknown") or a fallback
 * name, then @what (": error: ", ": note: ").
 */
static void site_loc(FILE *out, const char *file, int line, int column,
		     const char *fallback_file, const char *prog_name, const char *what)
{
	char pbuf[4096];

	if (!file) {
		term_puts(out, fallback_file ? fallback_file : prog_name ? prog_name : "<bpf>");
	} else {
		term_puts(out, diag_resolve_path(file, fallback_file, pbuf, sizeof(pbuf)));
		if (line > 0 && column > 0)
			fprintf(out, ":%d:%d", line, column);
		else if (line > 0)
			fprintf(out, ":%d", line);
	}
	fputs(what, out);
}

static void gcc_site_loc(FILE *out, const struct diag_site *s, const char *fallback_file,
			 const char *prog_name, const char *what)
{
	site_loc(out, s->file, s->line, s->column, fallback_file, prog_name, what);
}

/* The report's own location, for its error line and summary notes. */
static void report_loc(FILE *out, const struct diag_report *r, const char *fallback_file,
		       const char *prog_name, const char *what)
{
	if (r->has_at)
		gcc_site_loc(out, &r->at, fallback_file, prog_name, what);
	else
		site_loc(out, NULL, 0, 0, fallback_file, prog_name, what);
}

void diag_gcc_prog_suffix(FILE *out, const char *prog_name)
{
	if (prog_name) {
		fputs(" [prog ", out);
		term_puts(out, prog_name);
		fputc(']', out);
	}
	fputc('\n', out);
}

/* "<kind>: <message>" of a site, then the end of the line. */
static void gcc_site_note(FILE *out, const struct diag_site *s, const char *fallback_file,
			  const char *prog_name)
{
	gcc_site_loc(out, s, fallback_file, prog_name, ": note: ");
	term_puts(out, s->kind);
	fputs(": ", out);
	term_puts(out, s->message);
	fputc('\n', out);
}

void diag_print_gcc(FILE *out, const struct diag_log *log, const char *prog_name,
		    const char *fallback_file)
{
	size_t i, j, k;

	if (!log)
		return;
	for (i = 0; i < log->n_reports; i++) {
		const struct diag_report *r = &log->reports[i];

		report_loc(out, r, fallback_file, prog_name, ": error: ");
		term_puts(out, r->category);
		if (r->problem[0]) {
			fputs(": ", out);
			term_puts(out, r->problem);
		}
		diag_gcc_prog_suffix(out, prog_name);

		/* Notes in time order: events lost to the ring buffer came first. */
		if (r->not_retained) {
			report_loc(out, r, fallback_file, prog_name, ": note: ");
			fprintf(out, "%llu older causal-history event%s not retained\n",
				r->not_retained, r->not_retained == 1 ? "" : "s");
		}
		for (j = 0, k = 0; j <= r->n_events; j++) {
			/* Summaries are in order (see print_omissions()). */
			for (; k < r->n_omitted && r->omitted[k].before <= j; k++) {
				report_loc(out, r, fallback_file, prog_name, ": note: ");
				fprintf(out, "%llu intermediate causal-history events omitted\n",
					r->omitted[k].count);
			}
			if (j == r->n_events)
				break;
			gcc_site_note(out, &r->events[j], fallback_file, prog_name);
		}
		for (j = 0; j < r->n_extra; j++)
			for (k = 0; k < r->extra[j].n_sites; k++)
				gcc_site_note(out, &r->extra[j].sites[k], fallback_file, prog_name);
		if (r->suggestion && r->suggestion[0]) {
			report_loc(out, r, fallback_file, prog_name, ": note: suggestion: ");
			term_puts(out, r->suggestion);
			fputc('\n', out);
		}
	}
	if (!log->n_reports && log->legacy_error) {
		site_loc(out, log->linfo_file, log->linfo_line, 0, fallback_file, prog_name,
			 ": error: ");
		term_puts(out, log->legacy_error);
		diag_gcc_prog_suffix(out, prog_name);
	}
}

/* ---- GitHub Actions workflow commands ------------------------------------ */

/*
 * "::error file=F,line=L,col=C,title=T::MESSAGE", one line per finding: the
 * runner turns each into an annotation on that line of the diff.  Text goes
 * through term.c first (a CI log is shown on a terminal-like viewer), then is
 * escaped as @actions/core does: % and newlines in the message, and also :
 * and , in property values, so that nothing from the object can end the
 * line or start another workflow command.
 */
static void gh_escaped(FILE *out, const char *text, bool property)
{
	char *safe = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&safe, &len);
	const char *p;

	if (!m)
		return;
	term_write(m, text ? text : "", text ? strlen(text) : 0, TERM_KEEP_NEWLINES);
	fclose(m);
	for (p = safe; p && *p; p++) {
		if (*p == '%')
			fputs("%25", out);
		else if (*p == '\n')
			fputs("%0A", out);
		else if (property && *p == ':')
			fputs("%3A", out);
		else if (property && *p == ',')
			fputs("%2C", out);
		else
			fputc(*p, out);
	}
	free(safe);
}

void diag_github_annotation(FILE *out, const char *file, int line, int column,
			    const char *title, const char *prog_name, const char *message)
{
	fputs("::error ", out);
	if (file) {
		fputs("file=", out);
		gh_escaped(out, file, true);
		if (line > 0)
			fprintf(out, ",line=%d", line);
		if (line > 0 && column > 0)
			fprintf(out, ",col=%d", column);
		fputc(',', out);
	}
	fputs("title=", out);
	gh_escaped(out, title, true);
	if (prog_name) {
		fputs(" [prog ", out);
		gh_escaped(out, prog_name, true);
		fputc(']', out);
	}
	fputs("::", out);
	gh_escaped(out, message, false);
	fputc('\n', out);
}

/* The message of a report: its problem, reason and suggestion. */
static char *gh_report_message(const struct diag_report *r)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	if (!m)
		return NULL;
	fputs(r->problem[0] ? r->problem : r->category, m);
	if (r->reason && r->reason[0])
		fprintf(m, "\nReason: %s", r->reason);
	if (r->suggestion && r->suggestion[0])
		fprintf(m, "\nSuggestion: %s", r->suggestion);
	fclose(m);
	return text;
}

void diag_print_github(FILE *out, const struct diag_log *log, const char *prog_name,
		       const char *fallback_file)
{
	char pbuf[4096];
	size_t i;

	if (!log)
		return;
	for (i = 0; i < log->n_reports; i++) {
		const struct diag_report *r = &log->reports[i];
		const struct diag_site *at = r->has_at && r->at.file ? &r->at : NULL;
		char *message = gh_report_message(r);

		diag_github_annotation(out, at ? diag_resolve_path(at->file, fallback_file, pbuf,
								   sizeof(pbuf)) : fallback_file,
				       at ? at->line : 0, at ? at->column : 0, r->category,
				       prog_name, message ? message : r->problem);
		free(message);
	}
	if (!log->n_reports && log->legacy_error)
		diag_github_annotation(out, log->linfo_file ?
				       diag_resolve_path(log->linfo_file, fallback_file, pbuf,
							 sizeof(pbuf)) : fallback_file,
				       log->linfo_line, 0, "Verifier error", prog_name,
				       log->legacy_error);
}

/* ---- JSON helpers ------------------------------------------------------- */

/*
 * json-c reports allocation failure by returning NULL, which object_add
 * would store as a JSON null; remember it so the caller can fail instead.
 */
struct jctx {
	bool oom;
};

static json_object *jnew(struct jctx *j, json_object *o)
{
	if (!o)
		j->oom = true;
	return o;
}

static json_object *jobj(struct jctx *j)
{
	return jnew(j, json_object_new_object());
}

static json_object *jarr(struct jctx *j)
{
	return jnew(j, json_object_new_array());
}

/* NULL strings become JSON null. */
static json_object *jstr(struct jctx *j, const char *s)
{
	return s ? jnew(j, json_object_new_string(s)) : NULL;
}

static json_object *jint(struct jctx *j, long long v)
{
	return jnew(j, json_object_new_int64(v));
}

static json_object *jbool(struct jctx *j, bool v)
{
	return jnew(j, json_object_new_boolean(v));
}

static void jadd(struct jctx *j, json_object *obj, const char *key, json_object *val)
{
	if (!obj) {
		json_object_put(val);
		return;
	}
	if (json_object_object_add(obj, key, val)) {
		j->oom = true;
		json_object_put(val);
	}
}

static void jpush(struct jctx *j, json_object *arr, json_object *val)
{
	if (!arr || !val) {
		json_object_put(val);
		if (!val)
			j->oom = true;
		return;
	}
	if (json_object_array_add(arr, val)) {
		j->oom = true;
		json_object_put(val);
	}
}

/* An integer that is -1 when unknown becomes null. */
static json_object *jopt_int(struct jctx *j, long long v)
{
	return v < 0 ? NULL : jint(j, v);
}

static json_object *jstr_lines(struct jctx *j, const char *const *lines, size_t n)
{
	json_object *a = jarr(j);
	size_t i;

	for (i = 0; i < n; i++)
		jpush(j, a, jstr(j, lines[i]));
	return a;
}

/* ---- bpfuml-diag/1 ------------------------------------------------------ */

static json_object *site_json(struct jctx *j, const struct diag_site *s)
{
	json_object *o = jobj(j), *loc = NULL, *a;
	size_t i;

	jadd(j, o, "kind", jstr(j, s->kind));
	jadd(j, o, "kind_id", jstr(j, diag_event_kind_id(s->kind_id)));
	jadd(j, o, "message", jstr(j, s->message));
	if (s->file) {
		loc = jobj(j);
		jadd(j, loc, "function", jstr(j, s->function));
		jadd(j, loc, "file", jstr(j, s->file));
		jadd(j, loc, "line", jint(j, s->line));
		jadd(j, loc, "column", jint(j, s->column));
	}
	jadd(j, o, "location", loc);
	jadd(j, o, "insn", jopt_int(j, s->insn));
	jadd(j, o, "caret_column", jint(j, s->caret_column));

	a = NULL;
	if (s->has_source_context) {
		a = jarr(j);
		for (i = 0; i < s->n_src; i++) {
			const struct diag_src_line *l = &s->src[i];
			json_object *e = jobj(j);

			jadd(j, e, "line", jint(j, l->line));
			jadd(j, e, "text", jstr(j, l->text));
			jadd(j, e, "marked", jbool(j, l->marked));
			jadd(j, e, "clipped", jbool(j, l->clipped));
			jadd(j, e, "caret", jstr(j, l->caret));
			jpush(j, a, e);
		}
	}
	jadd(j, o, "source_context", a);
	jadd(j, o, "source_line_width", jint(j, s->src_width));

	a = NULL;
	if (s->has_insn_context) {
		a = jarr(j);
		for (i = 0; i < s->n_insns; i++) {
			json_object *e = jobj(j);

			jadd(j, e, "index", jint(j, s->insns[i].idx));
			jadd(j, e, "text", jstr(j, s->insns[i].text));
			jadd(j, e, "marked", jbool(j, s->insns[i].marked));
			jpush(j, a, e);
		}
	}
	jadd(j, o, "instruction_context", a);
	jadd(j, o, "insn_index_width", jint(j, s->insn_width));
	return o;
}

static json_object *report_json(struct jctx *j, const struct diag_report *r)
{
	json_object *o = jobj(j), *cp = NULL, *a, *raw;
	size_t i, k;

	jadd(j, o, "category", jstr(j, r->category));
	jadd(j, o, "category_id", jstr(j, diag_category_id(r->category_id)));
	jadd(j, o, "problem", jstr(j, r->problem));
	jadd(j, o, "reason", jstr(j, r->reason));
	jadd(j, o, "reason_lines", jstr_lines(j, r->reason_lines, r->n_reason_lines));
	jadd(j, o, "at", r->has_at ? site_json(j, &r->at) : NULL);

	if (r->has_causal_path) {
		cp = jobj(j);
		a = jarr(j);
		for (i = 0; i < r->n_events; i++)
			jpush(j, a, site_json(j, &r->events[i]));
		jadd(j, cp, "events", a);
		a = jarr(j);
		for (i = 0; i < r->n_omitted; i++) {
			json_object *e = jobj(j);

			jadd(j, e, "count", jint(j, (long long)r->omitted[i].count));
			jadd(j, e, "before_event", jint(j, (long long)r->omitted[i].before));
			jpush(j, a, e);
		}
		jadd(j, cp, "omitted", a);
		jadd(j, cp, "not_retained", jint(j, (long long)r->not_retained));
		jadd(j, cp, "no_retained_events", jbool(j, r->no_retained_events));
	}
	jadd(j, o, "causal_path", cp);

	a = jarr(j);
	for (i = 0; i < r->n_extra; i++) {
		const struct diag_section *sec = &r->extra[i];
		json_object *e = jobj(j), *sites = jarr(j);

		jadd(j, e, "title", jstr(j, sec->title));
		for (k = 0; k < sec->n_sites; k++)
			jpush(j, sites, site_json(j, &sec->sites[k]));
		jadd(j, e, "sites", sites);
		jadd(j, e, "lines", jstr_lines(j, sec->lines, sec->n_lines));
		jpush(j, a, e);
	}
	jadd(j, o, "sections", a);

	jadd(j, o, "suggestion", jstr(j, r->suggestion));
	jadd(j, o, "suggestion_lines",
	     jstr_lines(j, r->suggestion_lines, r->n_suggestion_lines));
	jadd(j, o, "legacy_error", jstr(j, r->legacy_error));
	jadd(j, o, "complete", jbool(j, r->complete));
	raw = jobj(j);
	jadd(j, raw, "offset", jint(j, (long long)r->raw_off));
	jadd(j, raw, "length", jint(j, (long long)r->raw_len));
	jadd(j, o, "raw", raw);
	return o;
}

json_object *diag_to_json(const struct diag_log *log)
{
	struct jctx j = {};
	json_object *o, *a, *e;
	size_t i;

	if (!log)
		return NULL;
	o = jobj(&j);
	jadd(&j, o, "schema", jstr(&j, "bpfuml-diag/1"));
	jadd(&j, o, "has_report", jbool(&j, log->has_report));
	a = jarr(&j);
	for (i = 0; i < log->n_reports; i++)
		jpush(&j, a, report_json(&j, &log->reports[i]));
	jadd(&j, o, "reports", a);
	jadd(&j, o, "legacy_error", jstr(&j, log->legacy_error));

	e = NULL;
	if (log->failing_insn >= 0) {
		e = jobj(&j);
		jadd(&j, e, "index", jint(&j, log->failing_insn));
		jadd(&j, e, "text", jstr(&j, log->failing_insn_text));
	}
	jadd(&j, o, "failing_insn", e);

	e = NULL;
	if (log->linfo_file) {
		e = jobj(&j);
		jadd(&j, e, "text", jstr(&j, log->linfo_text));
		jadd(&j, e, "file", jstr(&j, log->linfo_file));
		jadd(&j, e, "line", jint(&j, log->linfo_line));
	}
	jadd(&j, o, "source_line", e);

	e = NULL;
	if (log->stats.present) {
		e = jobj(&j);
		jadd(&j, e, "insns_processed", jint(&j, log->stats.insns_processed));
		jadd(&j, e, "insn_limit", jint(&j, log->stats.insn_limit));
		jadd(&j, e, "max_states_per_insn", jint(&j, log->stats.max_states_per_insn));
		jadd(&j, e, "total_states", jint(&j, log->stats.total_states));
		jadd(&j, e, "peak_states", jint(&j, log->stats.peak_states));
		jadd(&j, e, "mark_read", jint(&j, log->stats.mark_read));
	}
	jadd(&j, o, "stats", e);

	jadd(&j, o, "truncated", jbool(&j, log->truncated));
	a = jarr(&j);
	if (log->truncation & DIAG_TRUNC_NO_STATS)
		jpush(&j, a, jstr(&j, "no_stats"));
	if (log->truncation & DIAG_TRUNC_REPORT)
		jpush(&j, a, jstr(&j, "incomplete_report"));
	jadd(&j, o, "truncation", a);
	jadd(&j, o, "lines", jint(&j, (long long)log->n_lines));

	if (j.oom) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* ---- SARIF 2.1.0 -------------------------------------------------------- */

/* RFC 3986: keep unreserved characters and '/', percent-encode the rest. */
static json_object *juri(struct jctx *j, const char *path)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(path), i, o = 0;
	json_object *s;
	char *buf;

	buf = malloc(n * 3 + 1);
	if (!buf) {
		j->oom = true;
		return NULL;
	}
	for (i = 0; i < n; i++) {
		unsigned char ch = path[i];

		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || strchr("-._~/", ch)) {
			buf[o++] = ch;
		} else {
			buf[o++] = '%';
			buf[o++] = hex[ch >> 4];
			buf[o++] = hex[ch & 15];
		}
	}
	buf[o] = '\0';
	s = jstr(j, buf);
	free(buf);
	return s;
}

static json_object *jmessage(struct jctx *j, const char *text)
{
	json_object *m = jobj(j);

	jadd(j, m, "text", jstr(j, text));
	return m;
}

/*
 * The failing line as the kernel printed it, for a contextRegion snippet;
 * NULL when it was clipped or is the "..." of a line without line info, as
 * it would then not be the file's text.
 */
static const char *marked_source(const struct diag_site *s)
{
	size_t i;

	for (i = 0; i < s->n_src; i++)
		if (s->src[i].marked && !s->src[i].clipped && strcmp(s->src[i].text, "..."))
			return s->src[i].text;
	return NULL;
}

/* A SARIF location for a site (or just the object file when it has none). */
static json_object *sarif_location(struct jctx *j, const struct diag_site *s, const char *file,
				   int line, int column, const char *object_file,
				   const char *prog_name, const char *message)
{
	json_object *loc = jobj(j), *phys = NULL, *art, *region, *props;
	char pbuf[4096];

	if (file) {
		phys = jobj(j);
		art = jobj(j);
		jadd(j, art, "uri", juri(j, diag_resolve_path(file, object_file, pbuf,
							      sizeof(pbuf))));
		jadd(j, phys, "artifactLocation", art);
		if (line > 0) {
			const char *snippet = s ? marked_source(s) : NULL;

			region = jobj(j);
			jadd(j, region, "startLine", jint(j, line));
			if (column > 0)
				jadd(j, region, "startColumn", jint(j, column));
			jadd(j, phys, "region", region);
			/* The whole line surrounds the point region: a context region. */
			if (snippet) {
				json_object *ctx = jobj(j), *sn = jobj(j);

				jadd(j, ctx, "startLine", jint(j, line));
				jadd(j, sn, "text", jstr(j, snippet));
				jadd(j, ctx, "snippet", sn);
				jadd(j, phys, "contextRegion", ctx);
			}
		}
	} else if (object_file) {
		phys = jobj(j);
		art = jobj(j);
		jadd(j, art, "uri", juri(j, object_file));
		jadd(j, phys, "artifactLocation", art);
	}
	if (phys)
		jadd(j, loc, "physicalLocation", phys);

	if ((s && s->function) || prog_name) {
		json_object *ll = jarr(j), *l = jobj(j);

		jadd(j, l, "name", jstr(j, s && s->function ? s->function : prog_name));
		jadd(j, l, "kind", jstr(j, "function"));
		jpush(j, ll, l);
		jadd(j, loc, "logicalLocations", ll);
	}
	if (message)
		jadd(j, loc, "message", jmessage(j, message));
	if (s && s->insn >= 0) {
		props = jobj(j);
		jadd(j, props, "bpfInsn", jint(j, s->insn));
		jadd(j, loc, "properties", props);
	}
	return loc;
}

/* SARIF threadFlowLocation.kinds from the kernel's event label. */
static json_object *flow_kinds(struct jctx *j, const struct diag_site *s)
{
	json_object *a = jarr(j);

	switch (s->kind_id) {
	case DIAG_EVENT_BRANCH:
		jpush(j, a, jstr(j, "branch"));
		break;
	case DIAG_EVENT_ACQUIRED:
		jpush(j, a, jstr(j, "acquire"));
		break;
	case DIAG_EVENT_RELEASED:
		jpush(j, a, jstr(j, "release"));
		break;
	case DIAG_EVENT_CONTEXT:
		jpush(j, a, jstr(j, "scope"));
		if (!strncmp(s->message, "entered ", 8))
			jpush(j, a, jstr(j, "enter"));
		else if (!strncmp(s->message, "left ", 5))
			jpush(j, a, jstr(j, "exit"));
		break;
	case DIAG_EVENT_UPDATE:
		jpush(j, a, jstr(j, "value"));
		break;
	case DIAG_EVENT_SPILLED:
		jpush(j, a, jstr(j, "memory"));
		break;
	case DIAG_EVENT_INVALIDATED:
		jpush(j, a, jstr(j, "caution"));
		break;
	case DIAG_EVENT_ERROR:
		jpush(j, a, jstr(j, "danger"));
		break;
	default:
		break;
	}
	return a;
}

static json_object *flow_location(struct jctx *j, const struct diag_site *s,
				  const struct diag_sarif_result *res)
{
	json_object *tfl = jobj(j), *props = jobj(j);
	size_t len = strlen(s->kind) + strlen(s->message) + 3;
	char *text = malloc(len);

	if (!text) {
		j->oom = true;
		json_object_put(props);
		return tfl;
	}
	snprintf(text, len, "%s: %s", s->kind, s->message);
	jadd(j, tfl, "location", sarif_location(j, s, s->file, s->line, s->column,
						 res->object_file, res->prog_name, text));
	free(text);
	jadd(j, tfl, "kinds", flow_kinds(j, s));
	jadd(j, props, "eventKind", jstr(j, s->kind));
	jadd(j, tfl, "properties", props);
	return tfl;
}

/*
 * Index of rule @id in @rules, adding it when new.  @index maps ids to
 * indices: a log may hold many reports, each with a category of its own.
 */
static int rule_index(struct jctx *j, json_object *rules, json_object *index, const char *id)
{
	size_t i, n = json_object_array_length(rules);
	json_object *rule, *desc, *conf, *known;
	char name[128];
	int k = 0;

	if (json_object_object_get_ex(index, id, &known))
		return json_object_get_int(known);
	/* "Memory Safety" -> "MemorySafety" for the rule's name. */
	for (i = 0; id[i] && k < (int)sizeof(name) - 1; i++)
		if (id[i] != ' ')
			name[k++] = id[i];
	name[k] = '\0';

	rule = jobj(j);
	jadd(j, rule, "id", jstr(j, id));
	jadd(j, rule, "name", jstr(j, name));
	desc = jobj(j);
	jadd(j, desc, "text", jstr(j, id));
	jadd(j, rule, "shortDescription", desc);
	conf = jobj(j);
	jadd(j, conf, "level", jstr(j, "error"));
	jadd(j, rule, "defaultConfiguration", conf);
	jpush(j, rules, rule);
	jadd(j, index, id, jint(j, (long long)n));
	return (int)n;
}

static char *result_text(const struct diag_report *r, const char *legacy, const char *prog)
{
	const char *cat = r ? r->category : diag_category_name(DIAG_CAT_VERIFIER_ERROR);
	const char *problem = r ? r->problem : legacy;
	const char *reason = r ? r->reason : NULL;
	const char *sugg = r ? r->suggestion : NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	fprintf(f, "%s%s%s", cat, problem[0] ? ": " : "", problem);
	if (prog)
		fprintf(f, " [prog %s]", prog);
	if (reason && reason[0])
		fprintf(f, "\n%s", reason);
	if (sugg && sugg[0])
		fprintf(f, "\nSuggestion: %s", sugg);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

static json_object *sarif_result(struct jctx *j, json_object *rules, json_object *rule_ids,
				 const struct diag_sarif_result *res,
				 const struct diag_report *r)
{
	const struct diag_log *log = res->log;
	json_object *o = jobj(j), *locs = jarr(j), *props = jobj(j);
	const char *rule = r ? r->category : diag_category_name(DIAG_CAT_VERIFIER_ERROR);
	char *text = result_text(r, log->legacy_error, res->prog_name);
	size_t i;

	if (!text)
		j->oom = true;
	jadd(j, o, "ruleId", jstr(j, rule));
	jadd(j, o, "ruleIndex", jint(j, rule_index(j, rules, rule_ids, rule)));
	jadd(j, o, "level", jstr(j, "error"));
	jadd(j, o, "kind", jstr(j, "fail"));
	jadd(j, o, "message", jmessage(j, text ? text : ""));
	free(text);

	if (r && r->has_at)
		jpush(j, locs, sarif_location(j, &r->at, r->at.file, r->at.line, r->at.column,
					      res->object_file, res->prog_name, NULL));
	else if (r)
		jpush(j, locs, sarif_location(j, NULL, NULL, -1, -1, res->object_file,
					      res->prog_name, NULL));
	else
		jpush(j, locs, sarif_location(j, NULL, log->linfo_file, log->linfo_line, 0,
					      res->object_file, res->prog_name, NULL));
	jadd(j, o, "locations", locs);

	if (r && r->n_events) {
		json_object *flows = jarr(j), *flow = jobj(j), *threads = jarr(j),
			    *thread = jobj(j), *tlocs = jarr(j);

		for (i = 0; i < r->n_events; i++)
			jpush(j, tlocs, flow_location(j, &r->events[i], res));
		/* The flow ends where the verifier rejected the program. */
		if (r->has_at)
			jpush(j, tlocs, flow_location(j, &r->at, res));
		jadd(j, thread, "locations", tlocs);
		jpush(j, threads, thread);
		jadd(j, flow, "threadFlows", threads);
		jpush(j, flows, flow);
		jadd(j, o, "codeFlows", flows);
	}

	if (res->prog_name)
		jadd(j, props, "bpfProgram", jstr(j, res->prog_name));
	if (res->object_file)
		jadd(j, props, "objectFile", jstr(j, res->object_file));
	jadd(j, props, "category", jstr(j, rule));
	if (r) {
		unsigned long long omitted = r->not_retained;

		for (i = 0; i < r->n_omitted; i++)
			omitted += r->omitted[i].count;
		jadd(j, props, "problem", jstr(j, r->problem));
		jadd(j, props, "legacyError", jstr(j, r->legacy_error));
		jadd(j, props, "omittedEvents", jint(j, (long long)omitted));
		if (r->has_at && r->at.insn >= 0)
			jadd(j, props, "bpfInsn", jint(j, r->at.insn));
	} else {
		jadd(j, props, "legacyError", jstr(j, log->legacy_error));
		if (log->failing_insn >= 0)
			jadd(j, props, "bpfInsn", jint(j, log->failing_insn));
	}
	jadd(j, props, "truncated", jbool(j, log->truncated));
	jadd(j, o, "properties", props);
	return o;
}

json_object *diag_to_sarif(const struct diag_sarif_result *results, size_t n)
{
	struct jctx j = {};
	json_object *root, *runs, *run, *tool, *driver, *rules, *out, *rule_ids;
	size_t i, k;

	root = jobj(&j);
	jadd(&j, root, "$schema", jstr(&j, "https://json.schemastore.org/sarif-2.1.0.json"));
	jadd(&j, root, "version", jstr(&j, "2.1.0"));
	runs = jarr(&j);
	run = jobj(&j);
	tool = jobj(&j);
	driver = jobj(&j);
	rules = jarr(&j);
	out = jarr(&j);
	rule_ids = jobj(&j);

	jadd(&j, driver, "name", jstr(&j, "bpfuml"));
	jadd(&j, driver, "rules", rules);
	jadd(&j, tool, "driver", driver);
	jadd(&j, run, "tool", tool);
	jadd(&j, run, "columnKind", jstr(&j, "unicodeCodePoints"));

	for (i = 0; rules && out && rule_ids && i < n; i++) {
		const struct diag_log *log = results[i].log;

		if (!log)
			continue;
		for (k = 0; k < log->n_reports; k++)
			jpush(&j, out, sarif_result(&j, rules, rule_ids, &results[i], &log->reports[k]));
		if (!log->n_reports && log->legacy_error)
			jpush(&j, out, sarif_result(&j, rules, rule_ids, &results[i], NULL));
	}
	jadd(&j, run, "results", out);
	jpush(&j, runs, run);
	jadd(&j, root, "runs", runs);
	json_object_put(rule_ids);

	if (j.oom) {
		json_object_put(root);
		return NULL;
	}
	return root;
}
