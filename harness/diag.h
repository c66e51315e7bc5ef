/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * diag: parse a Linux 7.3 BPF verifier log (the trace of kernel/bpf/log.c and
 * verifier.c plus the report of kernel/bpf/diagnostics.c) into structured
 * data; render it as JSON, human text, gcc-style lines or SARIF 2.1.0.
 */
#ifndef BPFUML_DIAG_H
#define BPFUML_DIAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/*
 * Everything below is a plain, read-only public struct tree owned by the
 * struct diag_log returned from diag_parse(); strings are NUL-terminated and
 * live until diag_free().  A string or array that is absent is NULL (count 0);
 * an integer that is unknown is -1 unless documented otherwise.
 */

enum diag_category {
	DIAG_CAT_UNKNOWN = 0,		/* a category this parser does not know */
	DIAG_CAT_REGISTER_TYPE,		/* "Register Type Safety" */
	DIAG_CAT_MEMORY,		/* "Memory Safety" */
	DIAG_CAT_RESOURCE_LIFETIME,	/* "Resource Lifetime Safety" */
	DIAG_CAT_CALL_TYPE,		/* "Call Type Safety" */
	DIAG_CAT_EXECUTION_CONTEXT,	/* "Execution Context Safety" */
	DIAG_CAT_PROGRAM_STRUCTURE,	/* "Program Structure" */
	DIAG_CAT_POLICY,		/* "Policy" */
	DIAG_CAT_VERIFIER_ERROR,	/* "Verifier Error": bpf_diag_header()'s default */
};

/* The label a site's annotation carries ("^-- <label>: <message>"). */
enum diag_event_kind {
	DIAG_EVENT_OTHER = 0,		/* a label this parser does not know */
	DIAG_EVENT_ERROR,		/* "error": the failing instruction (At:) */
	DIAG_EVENT_NOTE,		/* "note": bpf_diag_source()'s default label */
	DIAG_EVENT_UPDATE,		/* "update": a register/slot changed value */
	DIAG_EVENT_SPILLED,		/* "spilled": a register was spilled to the stack */
	DIAG_EVENT_INVALIDATED,		/* "invalidated": release, call, packet change, ... */
	DIAG_EVENT_BRANCH,		/* "branch": which way a conditional went */
	DIAG_EVENT_ACQUIRED,		/* "acquired": a reference or lock was taken */
	DIAG_EVENT_RELEASED,		/* "released": a reference was released */
	DIAG_EVENT_CONTEXT,		/* "context": entered/left RCU, IRQ, lock, ... */
};

/* One lane of "Source context:". */
struct diag_src_line {
	int line;		/* source line number; 0 for the kernel's empty
				 * placeholder lane of a line before line 1 */
	const char *text;	/* as printed: tabs expanded, maybe clipped;
				 * "..." when the kernel had no line info for it */
	bool marked;		/* the ">>>" line */
	bool clipped;		/* text was cut to the lane width, ends in "..." */
	const char *caret;	/* marked line only: "<label>: <message>", unwrapped */
};

/* One line of "Instruction context:". */
struct diag_insn_line {
	int idx;		/* instruction index */
	const char *text;	/* disassembly, e.g. "(85) call bpf_map_lookup_elem#1" */
	bool marked;		/* the ">>>" line */
};

/*
 * A site is what one bpf_diag_source() call prints: the "At:" location, each
 * causal-path event, the "Active lock:" site.
 */
struct diag_site {
	const char *kind;		/* label as printed: "error", "update", ... */
	enum diag_event_kind kind_id;
	const char *message;		/* annotation text after "<label>: ", unwrapped */
	const char *function;		/* subprogram name, or NULL */
	const char *file;		/* basename as printed, NULL if "insn N" form */
	int line, column;		/* -1 when there is no file location */
	int insn;			/* marked instruction (or "insn N"), -1 if unknown */
	int caret_column;		/* spaces between "| " and "^--" */
	int src_width;			/* printed width of source line numbers, 0 if none */
	int insn_width;			/* printed width of instruction indices, 0 if none */
	bool has_source_context;	/* a "Source context:" block was printed */
	bool has_insn_context;		/* an "Instruction context:" block was printed */
	struct diag_src_line *src;
	size_t n_src;
	struct diag_insn_line *insns;
	size_t n_insns;
};

/* "  N intermediate causal-history events omitted", between two events. */
struct diag_omission {
	unsigned long long count;
	size_t before;			/* printed before events[before] */
};

/* A section the parser has no dedicated field for, e.g. "Active lock". */
struct diag_section {
	const char *title;
	struct diag_site *sites;	/* parsed sites, when the lines form sites */
	size_t n_sites;
	const char **lines;		/* raw content lines, indentation kept */
	size_t n_lines;
};

/* One "Verification failed: ..." report. */
struct diag_report {
	const char *category;		/* as printed, e.g. "Memory Safety" */
	enum diag_category category_id;
	const char *problem;		/* as printed (first letter upper-cased by
					 * the kernel); "" if the header had none */
	const char *reason;		/* unwrapped, NULL if no Reason section */
	const char **reason_lines;	/* raw lines without the 2-space indent */
	size_t n_reason_lines;
	bool has_at;
	struct diag_site at;		/* the failing instruction */
	bool has_causal_path;
	struct diag_site *events;	/* causal path, oldest first */
	size_t n_events;
	struct diag_omission *omitted;	/* intermediate-event summaries */
	size_t n_omitted;
	unsigned long long not_retained; /* "N older ... not retained", 0 if absent */
	bool no_retained_events;	/* "no retained diagnostic events on this path" */
	struct diag_section *extra;	/* other sections, in order ("Active lock") */
	size_t n_extra;
	const char *suggestion;		/* unwrapped, NULL if no Suggestion section */
	const char **suggestion_lines;
	size_t n_suggestion_lines;
	const char *legacy_error;	/* the trace line right before this report */
	bool complete;			/* reached a non-empty Suggestion section */
	size_t raw_off, raw_len;	/* the report's bytes in the input, from the
					 * "Verification failed" line to the end of
					 * its last line (newline included) */
};

/* "processed N insns (limit N) max_states_per_insn N total_states N ..." */
struct diag_stats {
	bool present;
	long insns_processed;
	long insn_limit;
	long max_states_per_insn;
	long total_states;
	long peak_states;
	long mark_read;
};

/* Reasons for diag_log.truncated (bit mask). */
enum {
	DIAG_TRUNC_NO_STATS = 1 << 0,	/* no statistics line */
	DIAG_TRUNC_REPORT = 1 << 1,	/* a report stops before its Suggestion */
};

struct diag_log {
	bool has_report;
	const struct diag_report *report;	/* primary (first) report or NULL */
	struct diag_report *reports;		/* all reports, in log order */
	size_t n_reports;

	/*
	 * The legacy one-line error: the last non-blank line before the
	 * statistics line (or the end of the log when there is none), skipping
	 * reports and the BPF_LOG_STATS lines.  NULL when that line is part of
	 * the normal trace (an instruction, line-info or state line), as in the
	 * log of a program that passed.
	 */
	const char *legacy_error;

	struct diag_stats stats;

	/*
	 * The log was cut: no statistics line and/or the last report stops
	 * before its Suggestion.  A log that ends early because the verifier
	 * failed before do_check() is reported as truncated too (no stats);
	 * a rotating-mode log that lost its head is not detected.
	 */
	bool truncated;
	unsigned int truncation;		/* DIAG_TRUNC_* */

	/* From the trace, whether or not there is a report. */
	int failing_insn;			/* last "N: (xx) ..." line, -1 if none */
	const char *failing_insn_text;		/* its disassembly, state comment cut */
	const char *linfo_text;			/* last "; <src> @ file:line" annotation */
	const char *linfo_file;
	int linfo_line;				/* -1 if none */

	size_t n_lines;				/* lines in the input */
};

/*
 * Parse @len bytes of verifier log text (need not be NUL-terminated or end in
 * a newline).  Linear in @len.  Returns NULL only on allocation failure.
 */
struct diag_log *diag_parse(const char *text, size_t len);
void diag_free(struct diag_log *log);

const char *diag_category_name(enum diag_category cat);	/* "Memory Safety" */
const char *diag_category_id(enum diag_category cat);	/* "memory_safety" */
const char *diag_event_kind_id(enum diag_event_kind kind); /* "update", "other" */

/*
 * Undo the kernel's diag_print_wrapped_prefixed() for lines of at most
 * @text_width characters each.  Returns malloc()ed text or NULL on ENOMEM.
 */
char *diag_unwrap(const char *const *lines, size_t n, int text_width);

/* ---- renderers (diag_render.c) ---------------------------------------- */

struct json_object;

/* The bpfuml-diag/1 document (docs/diag-json-schema.md); NULL on ENOMEM. */
struct json_object *diag_to_json(const struct diag_log *log);

/*
 * The reports in the kernel's own layout, optionally with ANSI colour (colour
 * adds escape sequences only, never changes the layout).  A log without a
 * report but with a legacy error gets a short block in the same style.
 */
void diag_print_human(FILE *out, const struct diag_log *log, bool color);

/*
 * gcc-style lines: "FILE:LINE:COL: error: <Category>: <Problem> [prog NAME]"
 * per report, then "FILE:LINE:COL: note: <kind>: <message>" per causal event
 * (plus notes for the history summaries, Active lock sites and the
 * suggestion).  File names are resolved as described at diag_resolve_path();
 * a site without a file location is shown as @fallback_file (or @prog_name).
 * A log without a report gives one error line with its legacy error at the
 * last line-info location.  @prog_name may be NULL (no " [prog NAME]").
 */
void diag_print_gcc(FILE *out, const struct diag_log *log, const char *prog_name,
		    const char *fallback_file);

/*
 * The same findings as GitHub Actions workflow commands: one
 * "::error file=F,line=L,col=C,title=CATEGORY [prog NAME]::MESSAGE" line per
 * report (the message: problem, reason, suggestion), or per legacy error;
 * values escaped so that nothing from the log ends the line.
 */
void diag_print_github(FILE *out, const struct diag_log *log, const char *prog_name,
		       const char *fallback_file);

/* The end of a gcc-style line: " [prog NAME]" when @prog_name is given,
 * then the newline (the one spelling of the program in gcc lines). */
void diag_gcc_prog_suffix(FILE *out, const char *prog_name);

/* One such line; @file NULL for none, @line/@column 0 for none. */
void diag_github_annotation(FILE *out, const char *file, int line, int column,
			    const char *title, const char *prog_name, const char *message);

/*
 * The path to show for @file (a basename from the log): @file itself if it
 * exists relative to the current directory, else dirname(@fallback_file)/
 * basename(@file) if that exists, else @file unchanged.  Writes into @buf.
 */
const char *diag_resolve_path(const char *file, const char *fallback_file, char *buf,
			      size_t size);

/* One program's verdict for diag_to_sarif(). */
struct diag_sarif_result {
	const char *prog_name;		/* BPF program name */
	const char *object_file;	/* its .bpf.o, used as fallback_file */
	const struct diag_log *log;	/* NULL or a log without errors: skipped */
};

/*
 * A SARIF 2.1.0 log with one run holding a result per report (or per legacy
 * error) of every program in @results.  NULL on ENOMEM.
 */
struct json_object *diag_to_sarif(const struct diag_sarif_result *results, size_t n);

#endif /* BPFUML_DIAG_H */
