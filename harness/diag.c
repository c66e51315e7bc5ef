// SPDX-License-Identifier: GPL-2.0-only
/*
 * Verifier log parser: one linear pass over a Linux 7.3 verifier log that
 * keeps only what callers need (the trace's last instruction and line info,
 * the legacy error line, the statistics) plus every structured report that
 * kernel/bpf/diagnostics.c appended, parsed into struct diag_report.
 */
#include <ctype.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"

/* kernel/bpf/diagnostics.c: BPF_DIAG_TEXT_WIDTH, BPF_DIAG_SOURCE_LANE_WIDTH */
#define DIAG_TEXT_WIDTH 100
#define DIAG_LANE_WIDTH 88

#define HEADER_PREFIX "Verification failed: "

/* ---- storage ------------------------------------------------------------ */

/*
 * Strings go to a chunked arena so that freeing a log does not have to visit
 * every string; arrays are realloc()ed vectors freed by diag_free().
 */
struct arena_chunk {
	struct arena_chunk *next;
	size_t used, cap;
	char data[];
};

struct diag_priv {
	struct diag_log pub;
	struct arena_chunk *arena;
};

#define ARENA_CHUNK 16384

static void *arena_alloc(struct diag_priv *lp, size_t size)
{
	struct arena_chunk *c = lp->arena;

	size = (size + 7) & ~(size_t)7;
	if (!c || c->cap - c->used < size) {
		size_t cap = size > ARENA_CHUNK ? size : ARENA_CHUNK;

		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->cap = cap;
		c->used = 0;
		c->next = lp->arena;
		lp->arena = c;
	}
	c->used += size;
	return c->data + c->used - size;
}

struct line {
	const char *s;
	size_t n;
	size_t off;	/* offset of the line in the input */
};

struct parser {
	struct diag_priv *lp;
	const char *text, *end;	/* the input */
	bool oom;

	/* lines of the report being collected */
	struct line *rl;
	size_t n_rl, cap_rl;
	bool in_report;
	bool in_suggestion, suggestion_text, suggestion_done;
	const char *report_legacy;

	/* last non-blank trace line that is not a BPF_LOG_STATS line */
	struct line last;
	bool last_valid, last_structural;
	size_t last_reports;	/* reports seen before @last */

	/*
	 * Spans of the trace lines that end up in diag_log, copied once at
	 * the end so that a huge trace is not duplicated line by line.
	 */
	struct line insn, linfo_src, linfo_file, legacy;
	long long insn_idx, linfo_line;
	bool have_insn, have_linfo, have_legacy;
};

static char *pstrndup(struct parser *p, const char *s, size_t n)
{
	char *d = arena_alloc(p->lp, n + 1);

	if (!d) {
		p->oom = true;
		return NULL;
	}
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

/*
 * Append one zeroed element to a vector whose capacity is implied by its
 * count: 4 for 1..4 elements, then the next power of two.
 */
static void *vec_push(struct parser *p, void **arr, size_t *n, size_t size)
{
	size_t cnt = *n;
	void *slot;

	if (cnt == 0 || (cnt >= 4 && !(cnt & (cnt - 1)))) {
		size_t cap = cnt ? cnt * 2 : 4;
		void *na;

		if (cap > SIZE_MAX / size) {
			p->oom = true;
			return NULL;
		}
		na = realloc(*arr, cap * size);
		if (!na) {
			p->oom = true;
			return NULL;
		}
		*arr = na;
	}
	slot = (char *)*arr + cnt * size;
	memset(slot, 0, size);
	*n = cnt + 1;
	return slot;
}

#define VEC_PUSH(p, arr, n) \
	((__typeof__(arr))vec_push((p), (void **)&(arr), &(n), sizeof(*(arr))))

/* ---- names -------------------------------------------------------------- */

static const struct {
	const char *name, *id;
} cat_names[] = {
	[DIAG_CAT_UNKNOWN] = { "Unknown", "unknown" },
	[DIAG_CAT_REGISTER_TYPE] = { "Register Type Safety", "register_type_safety" },
	[DIAG_CAT_MEMORY] = { "Memory Safety", "memory_safety" },
	[DIAG_CAT_RESOURCE_LIFETIME] = { "Resource Lifetime Safety", "resource_lifetime_safety" },
	[DIAG_CAT_CALL_TYPE] = { "Call Type Safety", "call_type_safety" },
	[DIAG_CAT_EXECUTION_CONTEXT] = { "Execution Context Safety", "execution_context_safety" },
	[DIAG_CAT_PROGRAM_STRUCTURE] = { "Program Structure", "program_structure" },
	[DIAG_CAT_POLICY] = { "Policy", "policy" },
	[DIAG_CAT_VERIFIER_ERROR] = { "Verifier Error", "verifier_error" },
};

#define N_CATS (sizeof(cat_names) / sizeof(cat_names[0]))

const char *diag_category_name(enum diag_category cat)
{
	return (unsigned int)cat < N_CATS ? cat_names[cat].name : cat_names[0].name;
}

const char *diag_category_id(enum diag_category cat)
{
	return (unsigned int)cat < N_CATS ? cat_names[cat].id : cat_names[0].id;
}

static const char *const event_ids[] = {
	[DIAG_EVENT_OTHER] = "other",
	[DIAG_EVENT_ERROR] = "error",
	[DIAG_EVENT_NOTE] = "note",
	[DIAG_EVENT_UPDATE] = "update",
	[DIAG_EVENT_SPILLED] = "spilled",
	[DIAG_EVENT_INVALIDATED] = "invalidated",
	[DIAG_EVENT_BRANCH] = "branch",
	[DIAG_EVENT_ACQUIRED] = "acquired",
	[DIAG_EVENT_RELEASED] = "released",
	[DIAG_EVENT_CONTEXT] = "context",
};

#define N_EVENTS (sizeof(event_ids) / sizeof(event_ids[0]))

const char *diag_event_kind_id(enum diag_event_kind kind)
{
	return (unsigned int)kind < N_EVENTS ? event_ids[kind] : event_ids[0];
}

static enum diag_event_kind event_kind_from(const char *label)
{
	size_t i;

	for (i = 1; i < N_EVENTS; i++)
		if (!strcmp(label, event_ids[i]))
			return i;
	return DIAG_EVENT_OTHER;
}

/* ---- small line helpers ------------------------------------------------- */

static bool starts(const struct line *l, const char *prefix)
{
	size_t n = strlen(prefix);

	return l->n >= n && !memcmp(l->s, prefix, n);
}

static bool equals(const struct line *l, const char *s)
{
	return l->n == strlen(s) && !memcmp(l->s, s, l->n);
}

static bool is_blank(const struct line *l)
{
	return l->n == 0;
}

/* Parse unsigned decimal at s[*i..n); false if there is no digit. */
static bool parse_num(const char *s, size_t n, size_t *i, long long *out)
{
	long long v = 0;
	size_t j = *i;

	if (j >= n || !isdigit((unsigned char)s[j]))
		return false;
	while (j < n && isdigit((unsigned char)s[j])) {
		if (v < (LLONG_MAX - 9) / 10)
			v = v * 10 + (s[j] - '0');
		j++;
	}
	*i = j;
	*out = v;
	return true;
}

static size_t count_char(const char *s, size_t n, size_t i, char c)
{
	size_t k = 0;

	while (i + k < n && s[i + k] == c)
		k++;
	return k;
}

/* Search for @needle in s[from..n); returns its offset or (size_t)-1. */
static size_t find(const char *s, size_t n, size_t from, const char *needle)
{
	size_t m = strlen(needle), i;

	if (m > n)
		return (size_t)-1;
	for (i = from; i + m <= n; i++)
		if (s[i] == needle[0] && !memcmp(s + i, needle, m))
			return i;
	return (size_t)-1;
}

static size_t rfind(const char *s, size_t n, const char *needle)
{
	size_t m = strlen(needle), i;

	if (m > n)
		return (size_t)-1;
	for (i = n - m + 1; i-- > 0;)
		if (!memcmp(s + i, needle, m))
			return i;
	return (size_t)-1;
}

/* ---- unwrapping --------------------------------------------------------- */

/*
 * diag_print_wrapped_prefixed() breaks at the last space within the width
 * and drops the spaces at the break; a word with no space to break at is
 * cut hard at exactly @text_width characters.  So a line of exactly the
 * width with no space after its first character was a hard cut and joins
 * its successor directly; every other break was a space.  (A word of exactly
 * the width followed by a space is indistinguishable and loses that space;
 * an explicit '\n' in the kernel's text reads back as a space.)
 */
static bool hard_cut(const char *s, size_t n, int text_width)
{
	if (text_width <= 0 || n != (size_t)text_width)
		return false;
	return !memchr(s + 1, ' ', n - 1);
}

/* Line @l without its first @strip bytes; empty when it is shorter. */
static struct line tail_of(const struct line *l, size_t strip)
{
	struct line t = { .s = l->s + l->n, .n = 0, .off = l->off + l->n };

	if (l->n > strip) {
		t.s = l->s + strip;
		t.n = l->n - strip;
		t.off = l->off + strip;
	}
	return t;
}

/*
 * Callers pass lines that all have @strip bytes of prefix; a shorter line
 * (a hand-edited or cut log) contributes nothing rather than a negative
 * length.
 */
static char *unwrap_lines(struct parser *p, const struct line *lines, size_t n, size_t strip,
			  int text_width)
{
	size_t total = 1, i, o = 0;
	char *out;

	for (i = 0; i < n; i++)
		total += lines[i].n + 1;
	out = arena_alloc(p->lp, total);
	if (!out) {
		p->oom = true;
		return NULL;
	}
	for (i = 0; i < n; i++) {
		struct line t = tail_of(&lines[i], strip);

		if (i) {
			struct line prev = tail_of(&lines[i - 1], strip);

			if (!hard_cut(prev.s, prev.n, text_width))
				out[o++] = ' ';
		}
		memcpy(out + o, t.s, t.n);
		o += t.n;
	}
	out[o] = '\0';
	return out;
}

char *diag_unwrap(const char *const *lines, size_t n, int text_width)
{
	size_t total = 1, i, o = 0;
	char *out;

	for (i = 0; i < n; i++)
		total += strlen(lines[i]) + 1;
	out = malloc(total);
	if (!out)
		return NULL;
	for (i = 0; i < n; i++) {
		size_t len = strlen(lines[i]);

		if (i && !hard_cut(lines[i - 1], strlen(lines[i - 1]), text_width))
			out[o++] = ' ';
		memcpy(out + o, lines[i], len);
		o += len;
	}
	out[o] = '\0';
	return out;
}

/* ---- trace lines -------------------------------------------------------- */

/* "N: (xx) <disasm>" as printed by do_check() and bpf_verbose_insn(). */
static bool parse_insn_line(const struct line *l, long long *idx, size_t *text_off)
{
	size_t i = 0;

	if (!parse_num(l->s, l->n, &i, idx))
		return false;
	if (i + 7 > l->n || memcmp(l->s + i, ": (", 3) || !isxdigit((unsigned char)l->s[i + 3]) ||
	    !isxdigit((unsigned char)l->s[i + 4]) || l->s[i + 5] != ')' || l->s[i + 6] != ' ')
		return false;
	*text_off = i + 2;
	return true;
}

/*
 * verbose_linfo(): "<prefix><ltrimmed source> @ <basename>:<line>", where the
 * prefix is "; " in do_check() and "N: " in check_cfg().  Returns the source
 * text span and the " @ " offset.
 */
static bool parse_linfo_line(const struct line *l, size_t *src_off, size_t *at, long long *lineno)
{
	size_t i = 0, j, colon;
	long long dummy;

	if (starts(l, "; ")) {
		i = 2;
	} else if (parse_num(l->s, l->n, &i, &dummy) && i + 1 < l->n && l->s[i] == ':' &&
		   l->s[i + 1] == ' ') {
		i += 2;
	} else {
		return false;
	}
	*at = rfind(l->s, l->n, " @ ");
	if (*at == (size_t)-1 || *at < i)
		return false;
	colon = rfind(l->s + *at, l->n - *at, ":");
	if (colon == (size_t)-1)
		return false;
	colon += *at;
	j = colon + 1;
	if (!parse_num(l->s, l->n, &j, lineno) || j != l->n || colon <= *at + 3)
		return false;
	*src_off = i;
	return true;
}

/* BPF_LOG_STATS lines printed just before the "processed" line. */
static bool is_stats_family(const struct line *l)
{
	return starts(l, "verification time ") || starts(l, "stack depth ") ||
	       (starts(l, "subprog ") && find(l->s, l->n, 0, " insns_self ") != (size_t)-1);
}

/*
 * Lines of the normal trace that are not error messages: register state
 * ("N: R1=...", "N: safe", "from N to M: ..."), the level-2 liveness dump
 * and back-tracking, subprogram banners.
 */
static bool is_state_line(const struct line *l)
{
	size_t i = 0;
	long long v;

	if (starts(l, "from ") || starts(l, "func#") || starts(l, "mark_precise: ") ||
	    starts(l, "Live regs before insn:") || starts(l, "Validating "))
		return true;
	i = count_char(l->s, l->n, 0, ' ');
	if (parse_num(l->s, l->n, &i, &v) && i < l->n && l->s[i] == ':')
		return true;
	return false;
}

/*
 * "processed N insns (limit N) max_states_per_insn N total_states N
 * peak_states N mark_read N", anything after it ignored.  Matched piece by
 * piece with parse_num() rather than sscanf("%ld"), whose overflow is
 * undefined.
 */
static bool parse_stats(const struct line *l, struct diag_stats *st)
{
	static const char *const pieces[] = {
		"processed ", " insns (limit ", ") max_states_per_insn ", " total_states ",
		" peak_states ", " mark_read ",
	};
	long long v[6];
	size_t i = 0, k;

	for (k = 0; k < 6; k++) {
		size_t m = strlen(pieces[k]);

		if (l->n - i < m || memcmp(l->s + i, pieces[k], m))
			return false;
		i += m;
		if (!parse_num(l->s, l->n, &i, &v[k]))
			return false;
	}
	st->present = true;
	st->insns_processed = v[0];
	st->insn_limit = v[1];
	st->max_states_per_insn = v[2];
	st->total_states = v[3];
	st->peak_states = v[4];
	st->mark_read = v[5];
	return true;
}

/* ---- report: sites ------------------------------------------------------ */

/*
 * A lane of "Source context:" or a line of "Instruction context:":
 * "  >>> N | text" or "      N | text" (number right-aligned).
 */
static bool parse_lane(const struct line *l, bool *marked, long long *num, int *width,
		       size_t *text_off)
{
	size_t i, start;

	if (l->n < 2 + 4 + 1 + 3 || memcmp(l->s, "  ", 2))
		return false;
	if (!memcmp(l->s + 2, ">>> ", 4))
		*marked = true;
	else if (!memcmp(l->s + 2, "    ", 4))
		*marked = false;
	else
		return false;
	start = 6;
	i = start + count_char(l->s, l->n, start, ' ');
	if (!parse_num(l->s, l->n, &i, num))
		return false;
	if (i + 3 > l->n || memcmp(l->s + i, " | ", 3))
		return false;
	*width = (int)(i - start);
	*text_off = i + 3;
	return true;
}

/*
 * diag_print_source_annotation(): "  <w+4 spaces> | <indent>^-- text" and
 * continuation lines with "    " in place of "^-- ".  Returns the offset of
 * the text, and whether this is the first ("^--") line.
 */
static bool parse_annotation(const struct line *l, bool *first, int *indent, size_t *text_off)
{
	size_t i = 2, sp;

	if (l->n < 2 || memcmp(l->s, "  ", 2))
		return false;
	sp = count_char(l->s, l->n, i, ' ');
	i += sp;
	if (sp < 1 || i + 2 > l->n || l->s[i] != '|' || l->s[i + 1] != ' ')
		return false;
	i += 2;
	sp = count_char(l->s, l->n, i, ' ');
	if (i + sp + 4 <= l->n && !memcmp(l->s + i + sp, "^-- ", 4)) {
		*first = true;
		*indent = (int)sp;
		*text_off = i + sp + 4;
		return true;
	}
	if (sp < 4 || i + sp >= l->n)
		return false;
	*first = false;
	*indent = (int)sp - 4;
	*text_off = i + sp;
	return true;
}

/* "  insn N", "  func @ file:line:col" or "  file:line:col". */
static bool parse_location(struct parser *p, const struct line *l, struct diag_site *site)
{
	const char *s;
	size_t n, i, c1, c2, at;
	long long v, line, col;

	if (l->n < 3 || memcmp(l->s, "  ", 2) || l->s[2] == ' ')
		return false;
	s = l->s + 2;
	n = l->n - 2;

	if (n > 5 && !memcmp(s, "insn ", 5)) {
		i = 5;
		if (parse_num(s, n, &i, &v) && i == n) {
			site->insn = (int)v;
			return true;
		}
	}

	/* Trailing ":<line>:<col>", either may carry a sign in theory. */
	c2 = rfind(s, n, ":");
	if (c2 == (size_t)-1 || c2 == 0)
		return false;
	i = c2 + 1;
	if (i < n && s[i] == '-')
		i++;
	if (!parse_num(s, n, &i, &col) || i != n)
		return false;
	if (s[c2 + 1] == '-')
		col = -col;
	c1 = rfind(s, c2, ":");
	if (c1 == (size_t)-1 || c1 == 0)
		return false;
	i = c1 + 1;
	if (i < c2 && s[i] == '-')
		i++;
	if (!parse_num(s, c2, &i, &line) || i != c2)
		return false;
	if (s[c1 + 1] == '-')
		line = -line;

	at = find(s, c1, 0, " @ ");
	if (at != (size_t)-1) {
		site->function = pstrndup(p, s, at);
		site->file = pstrndup(p, s + at + 3, c1 - at - 3);
	} else {
		site->file = pstrndup(p, s, c1);
	}
	site->line = (int)line;
	site->column = (int)col;
	return true;
}

static bool is_section_title(const struct line *l)
{
	size_t i;

	if (l->n < 2 || !isupper((unsigned char)l->s[0]) || l->s[l->n - 1] != ':')
		return false;
	for (i = 1; i + 1 < l->n; i++)
		if (!isalpha((unsigned char)l->s[i]) && l->s[i] != ' ' && l->s[i] != '-')
			return false;
	return true;
}

static bool set_caret(struct parser *p, struct diag_site *site, const struct line *ann,
		      size_t n_ann, size_t text_off)
{
	char *text, *colon;
	size_t i;
	bool ok = true;

	/* Every annotation line has its text at the same offset. */
	text = unwrap_lines(p, ann, n_ann, text_off,
			    text_off < DIAG_TEXT_WIDTH ? DIAG_TEXT_WIDTH - (int)text_off : 0);
	if (!text)
		return false;

	colon = strstr(text, ": ");
	if (colon) {
		site->kind = pstrndup(p, text, colon - text);
		site->message = colon + 2;
	} else {
		site->kind = text;
		site->message = "";
	}
	if (!site->kind)
		ok = false;
	else
		site->kind_id = event_kind_from(site->kind);
	for (i = 0; ok && i < site->n_src; i++)
		if (site->src[i].marked)
			site->src[i].caret = text;
	return ok;
}

/*
 * Parse one bpf_diag_source() block starting at lines[*pos]; stops at a blank
 * line or a line that cannot belong to it.  Returns false (consuming nothing)
 * if lines[*pos] is not a location line.
 */
static bool parse_site(struct parser *p, const struct line *lines, size_t *pos, size_t end,
		       struct diag_site *site)
{
	enum { NONE, SRC, INSN } mode = NONE;
	size_t i = *pos, ann_start = 0, n_ann = 0, ann_off = 0;
	bool first;
	int indent;

	memset(site, 0, sizeof(*site));
	site->line = site->column = site->insn = -1;
	if (i >= end || !parse_location(p, &lines[i], site))
		return false;
	for (i++; i < end; i++) {
		const struct line *l = &lines[i];
		long long num;
		bool marked;
		int width;
		size_t off;

		if (is_blank(l))
			break;
		if (equals(l, "  Source context:")) {
			mode = SRC;
			site->has_source_context = true;
			continue;
		}
		if (equals(l, "  Instruction context:")) {
			mode = INSN;
			site->has_insn_context = true;
			continue;
		}
		if (mode == INSN) {
			struct diag_insn_line *il;

			if (!parse_lane(l, &marked, &num, &width, &off))
				break;
			il = VEC_PUSH(p, site->insns, site->n_insns);
			if (!il)
				return false;
			il->idx = (int)num;
			il->marked = marked;
			il->text = pstrndup(p, l->s + off, l->n - off);
			if (!site->insn_width || marked)
				site->insn_width = width;
			if (marked)
				site->insn = (int)num;
			continue;
		}
		if (mode == SRC && equals(l, "  ")) {
			/* diag_format_source_lane() of a line number <= 0 */
			if (!VEC_PUSH(p, site->src, site->n_src))
				return false;
			continue;
		}
		if (mode == SRC && parse_lane(l, &marked, &num, &width, &off)) {
			struct diag_src_line *sl = VEC_PUSH(p, site->src, site->n_src);

			if (!sl)
				return false;
			sl->line = (int)num;
			sl->marked = marked;
			sl->text = pstrndup(p, l->s + off, l->n - off);
			sl->clipped = l->n - 2 == DIAG_LANE_WIDTH && l->n - off >= 3 &&
				      !memcmp(l->s + l->n - 3, "...", 3) && l->n - off > 3;
			if (!site->src_width || marked)
				site->src_width = width;
			continue;
		}
		if (parse_annotation(l, &first, &indent, &off)) {
			if (first) {
				if (n_ann)
					break;	/* a second annotation: not ours */
				ann_start = i;
				ann_off = off;
				site->caret_column = indent;
			} else if (!n_ann || off != ann_off || i != ann_start + n_ann) {
				/* Continuations follow their "^--" line directly. */
				break;
			}
			n_ann++;
			continue;
		}
		break;
	}
	if (n_ann && !set_caret(p, site, &lines[ann_start], n_ann, ann_off))
		return false;
	if (!site->kind) {
		site->kind = "";
		site->message = "";
	}
	*pos = i;
	return !p->oom;
}

/* ---- report: sections --------------------------------------------------- */

static bool parse_omitted(const struct line *l, unsigned long long *count)
{
	static const char tail[] = " intermediate causal-history events omitted";
	size_t i = 2;
	long long v;

	if (!starts(l, "  ") || !parse_num(l->s, l->n, &i, &v))
		return false;
	if (l->n - i != sizeof(tail) - 1 || memcmp(l->s + i, tail, sizeof(tail) - 1))
		return false;
	*count = v;
	return true;
}

static bool parse_not_retained(const struct line *l, unsigned long long *count)
{
	size_t i = 2;
	long long v;

	if (!starts(l, "  ") || !parse_num(l->s, l->n, &i, &v))
		return false;
	if (find(l->s, l->n, i, " older causal-history event") != i ||
	    find(l->s, l->n, i, " not retained") == (size_t)-1)
		return false;
	*count = v;
	return true;
}

/* Reason / Suggestion: 2-space indented wrapped text. */
static const char *parse_text(struct parser *p, const struct line *lines, size_t n,
			      const char ***raw, size_t *n_raw)
{
	size_t i, strip;

	for (i = 0; i < n; i++) {
		const char **slot;

		strip = starts(&lines[i], "  ") ? 2 : 0;
		slot = VEC_PUSH(p, *raw, *n_raw);
		if (!slot)
			return NULL;
		*slot = pstrndup(p, lines[i].s + strip, lines[i].n - strip);
	}
	for (i = 0; i < n; i++)
		if (!starts(&lines[i], "  "))
			break;
	/* Mis-indented text (not the kernel's) is joined without stripping. */
	return unwrap_lines(p, lines, n, i == n ? 2 : 0, DIAG_TEXT_WIDTH - 2);
}

static void parse_causal_path(struct parser *p, struct diag_report *r, const struct line *lines,
			      size_t n)
{
	size_t i = 0;

	r->has_causal_path = true;
	while (i < n && !p->oom) {
		const struct line *l = &lines[i];
		unsigned long long count;
		struct diag_site site;

		if (is_blank(l)) {
			i++;
		} else if (parse_omitted(l, &count)) {
			struct diag_omission *o = VEC_PUSH(p, r->omitted, r->n_omitted);

			if (!o)
				return;
			o->count = count;
			o->before = r->n_events;
			i++;
		} else if (equals(l, "  no retained diagnostic events on this path")) {
			r->no_retained_events = true;
			i++;
		} else if (parse_not_retained(l, &count)) {
			r->not_retained = count;
			i++;
		} else if (parse_site(p, lines, &i, n, &site)) {
			struct diag_site *ev = VEC_PUSH(p, r->events, r->n_events);

			if (!ev) {
				free(site.src);
				free(site.insns);
				return;
			}
			*ev = site;
		} else {
			/* Unknown line: skip it rather than lose the rest. */
			free(site.src);
			free(site.insns);
			i++;
		}
	}
}

static void parse_extra(struct parser *p, struct diag_report *r, const char *title,
			const struct line *lines, size_t n)
{
	struct diag_section *sec = VEC_PUSH(p, r->extra, r->n_extra);
	size_t i;

	if (!sec)
		return;
	sec->title = title;
	for (i = 0; i < n; i++) {
		const char **slot = VEC_PUSH(p, sec->lines, sec->n_lines);

		if (!slot)
			return;
		*slot = pstrndup(p, lines[i].s, lines[i].n);
	}
	i = 0;
	while (i < n && !p->oom) {
		struct diag_site site, *s;

		if (is_blank(&lines[i])) {
			i++;
			continue;
		}
		if (!parse_site(p, lines, &i, n, &site)) {
			free(site.src);
			free(site.insns);
			i++;
			continue;
		}
		s = VEC_PUSH(p, sec->sites, sec->n_sites);
		if (!s) {
			free(site.src);
			free(site.insns);
			return;
		}
		*s = site;
	}
}

static void parse_header(struct parser *p, struct diag_report *r, const struct line *l)
{
	const char *s = l->s + strlen(HEADER_PREFIX);
	size_t n = l->n - strlen(HEADER_PREFIX), sep;
	unsigned int c;

	/* Known names first: a problem text may itself contain ": ". */
	for (c = 1; c < N_CATS; c++) {
		size_t cl = strlen(cat_names[c].name);

		if (n < cl || memcmp(s, cat_names[c].name, cl))
			continue;
		if (n == cl) {
			r->category_id = c;
			r->category = cat_names[c].name;
			r->problem = "";
			return;
		}
		if (n >= cl + 2 && !memcmp(s + cl, ": ", 2)) {
			r->category_id = c;
			r->category = cat_names[c].name;
			r->problem = pstrndup(p, s + cl + 2, n - cl - 2);
			return;
		}
	}
	r->category_id = DIAG_CAT_UNKNOWN;
	sep = find(s, n, 0, ": ");
	if (sep == (size_t)-1) {
		r->category = pstrndup(p, s, n);
		r->problem = "";
	} else {
		r->category = pstrndup(p, s, sep);
		r->problem = pstrndup(p, s + sep + 2, n - sep - 2);
	}
}

/* Parse the collected report lines (header first) into a new report. */
static void finish_report(struct parser *p)
{
	struct diag_log *log = &p->lp->pub;
	const struct line *lines = p->rl;
	size_t n = p->n_rl, i, last;
	struct diag_report *r;

	p->in_report = false;
	if (!n)
		return;

	/* Keep the blank line the kernel ends the report with, no more. */
	last = n;
	while (last > 1 && is_blank(&lines[last - 1]))
		last--;
	r = VEC_PUSH(p, log->reports, log->n_reports);
	if (!r)
		return;
	r->raw_off = lines[0].off;
	{
		const struct line *e = &lines[last < n ? last : last - 1];
		const char *q = e->s + e->n;

		/* Include the line's terminator when the input has one. */
		if (q < p->end && *q == '\r')
			q++;
		if (q < p->end && *q == '\n')
			q++;
		r->raw_len = (size_t)(q - p->text) - r->raw_off;
	}
	r->legacy_error = p->report_legacy;
	parse_header(p, r, &lines[0]);

	i = 1;
	while (i < last && !p->oom) {
		size_t start, stop;
		char *title;

		if (is_blank(&lines[i]) || !is_section_title(&lines[i])) {
			i++;	/* blank, or content outside any section */
			continue;
		}
		title = pstrndup(p, lines[i].s, lines[i].n - 1);
		if (!title)
			return;
		start = ++i;
		while (i < last && !(is_section_title(&lines[i]) && is_blank(&lines[i - 1])))
			i++;
		stop = i;
		while (stop > start && is_blank(&lines[stop - 1]))
			stop--;

		if (!strcmp(title, "Reason")) {
			r->reason = parse_text(p, lines + start, stop - start, &r->reason_lines,
					       &r->n_reason_lines);
		} else if (!strcmp(title, "Suggestion")) {
			r->suggestion = parse_text(p, lines + start, stop - start,
						   &r->suggestion_lines, &r->n_suggestion_lines);
			if (stop > start)
				r->complete = true;
		} else if (!strcmp(title, "At") && !r->has_at) {
			size_t pos = start;

			r->has_at = parse_site(p, lines, &pos, stop, &r->at);
			if (!r->has_at) {
				free(r->at.src);
				free(r->at.insns);
				memset(&r->at, 0, sizeof(r->at));
			}
		} else if (!strcmp(title, "Causal path") && !r->has_causal_path) {
			parse_causal_path(p, r, lines + start, stop - start);
		} else {
			parse_extra(p, r, title, lines + start, stop - start);
		}
	}
	if (!r->complete) {
		log->truncated = true;
		log->truncation |= DIAG_TRUNC_REPORT;
	}
}

/*
 * Whether @l continues the report being collected.  Report lines are blank,
 * a section title, or indented by two spaces; once the Suggestion text has
 * been followed by its blank line only another section title may follow.
 */
static bool report_continues(struct parser *p, const struct line *l)
{
	if (is_blank(l)) {
		if (p->in_suggestion && p->suggestion_text)
			p->suggestion_done = true;
		return true;
	}
	if (is_section_title(l)) {
		p->in_suggestion = equals(l, "Suggestion:");
		p->suggestion_text = false;
		p->suggestion_done = false;
		return true;
	}
	if (p->suggestion_done || !starts(l, "  "))
		return false;
	if (p->in_suggestion)
		p->suggestion_text = true;
	return true;
}

static void push_report_line(struct parser *p, const struct line *l)
{
	if (p->n_rl == p->cap_rl) {
		size_t cap = p->cap_rl ? p->cap_rl * 2 : 256;
		struct line *n = realloc(p->rl, cap * sizeof(*n));

		if (!n) {
			p->oom = true;
			return;
		}
		p->rl = n;
		p->cap_rl = cap;
	}
	p->rl[p->n_rl++] = *l;
}

/* ---- the pass ----------------------------------------------------------- */

static void trace_line(struct parser *p, const struct line *l)
{
	struct diag_log *log = &p->lp->pub;
	long long idx, lineno;
	size_t off, src_off, at;

	if (is_blank(l))
		return;
	if (parse_stats(l, &log->stats)) {
		/* The legacy error is the line before the stats (see diag.h). */
		p->have_legacy = p->last_valid && !p->last_structural;
		p->legacy = p->last;
		p->last_valid = false;
		return;
	}
	if (is_stats_family(l))
		return;
	/* The two state dumps that follow "infinite loop detected". */
	if (starts(l, "cur state: ") || starts(l, "old state: "))
		return;

	p->last = *l;
	p->last_valid = true;
	p->last_structural = true;
	p->last_reports = log->n_reports;
	if (parse_insn_line(l, &idx, &off)) {
		size_t end = find(l->s, l->n, off, "   ;");

		if (end == (size_t)-1)
			end = l->n;
		while (end > off && l->s[end - 1] == ' ')
			end--;
		p->insn_idx = idx;
		p->insn.s = l->s + off;
		p->insn.n = end - off;
		p->have_insn = true;
	} else if (parse_linfo_line(l, &src_off, &at, &lineno)) {
		size_t colon = rfind(l->s, l->n, ":");

		p->linfo_src.s = l->s + src_off;
		p->linfo_src.n = at - src_off;
		p->linfo_file.s = l->s + at + 3;
		p->linfo_file.n = colon - at - 3;
		p->linfo_line = lineno;
		p->have_linfo = true;
	} else if (!is_state_line(l)) {
		p->last_structural = false;
	}
}

static void handle_line(struct parser *p, const struct line *l)
{
	if (p->in_report) {
		if (!starts(l, HEADER_PREFIX) && report_continues(p, l)) {
			push_report_line(p, l);
			return;
		}
		finish_report(p);
	}
	if (starts(l, HEADER_PREFIX)) {
		p->in_report = true;
		p->in_suggestion = p->suggestion_text = p->suggestion_done = false;
		p->n_rl = 0;
		p->report_legacy = NULL;
		/* Only a line after the previous report belongs to this one. */
		if (p->last_valid && !p->last_structural &&
		    p->last_reports == p->lp->pub.n_reports)
			p->report_legacy = pstrndup(p, p->last.s, p->last.n);
		push_report_line(p, l);
		return;
	}
	trace_line(p, l);
}

static void free_site(struct diag_site *s)
{
	free(s->src);
	free(s->insns);
}

static void free_report(struct diag_report *r)
{
	size_t i;

	free_site(&r->at);
	for (i = 0; i < r->n_events; i++)
		free_site(&r->events[i]);
	free(r->events);
	free(r->omitted);
	for (i = 0; i < r->n_extra; i++) {
		size_t j;

		for (j = 0; j < r->extra[i].n_sites; j++)
			free_site(&r->extra[i].sites[j]);
		free(r->extra[i].sites);
		free(r->extra[i].lines);
	}
	free(r->extra);
	free(r->reason_lines);
	free(r->suggestion_lines);
}

void diag_free(struct diag_log *log)
{
	struct diag_priv *lp = (struct diag_priv *)log;
	struct arena_chunk *c, *next;
	size_t i;

	if (!log)
		return;
	for (i = 0; i < log->n_reports; i++)
		free_report(&log->reports[i]);
	free(log->reports);
	for (c = lp->arena; c; c = next) {
		next = c->next;
		free(c);
	}
	free(lp);
}

struct diag_log *diag_parse(const char *text, size_t len)
{
	struct parser p = {};
	struct diag_log *log;
	size_t off = 0;

	p.lp = calloc(1, sizeof(*p.lp));
	if (!p.lp)
		return NULL;
	log = &p.lp->pub;
	p.text = text;
	p.end = text + len;
	log->failing_insn = -1;
	log->linfo_line = -1;
	if (!text)
		len = 0;

	while (off < len && !p.oom) {
		const char *nl = memchr(text + off, '\n', len - off);
		struct line l = { .s = text + off, .off = off };

		l.n = nl ? (size_t)(nl - (text + off)) : len - off;
		off += l.n + (nl ? 1 : 0);
		/* Tolerate CRLF input by ignoring the CR. */
		if (l.n && l.s[l.n - 1] == '\r')
			l.n--;
		log->n_lines++;
		handle_line(&p, &l);
	}
	if (p.in_report && !p.oom)
		finish_report(&p);

	/* No stats: the legacy error is the last line of the trace. */
	if (!log->stats.present) {
		p.have_legacy = p.last_valid && !p.last_structural;
		p.legacy = p.last;
		log->truncated = true;
		log->truncation |= DIAG_TRUNC_NO_STATS;
	}
	if (p.have_legacy)
		log->legacy_error = pstrndup(&p, p.legacy.s, p.legacy.n);
	if (p.have_insn) {
		log->failing_insn = (int)p.insn_idx;
		log->failing_insn_text = pstrndup(&p, p.insn.s, p.insn.n);
	}
	if (p.have_linfo) {
		log->linfo_text = pstrndup(&p, p.linfo_src.s, p.linfo_src.n);
		log->linfo_file = pstrndup(&p, p.linfo_file.s, p.linfo_file.n);
		log->linfo_line = (int)p.linfo_line;
	}
	free(p.rl);
	if (p.oom) {
		diag_free(log);
		return NULL;
	}
	log->has_report = log->n_reports > 0;
	log->report = log->has_report ? &log->reports[0] : NULL;
	return log;
}
