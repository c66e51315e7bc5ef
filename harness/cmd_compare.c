// SPDX-License-Identifier: GPL-2.0
/* cmd_compare.c — `bpfuml compare OLD.json NEW.json`: two `verify --json`
 * documents side by side, as veristat -C compares two runs: per program,
 * its verdict and the instructions the verifier processed in each, and
 * what changed.  Needs no guest.
 *
 * Programs are matched by their object's file name (its last path
 * component, so that build trees and kernels can differ) and program name.
 * The documents are the user's files: read with a size cap, their shape
 * checked, a member of the wrong type ignored as absent.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpfuml.h"
#include "options.h"
#include "term.h"

/* A verify document of many objects is ~2 KiB per program without logs;
 * with level-2 logs it can be large, but never this large. */
#define COMPARE_DOC_MAX ((size_t)1 << 30)

struct side {
	const char *verdict;	/* NULL: not in this document */
	long long insns;	/* -1: no statistics line */
};

struct row {
	const char *file, *name;	/* the file's last component */
	struct side old, new;
};

struct rows {
	struct row *v;
	size_t n, cap;
};

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

static json_object *member_of_type(json_object *obj, const char *key, enum json_type type)
{
	json_object *v = NULL;

	return json_object_object_get_ex(obj, key, &v) && json_object_is_type(v, type) ? v : NULL;
}

static struct row *find_or_add(struct rows *rows, const char *file, const char *name)
{
	size_t i;

	for (i = 0; i < rows->n; i++)
		if (!strcmp(rows->v[i].file, file) && !strcmp(rows->v[i].name, name))
			return &rows->v[i];
	if (rows->n == rows->cap) {
		size_t cap = rows->cap ? rows->cap * 2 : 64;
		struct row *grown = realloc(rows->v, cap * sizeof(*grown));

		if (!grown)
			return NULL;
		rows->v = grown;
		rows->cap = cap;
	}
	rows->v[rows->n] = (struct row){ .file = file, .name = name,
					 .old = { NULL, -1 }, .new = { NULL, -1 } };
	return &rows->v[rows->n++];
}

/* The programs of one file entry ({"file", "programs"}) into ROWS. */
static int add_file(struct rows *rows, json_object *entry, bool is_new)
{
	json_object *file = member_of_type(entry, "file", json_type_string);
	json_object *progs = member_of_type(entry, "programs", json_type_array);
	size_t i;

	if (!file || !progs)
		return 0;	/* an object that could not be opened: no programs */
	for (i = 0; i < json_object_array_length(progs); i++) {
		json_object *p = json_object_array_get_idx(progs, i), *name, *verdict, *diag, *stats, *insns;
		struct row *row;
		struct side *side;

		name = member_of_type(p, "name", json_type_string);
		verdict = member_of_type(p, "verdict", json_type_string);
		if (!name || !verdict)
			continue;
		row = find_or_add(rows, base_name(json_object_get_string(file)), json_object_get_string(name));
		if (!row)
			return -ENOMEM;
		side = is_new ? &row->new : &row->old;
		side->verdict = json_object_get_string(verdict);
		diag = member_of_type(p, "diagnostics", json_type_object);
		stats = diag ? member_of_type(diag, "stats", json_type_object) : NULL;
		insns = stats ? member_of_type(stats, "insns_processed", json_type_int) : NULL;
		side->insns = insns ? json_object_get_int64(insns) : -1;
	}
	return 0;
}

/* Read PATH, a bpfuml-verify/1 document, into ROWS; DOC keeps the strings. */
static int load_document(const struct common_opts *opts, const char *path, bool is_new, struct rows *rows,
			 json_object **doc)
{
	json_object *files;
	char why[256];
	size_t i;
	int err = 0;

	*doc = read_our_document(path, COMPARE_DOC_MAX, "verify", why, sizeof(why));
	if (!*doc)
		return fail(opts, EXIT_USAGE, "input", "%s %s; give the output of `bpfuml verify --json`", path, why);
	/* One file: the document is its entry.  Several: "files". */
	files = member_of_type(*doc, "files", json_type_array);
	if (!files)
		err = add_file(rows, *doc, is_new);
	for (i = 0; files && !err && i < json_object_array_length(files); i++)
		err = add_file(rows, json_object_array_get_idx(files, i), is_new);
	if (err)
		return fail(opts, EXIT_INFRA, "infrastructure", "out of memory");
	return EXIT_OK;
}

static bool verdict_changed(const struct row *r)
{
	return !r->old.verdict || !r->new.verdict || strcmp(r->old.verdict, r->new.verdict);
}

static json_object *side_json(const struct side *s)
{
	json_object *o;

	if (!s->verdict)
		return NULL;
	o = json_object_new_object();
	json_object_object_add(o, "verdict", json_object_new_string(s->verdict));
	json_object_object_add(o, "insns_processed", s->insns >= 0 ? json_object_new_int64(s->insns) : NULL);
	return o;
}

static void print_side_insns(long long insns)
{
	if (insns >= 0)
		printf("  %10lld", insns);
	else
		printf("  %10s", "-");
}

static void print_table(const struct rows *rows, size_t file_w, size_t name_w)
{
	size_t i;

	printf("%-*s  %-*s  %-11s  %-11s  %10s  %10s  %s\n", (int)file_w, "File", (int)name_w, "Program",
	       "Verdict (A)", "Verdict (B)", "Insns (A)", "Insns (B)", "Insns (DIFF)");
	for (i = 0; i < rows->n; i++) {
		const struct row *r = &rows->v[i];

		term_puts(stdout, r->file);
		printf("%*s  ", (int)(file_w - strlen(r->file)), "");
		term_puts(stdout, r->name);
		printf("%*s  %-11s  %-11s", (int)(name_w - strlen(r->name)), "", r->old.verdict ?: "(none)",
		       r->new.verdict ?: "(none)");
		print_side_insns(r->old.insns);
		print_side_insns(r->new.insns);
		if (r->old.insns >= 0 && r->new.insns >= 0) {
			long long d = r->new.insns - r->old.insns;

			printf("  %+lld", d);
			if (d && r->old.insns)
				printf(" (%+.2f%%)", 100.0 * d / r->old.insns);
		}
		puts(verdict_changed(r) ? "  <- verdict" : "");
	}
}

int cmd_compare(int argc, char **argv)
{
	static const struct option longopts[] = { COMMON_LONGOPTS, { 0 } };
	struct common_opts opts = COMMON_OPTS_DEFAULT;
	json_object *docs[2] = { NULL, NULL };
	size_t i, file_w = 4, name_w = 7, changed = 0, insns_changed = 0;
	struct rows rows = { 0 };
	int c, code;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		code = common_option(&opts, c, optarg);
		if (code >= 0)
			return code;
	}
	common_finish(&opts);
	if (argc - optind != 2)
		return fail(&opts, EXIT_USAGE, "usage", "usage: bpfuml compare OLD.json NEW.json [--json] "
			    "(each the output of bpfuml verify --json); see bpfuml help compare");
	code = load_document(&opts, argv[optind], false, &rows, &docs[0]);
	if (code == EXIT_OK)
		code = load_document(&opts, argv[optind + 1], true, &rows, &docs[1]);
	if (code != EXIT_OK)
		goto out;

	for (i = 0; i < rows.n; i++) {
		changed += verdict_changed(&rows.v[i]);
		insns_changed += rows.v[i].old.insns != rows.v[i].new.insns;
		if (strlen(rows.v[i].file) > file_w)
			file_w = strlen(rows.v[i].file);
		if (strlen(rows.v[i].name) > name_w)
			name_w = strlen(rows.v[i].name);
	}
	/* Any verdict changed, or a program on one side only: exit 1. */
	code = changed ? EXIT_REJECTED : EXIT_OK;
	if (opts.json) {
		json_object *doc = json_object_new_object(), *list = json_object_new_array();

		json_object_object_add(doc, "schema", json_object_new_string("bpfuml-compare/1"));
		json_object_object_add(doc, "old", json_object_new_string(argv[optind]));
		json_object_object_add(doc, "new", json_object_new_string(argv[optind + 1]));
		for (i = 0; i < rows.n; i++) {
			const struct row *r = &rows.v[i];
			json_object *o = json_object_new_object();

			json_object_object_add(o, "file", json_object_new_string(r->file));
			json_object_object_add(o, "name", json_object_new_string(r->name));
			json_object_object_add(o, "old", side_json(&r->old));
			json_object_object_add(o, "new", side_json(&r->new));
			json_object_object_add(o, "verdict_changed", json_object_new_boolean(verdict_changed(r)));
			json_object_object_add(o, "insns_diff", r->old.insns >= 0 && r->new.insns >= 0 ?
					       json_object_new_int64(r->new.insns - r->old.insns) : NULL);
			json_object_array_add(list, o);
		}
		json_object_object_add(doc, "programs", list);
		json_object_object_add(doc, "verdicts_changed", json_object_new_int64(changed));
		json_object_object_add(doc, "insns_changed", json_object_new_int64(insns_changed));
		json_object_object_add(doc, "exit_code", json_object_new_int(code));
		print_document(doc);
		json_object_put(doc);
	} else {
		print_table(&rows, file_w, name_w);
		printf("%zu program(s): %zu verdict(s) changed (or on one side only), "
		       "%zu instruction count(s) changed\n", rows.n, changed, insns_changed);
	}
out:
	free(rows.v);
	json_object_put(docs[0]);
	json_object_put(docs[1]);
	return code;
}
