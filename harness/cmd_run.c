// SPDX-License-Identifier: GPL-2.0
/* cmd_run.c — `bpfuml run FILE --prog NAME`: BPF_PROG_TEST_RUN in the guest,
 * then the return value, data_out and the object's globals.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfuml.h"
#include "watch.h"
#include "options.h"
#include "term.h"

enum { OPT_PROG = 0x200, OPT_DATA_IN, OPT_CTX_IN, OPT_DATA_OUT, OPT_REPEAT, OPT_ATTACH };
#define REPEAT_MAX 100000000

static void hexdump(FILE *out, const unsigned char *data, size_t len, size_t max)
{
	size_t i;

	for (i = 0; i < len && i < max; i++) {
		if (i % 16 == 0)
			fprintf(out, "    %04zx:", i);
		fprintf(out, " %02x", data[i]);
		if (i % 16 == 15 || i + 1 == len || i + 1 == max)
			fputc('\n', out);
	}
	if (len > max)
		fprintf(out, "    ... %zu more bytes (--data-out FILE saves them all)\n", len - max);
}

static int save_copy(struct session *s, const char *name, const char *dest)
{
	char *data;
	size_t len;
	FILE *f;
	int err;

	err = session_read_file(s, name, &data, &len);
	if (err)
		return err;
	f = fopen(dest, "wb");
	if (!f) {
		err = -errno;
		free(data);
		return err;
	}
	if (fwrite(data, 1, len, f) != len)
		err = -EIO;
	if (fclose(f))
		err = -errno;
	free(data);
	return err;
}

static void print_globals(FILE *out, json_object *globals)
{
	size_t i, n = globals ? json_object_array_length(globals) : 0;

	if (!n) {
		fprintf(out, "globals: none\n");
		return;
	}
	fprintf(out, "globals after the run:\n");
	for (i = 0; i < n; i++) {
		json_object *g = json_object_array_get_idx(globals, i), *value;
		const char *text = json_str(g, "text");
		const char *section = json_str(g, "section") ?: "(null)";

		/* Names, types and values (a char array's text) are the object's. */
		fputs("  ", out);
		term_puts(out, section);
		fprintf(out, "%*s ", strlen(section) < 8 ? (int)(8 - strlen(section)) : 0, "");
		term_puts(out, json_str(g, "name"));
		fputs(" (", out);
		term_puts(out, json_str(g, "type"));
		fputs(") = ", out);
		if (json_object_object_get_ex(g, "value", &value))
			term_puts(out, json_object_get_string(value));
		else
			term_puts(out, text ?: json_str(g, "hex"));
		fputc('\n', out);
	}
}

/* The attach failure, said plainly: why it cannot work on UML when that is
 * the reason, else the kernel's (or libbpf's) error. */
static void print_attach_failure(FILE *out, json_object *prog, json_object *attach,
				 const char *reason)
{
	const char *messages = json_str(attach, "libbpf_messages");

	term_puts(out, json_str(prog, "name"));
	if (reason)
		fprintf(out, ": attach not possible on UML: %s (the kernel said: ", reason);
	else
		fputs(": attach failed: ", out);
	term_puts(out, json_str(attach, "error"));
	fprintf(out, "%s errno %lld)\n", reason ? "," : " (", json_int(attach, "errno", 0));
	if (!reason && messages && *messages) {
		fputs("  libbpf said:\n    ", out);
		term_puts_lines(out, messages);
	}
}

static int report_run(struct session *s, const struct common_opts *opts, const char *file,
		      const char *data_out_path)
{
	json_object *progs = NULL, *prog, *run = NULL, *attach = NULL, *doc;
	const char *run_error, *attach_reason = NULL;
	bool attach_failed;
	char *data = NULL;
	size_t len = 0;
	int code;

	json_object_object_get_ex(s->result, "programs", &progs);
	prog = progs ? json_object_array_get_idx(progs, 0) : NULL;
	json_object_object_get_ex(s->result, "run", &run);
	json_object_object_get_ex(s->result, "attach", &attach);
	run_error = json_str(run, "error");
	if (!prog)
		return fail(opts, EXIT_USAGE, "input", "%s: %s", file,
			    json_str(s->result, "error") ?: "the guest returned no program");
	attach_failed = attach && !json_object_get_boolean(json_object_object_get(attach, "attached"));
	if (attach_failed && !strcmp(opts->backend, "uml"))
		attach_reason = uml_attach_impossible(prog, bpf_mode_of(opts), !s->kernel_lacks_jit);
	code = program_failed(prog) || attach_failed ? EXIT_REJECTED : run_error ? EXIT_USAGE : EXIT_OK;
	if (watch_verdicts) {
		char outcome[64];

		if (program_failed(prog) || attach_failed || run_error)
			snprintf(outcome, sizeof(outcome), "%s", program_failed(prog) ? json_str(prog, "verdict") ?: "?"
				 : attach_failed ? "attach failed" : "test run failed");
		else
			snprintf(outcome, sizeof(outcome), "retval %lld", json_int(run, "retval", 0));
		watch_note_verdict(json_str(prog, "name") ?: "?", outcome);
	}
	if (run && json_str(run, "data_out_file"))
		session_read_file(s, json_str(run, "data_out_file"), &data, &len);
	if (data_out_path && data && save_copy(s, json_str(run, "data_out_file"), data_out_path))
		fprintf(stderr, "bpfuml: cannot write %s: %s\n", data_out_path, strerror(errno));

	if (opts->json) {
		doc = json_object_new_object();
		json_object_object_add(doc, "schema", json_object_new_string("bpfuml-run/1"));
		json_object_object_add(doc, "file", json_object_new_string(file));
		json_object_object_add(doc, "backend", json_object_new_string(opts->backend));
		json_object_object_add(doc, "bpf_mode", json_object_new_string(bpf_mode_of(opts)));
		json_object_object_add(doc, "kernel", kernel_json(s));
		json_object_object_add(doc, "accel", accel_json(s));
		json_object_object_add(doc, "confinement", confinement_json(s));
		json_object_object_add(doc, "program", program_json(s, prog));
		if (attach) {
			json_object *a = json_object_get(attach);

			if (attach_reason) {
				char message[512];

				snprintf(message, sizeof(message), "attach not possible on UML: %s",
					 attach_reason);
				json_object_object_add(a, "message", json_object_new_string(message));
			}
			json_object_object_add(doc, "attach", a);
		}
		if (run) {
			json_object *r = json_object_get(run);

			json_object_object_del(r, "data_out_file");
			json_object_object_del(r, "ctx_out_file");
			if (data) {
				char *hex = malloc(len * 2 + 1);
				size_t i;

				for (i = 0; hex && i < len; i++)
					sprintf(hex + 2 * i, "%02x", (unsigned char)data[i]);
				if (hex) {
					hex[2 * len] = '\0';
					json_object_object_add(r, "data_out_hex", json_object_new_string(hex));
				}
				free(hex);
			}
			json_object_object_add(doc, "run", r);
		}
		json_object_object_add(doc, "timing", timing_json(s));
		json_object_object_add(doc, "exit_code", json_object_new_int(code));
		print_document(doc);
		json_object_put(doc);
	} else {
		if (program_failed(prog)) {
			print_program(stdout, s, prog, opts);
		} else if (attach_failed) {
			print_attach_failure(stdout, prog, attach, attach_reason);
		} else if (run_error) {
			term_puts(stdout, json_str(prog, "name"));
			fputs(": BPF_PROG_TEST_RUN failed: ", stdout);
			term_puts(stdout, run_error);
			printf(" (errno %lld); this program type may not support test runs, or the "
			       "input sizes do not fit it\n", json_int(run, "errno", 0));
		} else {
			term_puts(stdout, json_str(prog, "name"));
			fputs(" (", stdout);
			term_puts(stdout, json_str(prog, "section"));
			fputs(", type ", stdout);
			term_puts(stdout, json_str(prog, "type"));
			printf("): retval %lld, duration %lld ns per run (repeat %lld)\n",
			       json_int(run, "retval", 0), json_int(run, "duration_ns", 0),
			       json_int(run, "repeat", 1));
			if (data) {
				printf("data_out: %zu bytes\n", len);
				hexdump(stdout, (unsigned char *)data, len, 256);
			}
			json_object *globals = NULL;

			json_object_object_get_ex(run, "globals", &globals);
			print_globals(stdout, globals);
		}
		print_timing(stdout, s);
	}
	free(data);
	return code;
}

int cmd_run(int argc, char **argv)
{
	struct common_opts opts = COMMON_OPTS_DEFAULT;
	const char *prog = NULL, *data_in = NULL, *ctx_in = NULL, *data_out = NULL, *file;
	struct bpfuml_paths paths;
	struct session s;
	json_object *job;
	unsigned int repeat = 1;
	bool attach = false;
	int c, code, err;

	static const struct option longopts[] = {
		COMMON_LONGOPTS,
		{ "prog", required_argument, NULL, OPT_PROG },
		{ "data-in", required_argument, NULL, OPT_DATA_IN },
		{ "ctx-in", required_argument, NULL, OPT_CTX_IN },
		{ "data-out", required_argument, NULL, OPT_DATA_OUT },
		{ "repeat", required_argument, NULL, OPT_REPEAT },
		{ "attach", no_argument, NULL, OPT_ATTACH },
		{ 0 },
	};
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_PROG: prog = optarg; continue;
		case OPT_DATA_IN: data_in = optarg; continue;
		case OPT_CTX_IN: ctx_in = optarg; continue;
		case OPT_DATA_OUT: data_out = optarg; continue;
		case OPT_ATTACH: attach = true; continue;
		case OPT_REPEAT:
			if ((code = option_uint(&opts, "--repeat", optarg, 1, REPEAT_MAX, "runs", &repeat)))
				return code;
			continue;
		}
		code = common_option(&opts, c, optarg);
		if (code >= 0)
			return code;
	}
	common_finish(&opts);
	if (optind != argc - 1 || !prog)
		return fail(&opts, EXIT_USAGE, "usage", "usage: bpfuml run FILE --prog NAME [--data-in F] "
			    "[--ctx-in F] [--data-out F] [--repeat N] [--attach]; see bpfuml help run");
	file = argv[optind];
	if (data_in && access(data_in, R_OK))
		return fail(&opts, EXIT_USAGE, "input", "--data-in %s: %s", data_in, strerror(errno));
	if (ctx_in && access(ctx_in, R_OK))
		return fail(&opts, EXIT_USAGE, "input", "--ctx-in %s: %s", ctx_in, strerror(errno));
	code = open_guest_session(&s, &paths, &opts);
	if (code != EXIT_OK)
		return code;

	job = json_object_new_object();
	json_object_object_add(job, "command", json_object_new_string("run"));
	json_object_object_add(job, "object", json_object_new_string(RUN_OBJECT));
	json_object_object_add(job, "program", json_object_new_string(prog));
	json_object_object_add(job, "log_level", json_object_new_int(opts.log_level));
	json_object_object_add(job, "repeat", json_object_new_int(repeat));
	json_object_object_add(job, "attach", json_object_new_boolean(attach));

	code = stage_object(&s, &paths, &opts, file, RUN_OBJECT);
	if (code == EXIT_OK && data_in) {
		err = session_add_file(&s, "data_in.bin", data_in);
		if (err)
			code = fail(&opts, EXIT_USAGE, "input", "--data-in %s: %s", data_in, strerror(-err));
		json_object_object_add(job, "data_in", json_object_new_string("data_in.bin"));
	}
	if (code == EXIT_OK && ctx_in) {
		err = session_add_file(&s, "ctx_in.bin", ctx_in);
		if (err)
			code = fail(&opts, EXIT_USAGE, "input", "--ctx-in %s: %s", ctx_in, strerror(-err));
		json_object_object_add(job, "ctx_in", json_object_new_string("ctx_in.bin"));
	}
	if (code == EXIT_OK)
		code = boot_guest(&s, &paths, &opts, job);
	if (code == EXIT_OK)
		code = report_run(&s, &opts, file, data_out);
	if (opts.keep)
		fprintf(stderr, "bpfuml: run directory kept: %s\n", s.run_dir);
	session_destroy(&s);
	json_object_put(job);
	return code;
}
