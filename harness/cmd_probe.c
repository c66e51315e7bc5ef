// SPDX-License-Identifier: GPL-2.0
/* cmd_probe.c — `bpfuml probe`: what a backend's kernel can do with each
 * program type, verifier feature and map type (verify / run / attach, and
 * create for maps), as a table or as JSON (schema bpfuml-probe/1).
 *
 * The guest does the probing (agent/agent_probe.c) with the programs of
 * progs/probe/; here the rows get their reasons: the verifier's legacy
 * error line for a rejection, and a note when the outcome is a UML
 * limitation rather than the kernel's BPF answer.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpfuml.h"
#include "diag.h"
#include "options.h"
#include "term.h"

static const char *const probe_objects[] = {
	"probe.bpf.o", "probe_struct_ops.bpf.o", "probe_ext.bpf.o",
};

/* Map types stock UML cannot create, and what x86_64 has that UML lacks. */
static const struct {
	const char *map_type, *why;
} uml_missing_maps[] = {
	{ "arena", "UML cannot create arena maps (they need a JIT); x86_64 can" },
	{ "stack_trace", "UML cannot create stack_trace maps (they need perf events); x86_64 can" },
	{ "struct_ops", "UML cannot create struct_ops maps (they need BPF_JIT trampolines); x86_64 can" },
	{ "inode_storage", "UML cannot create inode_storage maps (they need BPF LSM, which needs "
			   "BPF_JIT); x86_64 can" },
};

static const char *uml_map_note(const char *map_types)
{
	size_t i;

	for (i = 0; map_types && i < sizeof(uml_missing_maps) / sizeof(uml_missing_maps[0]); i++)
		if (strstr(map_types, uml_missing_maps[i].map_type))
			return uml_missing_maps[i].why;
	return NULL;
}

/* The verifier's own words for a rejected row, from its log. */
static void add_legacy_error(struct session *s, json_object *step)
{
	struct diag_log *log;
	char *text;

	log = program_log(s, step, &text);
	if (log && (log->legacy_error || log->report)) {
		json_object_object_add(step, "verifier_error",
				       json_object_new_string(log->legacy_error ?: log->report->problem));
	}
	json_object_object_del(step, "log_file");
	diag_free(log);
	free(text);
}

/* A short cell: "yes", "n/a", or "no: why". */
static void format_step(json_object *step, char *buf, size_t size)
{
	const char *status = json_str(step, "status");

	if (!step) {
		snprintf(buf, size, "-");
		return;
	}
	/* Statuses and reasons come from the guest and the verifier's log. */
	if (status && !strcmp(status, "no")) {
		snprintf(buf, size, "no: ");
		term_escape(buf + strlen(buf), size - strlen(buf),
			    json_str(step, "verifier_error") ?: json_str(step, "error") ?: "?");
	} else {
		term_escape(buf, size, status);
	}
}

static void print_rows(json_object *rows, const char *kind, const char *title)
{
	char verify[160], run[160], attach[160], name[160], note[512];
	size_t i;

	printf("\n%s\n", title);
	if (!strcmp(kind, "map_type"))
		printf("  %-26s %s\n", "map type", "create");
	else
		printf("  %-26s %-8s %-8s %s\n", kind[0] == 'f' ? "feature" : "program type",
		       "verify", "run", "attach");
	for (i = 0; i < json_object_array_length(rows); i++) {
		json_object *row = json_object_array_get_idx(rows, i);

		if (strcmp(json_str(row, "kind") ?: "", kind))
			continue;
		term_escape(name, sizeof(name), json_str(row, "name"));
		term_escape(note, sizeof(note), json_str(row, "uml_note") ?: "");
		if (!strcmp(kind, "map_type")) {
			format_step(json_member(row, "create"), verify, sizeof(verify));
			printf("  %-26s %s\n", name, verify);
			if (json_str(row, "uml_note"))
				printf("      (%s)\n", note);
			continue;
		}
		format_step(json_member(row, "verify"), verify, sizeof(verify));
		format_step(json_member(row, "run"), run, sizeof(run));
		format_step(json_member(row, "attach"), attach, sizeof(attach));
		/* Short cells in columns; a long reason goes on its own line. */
		if (strlen(verify) <= 8 && strlen(run) <= 8) {
			printf("  %-26s %-8s %-8s %s\n", name, verify, run, attach);
		} else {
			printf("  %-26s %-8s %-8s %s\n", name,
			       strlen(verify) <= 8 ? verify : "no", strlen(run) <= 8 ? run : "no",
			       strlen(verify) <= 8 && strlen(run) <= 8 ? attach : "-");
			if (strlen(verify) > 8)
				printf("      verify %s\n", verify);
			else if (strlen(run) > 8)
				printf("      run %s\n", run);
		}
		if (json_str(row, "uml_note"))
			printf("      (%s)\n", note);
	}
}

/* Why a program that verified does not run on UML. */
static const char needs_jit_note[] = "UML interprets BPF unless --jit; x86_64's JIT runs this program";
static const char no_jit_note[] = "this kernel's UML interprets BPF (its patch series has no JIT); "
				  "x86_64's JIT runs this program";

/* Give each row's failures their reasons; count the rows per verify status. */
static void annotate(struct session *s, json_object *rows, const char *backend, const char *bpf_mode)
{
	size_t i;

	for (i = 0; i < json_object_array_length(rows); i++) {
		json_object *row = json_object_array_get_idx(rows, i), *verify = json_member(row, "verify");
		json_object *create = json_member(row, "create");
		const char *note;

		json_object *run = json_member(row, "run");

		if (create && !strcmp(backend, "uml") && !strcmp(json_str(create, "status") ?: "", "no") &&
		    (note = uml_map_note(json_str(row, "name"))))
			json_object_object_add(row, "uml_note", json_object_new_string(note));
		json_object *attach = json_member(row, "attach");

		if (attach && !strcmp(backend, "uml") && !strcmp(json_str(attach, "status") ?: "", "no")) {
			json_object *prog = json_object_new_object();

			json_object_object_add(prog, "type", json_object_new_string(json_str(row, "prog_type") ?: ""));
			json_object_object_add(prog, "section", json_object_new_string(json_str(row, "section") ?: ""));
			if ((note = uml_attach_impossible(prog, bpf_mode, !s->kernel_lacks_jit)))
				json_object_object_add(row, "uml_note", json_object_new_string(note));
			json_object_put(prog);
		}
		if (run && !strcmp(backend, "uml") && json_int(run, "errno", 0) == 524)
			json_object_object_add(row, "uml_note", json_object_new_string(s->kernel_lacks_jit ? no_jit_note : needs_jit_note));
		if (!verify || strcmp(json_str(verify, "status") ?: "", "no"))
			continue;
		add_legacy_error(s, verify);
		if (strcmp(backend, "uml"))
			continue;
		/* Verified, then refused by bpf_fixup_call_args(): verify yes, run no. */
		if (json_str(verify, "verifier_error") &&
		    verified_but_needs_jit(verify, json_str(verify, "verifier_error"))) {
			json_object *ran = json_object_new_object(), *yes = json_object_new_object();

			json_object_object_add(ran, "status", json_object_new_string("no"));
			json_object_object_add(ran, "error", json_object_new_string(
				"verified, but the kernel refused to load it afterwards: it needs a JIT to run"));
			json_object_object_add(ran, "kernel_said",
					       json_object_new_string(json_str(verify, "verifier_error")));
			json_object_object_add(row, "run", ran);
			json_object_object_add(yes, "status", json_object_new_string("yes"));
			json_object_object_add(row, "verify", yes);	/* frees the old step */
			json_object_object_add(row, "uml_note", json_object_new_string(s->kernel_lacks_jit ? no_jit_note : needs_jit_note));
			continue;
		}
		note = uml_fidelity_note(verify, json_str(verify, "verifier_error"), !s->kernel_lacks_jit) ?:
		       uml_map_note(json_str(verify, "maps_not_created"));
		if (note)
			json_object_object_add(row, "uml_note", json_object_new_string(note));
	}
}

int cmd_probe(int argc, char **argv)
{
	struct common_opts opts = COMMON_OPTS_DEFAULT;
	static const struct option longopts[] = { COMMON_LONGOPTS, { 0 } };
	struct bpfuml_paths paths;
	json_object *job, *rows, *doc;
	char object[PATH_MAX + 64];
	struct session s;
	int c, code;
	size_t i;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		code = common_option(&opts, c, optarg);
		if (code >= 0)
			return code;
	}
	/* A probe loads, runs and frees some hundred programs and maps, not
	 * one: seconds on an idle machine, over a minute beside a kernel
	 * build.  Its default bound is five times a verify's. */
	if (!opts.timeout_s)
		opts.timeout_s = 5 * (strcmp(opts.backend, "qemu") ? TIMEOUT_UML_S : TIMEOUT_QEMU_S);
	common_finish(&opts);
	if (optind != argc)
		return fail(&opts, EXIT_USAGE, "usage", "usage: bpfuml probe [--backend uml|qemu] [--json]");
	code = open_guest_session(&s, &paths, &opts);
	if (code != EXIT_OK)
		return code;
	if (s.keep)
		fprintf(stderr, "bpfuml: run directory kept: %s\n", s.run_dir);
	/* Twice a verify's memory: the probe's programs and maps (4 GiB arenas
	 * among them, each with its page tables) are freed by deferred work,
	 * which lags behind beside a kernel build; in 512 MiB a probe ran out
	 * of memory there ("System is deadlocked on memory"; issue 16). */
	s.mem_mb = 2 * SESSION_MEM_MB;
	job = json_object_new_object();
	json_object_object_add(job, "command", json_object_new_string("probe"));
	rows = json_object_new_array();
	for (i = 0; i < sizeof(probe_objects) / sizeof(probe_objects[0]); i++) {
		snprintf(object, sizeof(object), "%s/progs/%s", paths.build_dir, probe_objects[i]);
		if (session_add_file(&s, probe_objects[i], object)) {
			json_object_put(rows);
			json_object_put(job);
			session_destroy(&s);
			return fail(&opts, EXIT_INFRA, "infrastructure", "%s is missing; run make", object);
		}
		json_object_array_add(rows, json_object_new_string(probe_objects[i]));
	}
	json_object_object_add(job, "objects", rows);
	code = boot_guest(&s, &paths, &opts, job);
	json_object_put(job);
	if (code != EXIT_OK) {
		session_destroy(&s);
		return code;
	}
	if (!(rows = json_member(s.result, "rows")) || json_str(s.result, "error")) {
		code = fail(&opts, EXIT_INFRA, "no-answer", "the guest's probe failed: %s",
			    json_str(s.result, "error") ?: "no rows");
		session_destroy(&s);
		return code;
	}
	annotate(&s, rows, opts.backend, bpf_mode_of(&opts));
	if (opts.json) {
		doc = json_object_new_object();
		json_object_object_add(doc, "schema", json_object_new_string("bpfuml-probe/1"));
		json_object_object_add(doc, "backend", json_object_new_string(opts.backend));
		json_object_object_add(doc, "bpf_mode", json_object_new_string(bpf_mode_of(&opts)));
		json_object_object_add(doc, "kernel", json_object_new_string(json_str(s.result, "kernel") ?: "?"));
		json_object_object_add(doc, "accel", accel_json(&s));
		json_object_object_add(doc, "confinement", confinement_json(&s));
		json_object_object_add(doc, "rows", json_object_get(rows));
		print_document(doc);
		json_object_put(doc);
	} else {
		printf("bpfuml probe: backend %s, kernel ", opts.backend);
		term_puts(stdout, json_str(s.result, "kernel") ?: "?");
		printf("%s%s\n", s.accel ? ", QEMU " : "", s.accel ?: "");
		print_rows(rows, "prog_type", "Program types (verify: a minimal program loads; run: "
			   "BPF_PROG_TEST_RUN; attach: the type's usual attach point)");
		print_rows(rows, "feature", "Verifier features (run: the program computed the right result)");
		print_rows(rows, "map_type", "Map types");
	}
	session_destroy(&s);
	return EXIT_OK;
}
