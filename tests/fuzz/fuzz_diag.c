// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: the verifier log parser (diag_parse) and every renderer
 * of its result (human with and without colour, gcc, GitHub annotations,
 * bpfuml-diag/1 JSON, SARIF), on arbitrary bytes.  The renderers write to a memory stream so
 * that their output is produced (and checked by ASan) but never shown.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <json-c/json.h>

#include "diag.h"

static void render(const struct diag_log *log)
{
	struct diag_sarif_result res = { .prog_name = "prog", .object_file = "x.bpf.o", .log = log };
	json_object *doc;
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	if (!out)
		return;
	diag_print_human(out, log, false);
	diag_print_human(out, log, true);
	diag_print_gcc(out, log, "prog", "x.bpf.o");
	diag_print_gcc(out, log, NULL, NULL);
	diag_print_github(out, log, "prog", "x.bpf.o");
	diag_print_github(out, log, NULL, NULL);
	doc = diag_to_json(log);
	fputs(json_object_to_json_string(doc), out);
	json_object_put(doc);
	doc = diag_to_sarif(&res, 1);
	fputs(json_object_to_json_string(doc), out);
	json_object_put(doc);
	fclose(out);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct diag_log *log = diag_parse((const char *)data, size);

	if (log)
		render(log);
	diag_free(log);
	return 0;
}
