// SPDX-License-Identifier: GPL-2.0
/* cmd_verify.c — `bpfuml verify FILE`: load every program (or the ones named)
 * in the guest and report each verdict with the verifier's own words.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfuml.h"
#include "diag.h"
#include "options.h"

/* One line per program the kernel did not accept, in compiler style. */
static void print_gcc(struct session *s, json_object *progs, const char *file)
{
	size_t i, n = json_object_array_length(progs);

	for (i = 0; i < n; i++) {
		json_object *prog = json_object_array_get_idx(progs, i);
		const char *verdict = json_str(prog, "verdict");
		struct diag_log *log;
		char *text;

		if (!strcmp(verdict, "accepted"))
			continue;
		if (!strcmp(verdict, "not_loaded")) {
			printf("%s: error: program could not be loaded: %s [prog %s]\n", file,
			       json_str(prog, "error") ?: "unknown", json_str(prog, "name"));
			continue;
		}
		log = program_log(s, prog, &text);
		if (log)
			diag_print_gcc(stdout, log, json_str(prog, "name"), file);
		else
			printf("%s: error: rejected without a verifier log [prog %s]\n", file,
			       json_str(prog, "name"));
		diag_free(log);
		free(text);
	}
}

static void print_sarif(struct session *s, json_object *progs, const char *file)
{
	size_t i, n = json_object_array_length(progs);
	struct diag_sarif_result *results = calloc(n ?: 1, sizeof(*results));
	struct diag_log **logs = calloc(n ?: 1, sizeof(*logs));
	char **texts = calloc(n ?: 1, sizeof(*texts));
	json_object *sarif;

	for (i = 0; results && logs && texts && i < n; i++) {
		json_object *prog = json_object_array_get_idx(progs, i);

		logs[i] = program_log(s, prog, &texts[i]);
		results[i].prog_name = json_str(prog, "name");
		results[i].object_file = file;
		results[i].log = logs[i];
	}
	sarif = results && logs && texts ? diag_to_sarif(results, n) : NULL;
	puts(sarif ? json_object_to_json_string_ext(sarif, JSON_C_TO_STRING_PRETTY |
						    JSON_C_TO_STRING_NOSLASHESCAPE) : "{}");
	json_object_put(sarif);
	for (i = 0; logs && texts && i < n; i++) {
		diag_free(logs[i]);
		free(texts[i]);
	}
	free(results);
	free(logs);
	free(texts);
}

static int print_verdicts(struct session *s, const struct common_opts *opts, const char *file)
{
	json_object *progs = NULL, *doc, *list;
	json_object *none = json_object_new_array();
	size_t i, n, failed = 0;

	if (!json_object_object_get_ex(s->result, "programs", &progs))
		progs = none;
	n = json_object_array_length(progs);
	for (i = 0; i < n; i++)
		failed += program_failed(json_object_array_get_idx(progs, i));

	if (opts->format == FORMAT_GCC) {
		print_gcc(s, progs, file);
	} else if (opts->format == FORMAT_SARIF) {
		print_sarif(s, progs, file);
	} else if (opts->json) {
		doc = json_object_new_object();
		list = json_object_new_array();
		json_object_object_add(doc, "schema", json_object_new_string("bpfuml-verify/1"));
		json_object_object_add(doc, "file", json_object_new_string(file));
		json_object_object_add(doc, "backend", json_object_new_string(opts->backend));
		json_object_object_add(doc, "accel", accel_json(s));
		for (i = 0; i < n; i++)
			json_object_array_add(list, program_json(s, json_object_array_get_idx(progs, i)));
		json_object_object_add(doc, "programs", list);
		json_object_object_add(doc, "timing", timing_json(s));
		json_object_object_add(doc, "exit_code", json_object_new_int(failed ? EXIT_REJECTED : EXIT_OK));
		puts(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY |
						    JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(doc);
	} else {
		for (i = 0; i < n; i++) {
			if (i)
				putchar('\n');
			print_program(stdout, s, json_object_array_get_idx(progs, i), opts);
		}
		printf("\n%s: %zu program(s), %zu accepted, %zu not accepted\n", file, n, n - failed, failed);
		print_timing(stdout, s);
	}
	json_object_put(none);
	return failed ? EXIT_REJECTED : EXIT_OK;
}

int cmd_verify(int argc, char **argv)
{
	struct common_opts opts = COMMON_OPTS_DEFAULT;
	json_object *job, *wanted = NULL, *available;
	struct bpfuml_paths paths;
	struct session s;
	const char *file, *guest_error;
	int c, code;

	static const struct option longopts[] = {
		COMMON_LONGOPTS,
		{ "prog", required_argument, NULL, 'p' },
		{ 0 },
	};
	while ((c = getopt_long(argc, argv, "p:", longopts, NULL)) != -1) {
		if (c == 'p') {
			if (!wanted)
				wanted = json_object_new_array();
			json_object_array_add(wanted, json_object_new_string(optarg));
			continue;
		}
		code = common_option(&opts, c, optarg);
		if (code >= 0) {
			json_object_put(wanted);
			return code;
		}
	}
	common_finish(&opts);
	if (optind != argc - 1) {
		json_object_put(wanted);
		return fail(&opts, EXIT_USAGE, "usage", "usage: bpfuml verify FILE [--prog NAME]... "
			    "[--log-level 1|2] [--json]; see bpfuml help verify");
	}
	file = argv[optind];
	if (paths_init(&paths)) {
		json_object_put(wanted);
		return fail(&opts, EXIT_INFRA, "infrastructure", "cannot locate bpfuml's build directory");
	}
	if (session_create(&s)) {
		json_object_put(wanted);
		return fail(&opts, EXIT_INFRA, "infrastructure", "cannot create a run directory");
	}
	s.keep = opts.keep;
	session_install_signal_handlers(&s);

	job = json_object_new_object();
	json_object_object_add(job, "command", json_object_new_string("verify"));
	json_object_object_add(job, "object", json_object_new_string("object.bpf.o"));
	json_object_object_add(job, "programs", wanted);
	json_object_object_add(job, "log_level", json_object_new_int(opts.log_level));

	code = stage_object(&s, &paths, &opts, file);
	if (code == EXIT_OK)
		code = boot_guest(&s, &paths, &opts, job);
	if (code == EXIT_OK) {
		guest_error = json_str(s.result, "error");
		if (guest_error && json_object_object_get_ex(s.result, "available_programs", &available))
			code = fail(&opts, EXIT_USAGE, "input", "%s: %s; it has: %s", file, guest_error,
				    json_object_to_json_string(available));
		else if (guest_error && !json_object_object_get_ex(s.result, "programs", NULL))
			code = fail(&opts, EXIT_USAGE, "input", "%s: %s", file, guest_error);
		else
			code = print_verdicts(&s, &opts, file);
	}
	if (opts.keep)
		fprintf(stderr, "bpfuml: run directory kept: %s\n", s.run_dir);
	session_destroy(&s);
	json_object_put(job);
	return code;
}
