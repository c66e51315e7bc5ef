// SPDX-License-Identifier: GPL-2.0
/* cmd_parse.c — `bpfuml parse LOGFILE`: the diagnostics of a saved verifier
 * log, in any output format, without booting anything.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpfuml.h"
#include "diag.h"
#include "options.h"
#include "term.h"

enum { OPT_PROG = 0x200, OPT_SOURCE };

/*
 * The kernel's log buffer is at most UINT_MAX >> 2 bytes (kernel/bpf/log.c):
 * a longer "log" is not one, and reading /dev/zero must end.
 */
#define MAX_LOG_BYTES ((size_t)(UINT32_MAX >> 2))

static void print_human(const struct diag_log *log, const char *path)
{
	if (log->legacy_error) {
		fputs("error: ", stdout);
		term_puts(stdout, log->legacy_error);
		putchar('\n');
	}
	if (log->stats.present)
		printf("processed %ld insns (limit %ld) max_states_per_insn %ld total_states %ld "
		       "peak_states %ld mark_read %ld\n", log->stats.insns_processed,
		       log->stats.insn_limit, log->stats.max_states_per_insn, log->stats.total_states,
		       log->stats.peak_states, log->stats.mark_read);
	if (!log->has_report && log->legacy_error)
		print_no_report(stdout, log);
	diag_print_human(stdout, log, false);
	if (!log->legacy_error && !log->has_report) {
		term_puts(stdout, path);
		printf(": no error in this log%s\n", log->stats.present ? " (accepted)" : "");
	}
}

int cmd_parse(int argc, char **argv)
{
	struct common_opts opts = COMMON_OPTS_DEFAULT;
	const char *prog = NULL, *source = NULL, *path;
	struct diag_log *log;
	json_object *doc;
	char *text = NULL;
	size_t len = 0;
	int c, code, err;

	static const struct option longopts[] = {
		COMMON_LONGOPTS,
		{ "prog", required_argument, NULL, OPT_PROG },
		{ "source", required_argument, NULL, OPT_SOURCE },
		{ 0 },
	};
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == OPT_PROG) {
			prog = optarg;
			continue;
		}
		if (c == OPT_SOURCE) {
			source = optarg;
			continue;
		}
		code = common_option(&opts, c, optarg);
		if (code >= 0)
			return code;
	}
	common_finish(&opts);
	if (optind != argc - 1)
		return fail(&opts, EXIT_USAGE, "usage", "usage: bpfuml parse LOGFILE [--prog NAME] "
			    "[--source FILE] [--format human|json|gcc|sarif|github]");
	path = argv[optind];
	err = read_whole_file(path, MAX_LOG_BYTES, &text, &len);
	if (err == -EFBIG)
		return fail(&opts, EXIT_USAGE, "input", "%s: longer than %zu bytes, the most a "
			    "verifier log can be; give the log of one program", path, MAX_LOG_BYTES);
	if (err)
		return fail(&opts, EXIT_USAGE, "input", "%s: %s", path, strerror(-err));
	log = diag_parse(text, len);
	if (!log) {
		free(text);
		return fail(&opts, EXIT_INFRA, "infrastructure", "out of memory parsing %s", path);
	}
	code = log->has_report || log->legacy_error ? EXIT_REJECTED : EXIT_OK;

	switch (opts.format) {
	case FORMAT_JSON:
		doc = diag_to_json(log);
		print_document(doc);
		json_object_put(doc);
		break;
	case FORMAT_SARIF: {
		struct diag_sarif_result result = {
			.prog_name = prog ?: "prog", .object_file = source ?: path, .log = log,
		};

		doc = diag_to_sarif(&result, 1);
		print_document(doc);
		json_object_put(doc);
		break;
	}
	case FORMAT_GCC:
		diag_print_gcc(stdout, log, prog ?: "prog", source ?: path);
		break;
	case FORMAT_GITHUB:
		diag_print_github(stdout, log, prog ?: "prog", source ?: path);
		break;
	default:
		print_human(log, path);
	}
	diag_free(log);
	free(text);
	return code;
}
