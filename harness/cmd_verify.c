// SPDX-License-Identifier: GPL-2.0
/* cmd_verify.c — `bpfuml verify FILE`: load every program (or the ones named)
 * in the guest and report each verdict with the verifier's own words.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfuml.h"
#include "diag.h"
#include "junit.h"
#include "options.h"
#include "summary.h"
#include "term.h"
#include "verify_matrix.h"
#include "watch.h"

/* One line per program the kernel did not accept, in compiler style. */
/* A program's finding without a verifier report: as a gcc line or a
 * GitHub annotation on FILE. */
static void print_plain_error(bool github, const char *file, const char *prog_name,
			      const char *what, const char *detail)
{
	char message[8192];

	if (github) {
		snprintf(message, sizeof(message), "%s%s%s", what, detail ? ": " : "", detail ?: "");
		diag_github_annotation(stdout, file, 0, 0, "Verifier", prog_name, message);
		return;
	}
	term_puts(stdout, file);
	fprintf(stdout, ": error: %s", what);
	if (detail) {
		fputs(": ", stdout);
		term_puts(stdout, detail);
	}
	diag_gcc_prog_suffix(stdout, prog_name);
}

/* --format gcc and github: a line per finding, nothing for an accepted
 * program. */
static void print_findings(struct session *s, json_object *progs, const char *file, bool github)
{
	size_t i, n = json_object_array_length(progs);

	for (i = 0; i < n; i++) {
		struct program_verdict v;

		program_verdict_init(&v, s, json_object_array_get_idx(progs, i));
		if (v.accepted)
			;
		else if (v.not_loaded)
			print_plain_error(github, file, v.name, "program could not be loaded", v.not_loaded);
		else if (v.log && github)
			diag_print_github(stdout, v.log, v.name, file);
		else if (v.log)
			diag_print_gcc(stdout, v.log, v.name, file);
		else
			print_plain_error(github, file, v.name, "rejected without a verifier log", NULL);
		program_verdict_free(&v);
	}
}

/* One object's verdicts, as the guest returned them. */
struct verified {
	const char *file;	/* as the user named it */
	json_object *result;	/* its entry of the guest's "objects" */
};

static json_object *programs_of(const struct verified *v)
{
	json_object *progs = NULL;

	json_object_object_get_ex(v->result, "programs", &progs);
	return progs;
}

static size_t count_failed(json_object *progs)
{
	size_t i, failed = 0;

	for (i = 0; progs && i < json_object_array_length(progs); i++)
		failed += program_failed(json_object_array_get_idx(progs, i));
	return failed;
}

/* Why a whole object could not be judged (libbpf could not open it). */
static const char *object_error(const struct verified *v)
{
	return programs_of(v) ? NULL : json_str(v->result, "error") ?: "the guest returned no programs";
}

/* Give each file its entry of the guest's "objects".  One file that could
 * not be judged at all is a usage error, as a missing file is; of several,
 * each says its own error in the document. */
static int judge_files(const struct common_opts *opts, struct verified *files, json_object *staged,
		       int nr_files)
{
	json_object *available;
	int i;

	for (i = 0; i < nr_files; i++)
		files[i].result = json_object_array_get_idx(staged, i);
	if (nr_files > 1 || !object_error(&files[0]))
		return EXIT_OK;
	if (json_object_object_get_ex(files[0].result, "available_programs", &available))
		return fail(opts, EXIT_USAGE, "input", "%s: %s; it has: %s", files[0].file,
			    object_error(&files[0]), json_object_to_json_string(available));
	return fail(opts, EXIT_USAGE, "input", "%s: %s", files[0].file, object_error(&files[0]));
}

/* The SARIF log of every program's verdict, or NULL when out of memory. */
static json_object *sarif_log(struct session *s, const struct verified *files, size_t nr_files)
{
	size_t i, f, n = 0, k = 0;
	struct diag_sarif_result *results;
	struct program_verdict *verdicts;
	json_object *sarif;

	for (f = 0; f < nr_files; f++)
		n += programs_of(&files[f]) ? json_object_array_length(programs_of(&files[f])) : 0;
	results = calloc(n ?: 1, sizeof(*results));
	verdicts = calloc(n ?: 1, sizeof(*verdicts));
	for (f = 0; results && verdicts && f < nr_files; f++) {
		json_object *progs = programs_of(&files[f]);

		for (i = 0; progs && i < json_object_array_length(progs); i++, k++) {
			program_verdict_init(&verdicts[k], s, json_object_array_get_idx(progs, i));
			results[k].prog_name = verdicts[k].name;
			results[k].object_file = files[f].file;
			results[k].log = verdicts[k].log;
		}
	}
	sarif = results && verdicts ? diag_to_sarif(results, n) : NULL;
	for (i = 0; verdicts && i < k; i++)
		program_verdict_free(&verdicts[i]);
	free(results);
	free(verdicts);
	return sarif;
}

static void print_sarif(struct session *s, const struct common_opts *opts,
			const struct verified *files, size_t nr_files)
{
	json_object *sarif = sarif_log(s, files, nr_files);

	if (sarif)
		print_document(sarif);
	else
		fail(opts, EXIT_INFRA, "infrastructure", "out of memory writing the SARIF log");
	json_object_put(sarif);
}

/* The loader fixups the agent applied to the object (an array), or NULL. */
static json_object *fixups_of(const struct verified *v)
{
	json_object *fixups = NULL;

	json_object_object_get_ex(v->result, "fixups", &fixups);	/* an array: guest_result.c */
	return fixups;
}

static json_object *file_json(struct session *s, const struct verified *v)
{
	json_object *doc = json_object_new_object(), *list = json_object_new_array();
	json_object *progs = programs_of(v);
	size_t i;

	json_object_object_add(doc, "file", json_object_new_string(v->file));
	json_object_object_add(doc, "fixups", json_object_get(fixups_of(v)) ?: json_object_new_array());
	if (object_error(v))
		json_object_object_add(doc, "error", json_object_new_string(object_error(v)));
	for (i = 0; progs && i < json_object_array_length(progs); i++)
		json_object_array_add(list, program_json(s, json_object_array_get_idx(progs, i)));
	json_object_object_add(doc, "programs", list);
	json_object_object_add(doc, "exit_code", json_object_new_int(object_error(v) ? EXIT_USAGE :
					count_failed(progs) ? EXIT_REJECTED : EXIT_OK));
	return doc;
}

/* "FILE: could not be opened: libbpf's reason" (human output). */
static void print_open_error(const struct verified *v)
{
	term_puts(stdout, v->file);
	fputs(": could not be opened: ", stdout);
	term_puts(stdout, object_error(v));
	putchar('\n');
}

static void print_human(struct session *s, const struct verified *v, const struct common_opts *opts)
{
	json_object *progs = programs_of(v);
	size_t i, n = progs ? json_object_array_length(progs) : 0, failed = count_failed(progs);

	if (object_error(v)) {
		print_open_error(v);
		return;
	}
	if (fixups_of(v)) {
		term_puts(stdout, v->file);
		puts(": verified with fixups (as its loader would; --no-fixups to verify it as built):");
		/* Each names the object's maps and programs: see term.h. */
		for (i = 0; i < json_object_array_length(fixups_of(v)); i++) {
			fputs("  ", stdout);
			term_puts(stdout, json_object_get_string(json_object_array_get_idx(fixups_of(v), i)));
			putchar('\n');
		}
		putchar('\n');
	}
	for (i = 0; i < n; i++) {
		if (i)
			putchar('\n');
		print_program(stdout, s, json_object_array_get_idx(progs, i), opts);
	}
	putchar('\n');
	term_puts(stdout, v->file);
	printf(": %zu program(s), %zu accepted, %zu not accepted\n", n, n - failed, failed);
}

/* Exit code: 2 if an object could not be opened, else 1 if a program was
 * not accepted, else 0. */
/* For --watch's "since last" line: each program's verdict. */
static void note_verdicts(const struct verified *v)
{
	json_object *progs = programs_of(v);
	char what[PATH_MAX + 300];

	if (!progs) {
		watch_note_verdict(v->file, "could not be opened");
		return;
	}
	for (size_t i = 0; i < json_object_array_length(progs); i++) {
		json_object *p = json_object_array_get_idx(progs, i);

		snprintf(what, sizeof(what), "%s %s", v->file, json_str(p, "name") ?: "?");
		watch_note_verdict(what, json_str(p, "verdict") ?: "?");
	}
}

static int print_verdicts(struct session *s, const struct common_opts *opts,
			  const struct verified *files, size_t nr_files)
{
	json_object *doc, *list;
	int code = EXIT_OK;
	size_t f;

	for (f = 0; f < nr_files; f++) {
		if (object_error(&files[f]))
			code = EXIT_USAGE;
		else if (count_failed(programs_of(&files[f])) && code == EXIT_OK)
			code = EXIT_REJECTED;
		if (watch_verdicts)
			note_verdicts(&files[f]);
	}
	if (opts->format == FORMAT_GCC || opts->format == FORMAT_GITHUB) {
		bool github = opts->format == FORMAT_GITHUB;

		for (f = 0; f < nr_files; f++)
			if (object_error(&files[f]))
				print_plain_error(github, files[f].file, NULL, "could not be opened",
						  object_error(&files[f]));
			else
				print_findings(s, programs_of(&files[f]), files[f].file, github);
	} else if (opts->format == FORMAT_SARIF) {
		print_sarif(s, opts, files, nr_files);
	} else if (opts->json) {
		/* One file: its document.  Several: one document per file in "files". */
		if (nr_files == 1) {
			doc = file_json(s, &files[0]);
		} else {
			doc = json_object_new_object();
			list = json_object_new_array();
			for (f = 0; f < nr_files; f++)
				json_object_array_add(list, file_json(s, &files[f]));
			json_object_object_add(doc, "files", list);
		}
		json_object_object_add(doc, "schema", json_object_new_string("bpfuml-verify/1"));
		json_object_object_add(doc, "backend", json_object_new_string(opts->backend));
		json_object_object_add(doc, "bpf_mode", json_object_new_string(bpf_mode_of(opts)));
		json_object_object_add(doc, "kernel", kernel_json(s));
		json_object_object_add(doc, "accel", accel_json(s));
		json_object_object_add(doc, "confinement", confinement_json(s));
		json_object_object_add(doc, "timing", timing_json(s));
		json_object_object_add(doc, "exit_code", json_object_new_int(code));
		print_document(doc);
		json_object_put(doc);
	} else {
		for (f = 0; f < nr_files; f++) {
			if (f)
				putchar('\n');
			print_human(s, &files[f], opts);
		}
		print_timing(stdout, s);
	}
	return code;
}

/* The files CI reads, written after the report: --summary (Markdown for a
 * CI page, appended), --junit, --sarif (whatever --format prints). */
struct ci_reports {
	const char *summary, *junit, *sarif;
};

static void write_ci_reports(struct session *s, const struct ci_reports *ci, const struct verified *files,
			     size_t nr_files)
{
	struct summary_object *objects = calloc(nr_files, sizeof(*objects));
	size_t f;

	for (f = 0; objects && f < nr_files; f++)
		objects[f] = (struct summary_object){ .file = files[f].file, .programs = programs_of(&files[f]),
						      .error = object_error(&files[f]) };
	if (ci->summary && (!objects || summary_verify(ci->summary, s, objects, nr_files)))
		fprintf(stderr, "bpfuml: --summary %s: %s\n", ci->summary, strerror(objects ? errno : ENOMEM));
	if (ci->junit && (!objects || junit_verify(ci->junit, s, objects, nr_files, (s->exit_ns - s->start_ns) / 1e9)))
		fprintf(stderr, "bpfuml: --junit %s: cannot write it\n", ci->junit);
	if (ci->sarif) {
		json_object *sarif = sarif_log(s, files, nr_files);
		int err = sarif ? write_document(ci->sarif, sarif) : -ENOMEM;

		if (err)
			fprintf(stderr, "bpfuml: --sarif %s: %s\n", ci->sarif, strerror(-err));
		json_object_put(sarif);
	}
	free(objects);
}

/* "KEY=VALUE" (blanks around the '=' allowed, as veristat's -G "x = 1")
 * into *PAIRS, an object made on first use; usage error otherwise. */
static int add_pair(const struct common_opts *opts, json_object **pairs, const char *option, const char *form,
		    const char *arg)
{
	const char *eq = strchr(arg, '='), *value;
	size_t key_len;

	if (!eq)
		return fail(opts, EXIT_USAGE, "usage", "%s wants %s, not '%s'", option, form, arg);
	for (key_len = eq - arg; key_len && arg[key_len - 1] == ' '; key_len--)
		;
	for (value = eq + 1; *value == ' '; value++)
		;
	if (!key_len || !*value)
		return fail(opts, EXIT_USAGE, "usage", "%s wants %s, not '%s'", option, form, arg);
	if (!*pairs)
		*pairs = json_object_new_object();
	json_object_object_add_ex(*pairs, strndupa(arg, key_len), json_object_new_string(value), 0);
	return EXIT_OK;
}

int cmd_verify(int argc, char **argv)
{
	struct common_opts opts = COMMON_OPTS_DEFAULT;
	json_object *job, *wanted = NULL, *staged, *objects, *targets = NULL, *globals = NULL;
	bool no_fixups = false;
	unsigned int mem_mb = 0;
	struct verified *files = NULL;
	struct bpfuml_paths paths;
	struct session s;
	const char *guest_error;
	struct ci_reports ci = { 0 };
	const char *kernels = NULL;
	char name[32];
	int c, code, nr_files, i;

	static const struct option longopts[] = {
		COMMON_LONGOPTS,
		{ "prog", required_argument, NULL, 'p' },
		{ "no-fixups", no_argument, NULL, 'F' },
		{ "attach-target", required_argument, NULL, 'A' },
		{ "set-global", required_argument, NULL, 'G' },
		{ "summary", required_argument, NULL, 'S' },
		{ "junit", required_argument, NULL, 'J' },
		{ "sarif", required_argument, NULL, 'R' },
		{ "mem", required_argument, NULL, 'M' },
		{ "kernels", required_argument, NULL, 'K' },
		{ 0 },
	};
	while ((c = getopt_long(argc, argv, "p:G:", longopts, NULL)) != -1) {
		if (c == 'p') {
			if (!wanted)
				wanted = json_object_new_array();
			json_object_array_add(wanted, json_object_new_string(optarg));
			continue;
		}
		if (c == 'F') {
			no_fixups = true;
			continue;
		}
		if (c == 'K') {
			kernels = optarg;
			continue;
		}
		if (c == 'S' || c == 'J' || c == 'R') {
			*(c == 'S' ? &ci.summary : c == 'J' ? &ci.junit : &ci.sarif) = optarg;
			continue;
		}
		if (c == 'A' || c == 'G') {
			code = c == 'A' ? add_pair(&opts, &targets, "--attach-target", "PROG=FUNCTION", optarg) :
					  add_pair(&opts, &globals, "--set-global", "NAME=VALUE", optarg);
			if (code != EXIT_OK) {
				json_object_put(wanted);
				json_object_put(targets);
				json_object_put(globals);
				return code;
			}
			continue;
		}
		if (c == 'M') {
			code = option_uint(&opts, "--mem", optarg, SESSION_MEM_MIN_MB, SESSION_MEM_MAX_MB,
					   "MiB", &mem_mb);
			code = code == EXIT_OK ? -1 : code;
		} else {
			code = common_option(&opts, c, optarg);
		}
		if (code >= 0) {
			json_object_put(wanted);
			json_object_put(targets);
			json_object_put(globals);
			return code;
		}
	}
	common_finish(&opts);
	if (kernels) {
		json_object_put(wanted);
		json_object_put(targets);
		json_object_put(globals);
		if (ci.summary || ci.junit || ci.sarif)
			return fail(&opts, EXIT_USAGE, "usage", "--summary, --junit and --sarif are for one "
				    "kernel: not with --kernels (--format sarif prints every kernel's)");
		return verify_matrix(&opts, kernels, argc, argv);
	}
	/* Found unwritable after the boot, the run would be lost. */
	code = ci.summary ? report_file_check(&opts, "--summary", ci.summary) : EXIT_OK;
	if (code == EXIT_OK && ci.junit)
		code = report_file_check(&opts, "--junit", ci.junit);
	if (code == EXIT_OK && ci.sarif)
		code = report_file_check(&opts, "--sarif", ci.sarif);
	if (code != EXIT_OK) {
		json_object_put(wanted);
		json_object_put(targets);
		json_object_put(globals);
		return code;
	}
	nr_files = argc - optind;
	if (nr_files < 1 || (wanted && nr_files > 1)) {
		json_object_put(wanted);
		json_object_put(targets);
		json_object_put(globals);
		return fail(&opts, EXIT_USAGE, "usage", "usage: bpfuml verify FILE... [--prog NAME]... "
			    "[--log-level 1|2] [--json] (--prog with one FILE only); see bpfuml help verify");
	}
	code = open_guest_session(&s, &paths, &opts);
	if (code != EXIT_OK) {
		json_object_put(wanted);
		json_object_put(targets);
		json_object_put(globals);
		return code;
	}
	s.mem_mb = mem_mb;

	job = json_object_new_object();
	json_object_object_add(job, "command", json_object_new_string("verify"));
	json_object_object_add(job, "programs", wanted);
	json_object_object_add(job, "log_level", json_object_new_int(opts.log_level));
	json_object_object_add(job, "fixups", json_object_new_boolean(!no_fixups));
	if (targets)
		json_object_object_add(job, "attach_targets", targets);
	if (globals)
		json_object_object_add(job, "globals", globals);
	files = calloc(nr_files, sizeof(*files));
	code = files ? EXIT_OK : fail(&opts, EXIT_INFRA, "infrastructure", "out of memory");
	objects = json_object_new_array();
	json_object_object_add(job, "objects", objects);
	/* Every input is checked (and compiled) before the one boot. */
	for (i = 0; code == EXIT_OK && i < nr_files; i++) {
		files[i].file = argv[optind + i];
		snprintf(name, sizeof(name), VERIFY_OBJECT, (size_t)i);
		code = stage_object(&s, &paths, &opts, files[i].file, name);
		json_object_array_add(objects, json_object_new_string(name));
	}
	if (code == EXIT_OK)
		code = boot_guest(&s, &paths, &opts, job);
	if (code == EXIT_OK) {
		guest_error = json_str(s.result, "error");
		if (!json_object_object_get_ex(s.result, "objects", &staged) ||
		    (int)json_object_array_length(staged) != nr_files)
			code = fail(&opts, EXIT_INFRA, "no-answer", "the guest returned %s",
				    guest_error ?: "no verdicts for the objects");
		else
			code = judge_files(&opts, files, staged, nr_files);
		if (code == EXIT_OK) {
			code = print_verdicts(&s, &opts, files, nr_files);
			if (ci.summary || ci.junit || ci.sarif)
				write_ci_reports(&s, &ci, files, nr_files);
		}
	}
	if (opts.keep)
		fprintf(stderr, "bpfuml: run directory kept: %s\n", s.run_dir);
	session_destroy(&s);
	json_object_put(job);
	free(files);
	return code;
}
