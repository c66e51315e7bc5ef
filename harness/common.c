// SPDX-License-Identifier: GPL-2.0
/* common.c — steps every command takes: stage the object, boot the guest,
 * report infrastructure failures, render a program's verdict.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfuml.h"
#include "watch.h"
#include "confine.h"
#include "diag.h"
#include "input.h"
#include "kernels.h"
#include "term.h"
#include "vm.h"

const char *json_str(json_object *obj, const char *key)
{
	json_object *value;

	if (!obj || !json_object_object_get_ex(obj, key, &value) ||
	    json_object_is_type(value, json_type_null))
		return NULL;
	return json_object_get_string(value);
}

json_object *json_member(json_object *obj, const char *key)
{
	json_object *value = NULL;

	if (obj)
		json_object_object_get_ex(obj, key, &value);
	return value;
}

const char *json_string_member(json_object *obj, const char *key)
{
	json_object *value = json_member(obj, key);

	return value && json_object_is_type(value, json_type_string) ? json_object_get_string(value) : NULL;
}

long long json_int(json_object *obj, const char *key, long long fallback)
{
	json_object *value;

	if (!obj || !json_object_object_get_ex(obj, key, &value) ||
	    json_object_is_type(value, json_type_null))
		return fallback;
	return json_object_get_int64(value);
}

/* ---- the one writer of stdout's JSON document --------------------------- */

static json_object *pending_error;	/* {"kind","message"} of the first fail() */
static bool pending_sarif;		/* ... asked for as a SARIF log */
static bool document_printed;

/* A SARIF log says a tool's failure in its invocation, not beside "runs". */
static void sarif_add_error(json_object *sarif, json_object *error)
{
	json_object *runs, *run, *invocation, *notes, *note, *message;

	if (!json_object_object_get_ex(sarif, "runs", &runs) ||
	    !(run = json_object_array_get_idx(runs, 0)))
		return;
	invocation = json_object_new_object();
	notes = json_object_new_array();
	note = json_object_new_object();
	message = json_object_new_object();
	json_object_object_add(message, "text", json_object_new_string(json_str(error, "message")));
	json_object_object_add(note, "level", json_object_new_string("error"));
	json_object_object_add(note, "message", message);
	json_object_array_add(notes, note);
	json_object_object_add(invocation, "executionSuccessful", json_object_new_boolean(0));
	json_object_object_add(invocation, "toolExecutionNotifications", notes);
	json_object *invocations = json_object_new_array();

	json_object_array_add(invocations, invocation);
	json_object_object_add(run, "invocations", invocations);
}

void print_document(json_object *doc)
{
	if (document_printed)
		return;
	if (pending_error) {
		if (json_object_object_get_ex(doc, "runs", NULL) &&
		    json_object_object_get_ex(doc, "version", NULL))
			sarif_add_error(doc, pending_error);
		else if (!json_object_object_get_ex(doc, "error", NULL))
			json_object_object_add(doc, "error", json_object_get(pending_error));
	}
	puts(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	fflush(stdout);
	document_printed = true;
}

int write_document(const char *path, json_object *doc)
{
	FILE *f = fopen(path, "w");
	int err;

	if (!f)
		return -errno;
	fputs(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE), f);
	fputc('\n', f);
	err = ferror(f) ? -EIO : 0;
	if (fclose(f) && !err)
		err = -errno;
	return err;
}

int output_finish(int code)
{
	if (!document_printed && pending_error) {
		/* A SARIF reader gets a SARIF log: no results, the failed
		 * invocation. */
		json_object *doc = pending_sarif ? diag_to_sarif(NULL, 0) : NULL;

		if (!doc) {
			doc = json_object_new_object();
			json_object_object_add(doc, "exit_code", json_object_new_int(code));
		}
		print_document(doc);
		json_object_put(doc);
	}
	return code;
}

int fail(const struct common_opts *opts, int code, const char *kind, const char *fmt, ...)
{
	char msg[8192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (opts && opts->json) {
		/* Said in the command's one document (the first error is the
		 * one that explains), or alone by output_finish(). */
		if (!pending_error) {
			pending_sarif = opts->format == FORMAT_SARIF;
			pending_error = json_object_new_object();
			json_object_object_add(pending_error, "kind", json_object_new_string(kind));
			json_object_object_add(pending_error, "message", json_object_new_string(msg));
		}
	} else {
		/* Messages quote the guest, the object and console lines. */
		fputs("bpfuml: ", stderr);
		term_puts_lines(stderr, msg);
		fputc('\n', stderr);
	}
	return code;
}

int stage_object(struct session *s, const struct bpfuml_paths *paths,
		 const struct common_opts *opts, const char *file, const char *name)
{
	char msg[4096], out[PATH_MAX + 32], diag_file[PATH_MAX + 32];
	enum input_error ierr;
	int err;

	if (access(file, F_OK))
		return fail(opts, EXIT_USAGE, "input", "%s: no such file; give a .bpf.o or a .bpf.c", file);
	snprintf(out, sizeof(out), "%s/%s", s->run_dir, name);
	if (input_is_source(file)) {
		snprintf(diag_file, sizeof(diag_file), "%s/clang.txt", s->run_dir);
		ierr = input_compile(file, out, paths->include_dir, opts->cflags,
				     opts->json ? diag_file : NULL, watch_depfile, msg, sizeof(msg));
		if (ierr == INPUT_COMPILE_FAILED) {
			char *clang_text = NULL;

			if (!opts->json)
				return fail(opts, EXIT_COMPILE, "compile", "%s", msg);
			session_read_file(s, "clang.txt", &clang_text, NULL);
			fail(opts, EXIT_COMPILE, "compile", "%s\n%s", msg, clang_text ?: "");
			free(clang_text);
			return EXIT_COMPILE;
		}
		if (ierr != INPUT_OK)
			return fail(opts, ierr == INPUT_MISSING ? EXIT_USAGE : EXIT_INFRA, "input", "%s", msg);
		return EXIT_OK;
	}
	ierr = input_check_object(file, msg, sizeof(msg));
	if (ierr != INPUT_OK)
		return fail(opts, EXIT_USAGE, "input", "%s", msg);
	err = session_add_file(s, name, file);
	if (err)
		return fail(opts, EXIT_INFRA, "infrastructure", "cannot copy %s into %s: %s",
			    file, s->run_dir, strerror(-err));
	return EXIT_OK;
}

int check_space(const struct common_opts *opts, const char *dir, unsigned int guests,
		unsigned int mem_mb, const char *hint)
{
	bool mem_file = strcmp(opts->backend, "qemu");	/* QEMU's memory is anonymous */
	unsigned long long need, avail;
	char what[128], who[64];

	if (session_check_space(dir, guests, mem_mb, mem_file, &need, &avail) != -ENOSPC)
		return EXIT_OK;
	if (mem_file)
		snprintf(what, sizeof(what), "%u MiB memory file and %u MiB for its files",
			 mem_mb, SESSION_SPACE_MARGIN_MB);
	else
		snprintf(what, sizeof(what), "%u MiB for its files", SESSION_SPACE_MARGIN_MB);
	if (guests > 1)
		snprintf(who, sizeof(who), "%u guests at once need", guests);
	else
		snprintf(who, sizeof(who), "the guest needs");
	return fail(opts, EXIT_INFRA, "infrastructure",
		    "not enough free space: %s %llu MiB in %s (%s%s), and it has %llu MiB free.  "
		    "Set BPFUML_RUNDIR to a directory with more room (a tmpfs such as /dev/shm "
		    "keeps boots fast)%s",
		    who, need, dir, guests > 1 ? "each: its " : "its ", what, avail, hint ?: "");
}

int open_guest_session(struct session *s, struct bpfuml_paths *paths, const struct common_opts *opts)
{
	char why[600];
	int code;

	if (paths_init(paths))
		return fail(opts, EXIT_INFRA, "infrastructure", "cannot locate bpfuml's build directory");
	if ((code = kernel_select(paths, opts)) != EXIT_OK)
		return code;
	/* A warm guest of `bpfuml serve` when one answers; else our own. */
	if (opts->server && opts->keep) {
		fprintf(stderr, "bpfuml: note: --keep boots a guest of its own (a warm guest's "
			"directory is its server's)\n");
	} else if (opts->server) {
		if (!session_connect(s, opts->server, opts->backend, bpf_mode_of(opts),
				     paths->kernel_version, why, sizeof(why))) {
			session_install_signal_handlers();
			return EXIT_OK;
		}
		fprintf(stderr, "bpfuml: note: %s; booting a guest for this run\n", why);
	}
	if (session_create(s))
		return fail(opts, EXIT_INFRA, "infrastructure", "cannot create a run directory");
	s->keep = opts->keep;
	session_install_signal_handlers();
	return EXIT_OK;
}

json_object *exec_job(const char *cwd, const char *output, int timeout_s, const char *program,
		      const char *const *args)
{
	json_object *job = json_object_new_object(), *argv = json_object_new_array();

	json_object_array_add(argv, json_object_new_string(program));
	for (; *args; args++)
		json_object_array_add(argv, json_object_new_string(*args));
	json_object_object_add(job, "command", json_object_new_string("exec"));
	json_object_object_add(job, "argv", argv);
	json_object_object_add(job, "cwd", json_object_new_string(cwd));
	json_object_object_add(job, "output", json_object_new_string(output));
	json_object_object_add(job, "timeout_s", json_object_new_int(timeout_s));
	return job;
}

int guest_can_boot(const struct session *s, const struct bpfuml_paths *paths,
		   const struct common_opts *opts)
{
	char msg[1024];
	int err;

	if (!strcmp(opts->backend, "qemu") && access(paths->qemu_kernel, R_OK))
		return fail(opts, EXIT_INFRA, "infrastructure",
			    "the x86_64 reference kernel (%s) is not built; run `make qemu-kernel%s%s` "
			    "(~20 min once) or use ./run.sh, which builds it", paths->qemu_kernel,
			    paths->kernel_is_default ? "" : " KERNEL=", paths->kernel_is_default ? "" : paths->kernel_version);
	if (strcmp(opts->backend, "qemu") && !paths->kernel_is_default && access(paths->kernel, X_OK))
		return fail(opts, EXIT_INFRA, "infrastructure",
			    "kernel %s is not built (%s); run `make kernel KERNEL=%s` (~15 min once) or use "
			    "./run.sh, which builds it", paths->kernel_version, paths->kernel, paths->kernel_version);
	if ((strcmp(opts->backend, "qemu") && access(paths->kernel, X_OK)) || access(paths->agent, X_OK))
		return fail(opts, EXIT_INFRA, "infrastructure",
			    "the UML kernel (%s) or the guest agent (%s) is not built; run make or ./run.sh",
			    paths->kernel, paths->agent);
	/* What the guest kernel's command line cannot carry (vm.h). */
	if (!vm_cmdline_can_carry(s->run_dir))
		return fail(opts, EXIT_USAGE, "usage", "the run directory %s has a '\"', which the guest "
			    "kernel's command line cannot carry; set BPFUML_RUNDIR to a directory without one",
			    s->run_dir);
	if (!vm_cmdline_can_carry(paths->agent))
		return fail(opts, EXIT_USAGE, "usage", "bpfuml's build directory %s has a '\"', which the "
			    "guest kernel's command line cannot carry; move the checkout to a path without one",
			    paths->build_dir);
	/* No guest boots unconfined unless asked for (confine.h). */
	err = confine_prepare(msg, sizeof(msg));
	if (err)
		return fail(opts, err == -EINVAL ? EXIT_USAGE : EXIT_INFRA, "confinement", "%s", msg);
	return EXIT_OK;
}

int guest_failure(const struct common_opts *opts, const struct session *s)
{
	const char *category;
	char *text;
	int code;

	if (s->status == SESSION_OK)
		return EXIT_OK;
	text = session_failure_text(s, opts->timeout_s, &category);
	code = fail(opts, s->status == SESSION_INTERRUPTED ? EXIT_INTERRUPTED : EXIT_INFRA, category,
		    "%s", text ?: category);
	free(text);
	return code;
}

int boot_guest(struct session *s, const struct bpfuml_paths *paths,
	       const struct common_opts *opts, json_object *job)
{
	char base[PATH_MAX];
	int err;

	if (s->server_fd > 0)
		goto run;	/* a warm guest: booted and checked by its server */
	err = guest_can_boot(s, paths, opts);
	if (err != EXIT_OK)
		return err;
	/* Room for its memory file where its run directory is (only
	 * kselftest's guests have their size set: by --mem). */
	snprintf(base, sizeof(base), "%s", s->run_dir);
	err = check_space(opts, dirname(base), 1, s->mem_mb ?: SESSION_MEM_MB,
			  s->mem_mb ? ", or a smaller --mem where the command has one" : NULL);
	if (err != EXIT_OK)
		return err;
	s->backend = opts->backend;
	s->bpf_mode = opts->bpf_mode;
run:
	s->kernel_lacks_jit = !paths->kernel_has_jit;
	if (opts->test_fault)
		json_object_object_add(job, "test_fault", json_object_new_string(opts->test_fault));
	session_run(s, paths, job, opts->timeout_s);
	return guest_failure(opts, s);
}

/* Guest and host both read CLOCK_REALTIME; UML's is the host's. */
static double phase_ms(long long from, long long to)
{
	if (!from || !to || to < from)
		return -1;
	return (to - from) / 1e6;
}

/* The guest kernel's release (uname -r) as its agent said it: which of
 * the kernels (--kernel) ran the job. */
json_object *kernel_json(const struct session *s)
{
	const char *release = json_str(s->result, "kernel");

	return release ? json_object_new_string(release) : NULL;
}

json_object *accel_json(const struct session *s)
{
	return s->accel ? json_object_new_string(s->accel) : NULL;
}

const char *bpf_mode_default(const char *backend)
{
	return backend && !strcmp(backend, "qemu") ? "jit" : "interpreter";
}

const char *bpf_mode_of(const struct common_opts *opts)
{
	return opts->bpf_mode ?: bpf_mode_default(opts->backend);
}

json_object *confinement_json(const struct session *s)
{
	const char *name = s->confinement[0] ? s->confinement : confine_name();

	return name ? json_object_new_string(name) : NULL;
}

json_object *timing_json(const struct session *s)
{
	long long agent_start = json_int(s->result, "agent_start_ns", 0);
	long long mounts_done = json_int(s->result, "mounts_done_ns", 0);
	long long job_end = json_int(s->result, "job_end_ns", 0);
	json_object *t = json_object_new_object();

	/* A warm guest's clock has drifted from ours since its boot: its job's
	 * span is its own clock's, the whole span ours; there was no boot and
	 * no shutdown. */
	if (s->warm) {
		json_object_object_add(t, "warm", json_object_new_boolean(true));
		json_object_object_add(t, "job_ms", json_object_new_double(phase_ms(agent_start, job_end)));
		json_object_object_add(t, "guest_ms", json_object_new_double(phase_ms(s->start_ns, s->exit_ns)));
		return t;
	}
	json_object_object_add(t, "boot_ms", json_object_new_double(phase_ms(s->start_ns, agent_start)));
	json_object_object_add(t, "mounts_ms", json_object_new_double(phase_ms(agent_start, mounts_done)));
	json_object_object_add(t, "job_ms", json_object_new_double(phase_ms(agent_start, job_end)));
	json_object_object_add(t, "shutdown_ms", json_object_new_double(phase_ms(job_end, s->exit_ns)));
	json_object_object_add(t, "guest_ms", json_object_new_double(phase_ms(s->start_ns, s->exit_ns)));
	return t;
}

void print_timing(FILE *out, const struct session *s)
{
	long long agent_start = json_int(s->result, "agent_start_ns", 0);
	long long job_end = json_int(s->result, "job_end_ns", 0);

	char what[64] = "";

	if (s->warm) {
		fprintf(out, "warm guest: %.1f ms (job %.1f)\n", phase_ms(s->start_ns, s->exit_ns),
			phase_ms(agent_start, job_end));
		return;
	}
	if (s->accel)
		snprintf(what, sizeof(what), " (qemu/%s, x86_64 JIT)", s->accel);
	fprintf(out, "guest%s: %.1f ms (boot %.1f, job %.1f, shutdown %.1f)\n", what,
		phase_ms(s->start_ns, s->exit_ns), phase_ms(s->start_ns, agent_start),
		phase_ms(agent_start, job_end), phase_ms(job_end, s->exit_ns));
}

void print_no_report(FILE *out, const struct diag_log *log)
{
	fprintf(out, "  (the kernel printed no structured report for this failure)\n");
	if (log->failing_insn >= 0) {
		fprintf(out, "  failing instruction: %d: ", log->failing_insn);
		term_puts(out, log->failing_insn_text ?: "");
		fputc('\n', out);
	}
	if (log->linfo_text) {
		fputs("  source: ", out);
		term_puts(out, log->linfo_file ?: "?");
		fprintf(out, ":%d: ", log->linfo_line);
		term_puts(out, log->linfo_text);
		fputc('\n', out);
	}
}

static void print_stats(FILE *out, const struct diag_log *log)
{
	if (log && log->stats.present)
		fprintf(out, "  processed %ld insns (limit %ld) max_states_per_insn %ld total_states %ld "
			"peak_states %ld mark_read %ld\n", log->stats.insns_processed,
			log->stats.insn_limit, log->stats.max_states_per_insn,
			log->stats.total_states, log->stats.peak_states, log->stats.mark_read);
}

void print_program(FILE *out, struct session *s, json_object *prog, const struct common_opts *opts)
{
	const char *messages = json_str(prog, "libbpf_messages");
	bool color = opts->color;
	struct program_verdict v;

	program_verdict_init(&v, s, prog);
	/* Names, section, type and verdict come from the guest and the object. */
	fputs(color ? "\033[1m" : "", out);
	term_puts(out, v.name);
	fprintf(out, "%s (", color ? "\033[0m" : "");
	term_puts(out, json_str(prog, "section"));
	fputs(", type ", out);
	term_puts(out, json_str(prog, "type"));
	fprintf(out, "): %s", color ? (v.accepted ? "\033[1;32m" :
				     v.needs_jit ? "\033[1;33m" : "\033[1;31m") : "");
	term_puts(out, v.not_loaded ? "could not be loaded" :
		       v.needs_jit ? "verified, but refused afterwards (needs a JIT)" : v.verdict);
	fputs(color ? "\033[0m" : "", out);
	if (v.not_loaded) {
		fputs(": ", out);
		term_puts(out, v.not_loaded);
	}
	fputc('\n', out);

	if (json_int(prog, "log_truncated", 0))
		fprintf(out, "  note: the verifier log did not fit in %lld MiB: only its last part is "
			"kept; the verdict comes from a load that logged statistics only\n",
			json_int(prog, "log_buffer", 0) >> 20);
	if (!strcmp(v.verdict, "rejected") && v.log) {
		if (v.log->legacy_error) {
			fputs("  error: ", out);
			term_puts(out, v.log->legacy_error);
			fputc('\n', out);
		}
		print_stats(out, v.log);
		if (v.log->has_report) {
			diag_print_human(out, v.log, color);
		} else {
			print_no_report(out, v.log);
		}
	} else if (v.accepted) {
		print_stats(out, v.log);
	}
	if (v.uml_note)
		fprintf(out, "  %snote: UML differs from x86_64 here: %s%s\n", color ? "\033[1;33m" : "",
			v.uml_note, color ? "\033[0m" : "");
	/* For a rejection the verifier's log speaks; libbpf explains the rest. */
	if (v.not_loaded && messages && *messages) {
		const char *line = messages;

		fprintf(out, "  libbpf said:\n");
		while (*line) {
			const char *eol = strchrnul(line, '\n');

			fputs("    ", out);
			term_write(out, line, eol - line, 0);
			fputc('\n', out);
			line = *eol ? eol + 1 : eol;
		}
	}
	program_verdict_free(&v);
}

json_object *program_json(struct session *s, json_object *prog)
{
	json_object *out = json_object_new_object();
	static const char *const copied[] = {
		"name", "section", "type", "verdict", "load", "errno", "error",
		"type_unsupported", "type_unknown", "libbpf_messages", "log_bytes", "log_buffer", "log_truncated",
	};
	struct program_verdict v;
	json_object *value;
	size_t i;

	for (i = 0; i < sizeof(copied) / sizeof(copied[0]); i++)
		if (json_object_object_get_ex(prog, copied[i], &value))
			json_object_object_add(out, copied[i], json_object_get(value));
	program_verdict_init(&v, s, prog);
	json_object_object_add(out, "uml_fidelity_note", v.uml_note ? json_object_new_string(v.uml_note) : NULL);
	json_object_object_add(out, "verified", json_object_new_boolean(v.verified));
	if (v.log) {
		json_object_object_add(out, "diagnostics", diag_to_json(v.log));
		json_object_object_add(out, "log", json_object_new_string(v.log_text));
	} else {
		json_object_object_add(out, "diagnostics", NULL);
		json_object_object_add(out, "log", json_object_new_string(""));
	}
	program_verdict_free(&v);
	return out;
}

int read_whole_file(const char *path, size_t max, char **text, size_t *len)
{
	size_t cap = 1 << 16, used = 0, n;
	char *buf = malloc(cap), *grown;
	FILE *f = fopen(path, "rb");
	int err = 0;

	if (!f || !buf) {
		err = f ? -ENOMEM : -errno;
		goto out;
	}
	/* cap - used - 1 > 0 on every entry: the last byte is the NUL's. */
	while ((n = fread(buf + used, 1, cap - used - 1, f)) > 0) {
		used += n;
		if (used > max) {
			err = -EFBIG;
			goto out;
		}
		if (cap - used - 1 == 0) {
			grown = realloc(buf, cap * 2);
			if (!grown) {
				err = -ENOMEM;
				goto out;
			}
			buf = grown;
			cap *= 2;
		}
	}
	/* A directory opens but does not read (EISDIR): not an empty log. */
	if (ferror(f)) {
		err = errno ? -errno : -EIO;
		goto out;
	}
	buf[used] = '\0';
	*text = buf;
	*len = used;
	buf = NULL;
out:
	if (f)
		fclose(f);
	free(buf);
	return err;
}

int report_file_check(const struct common_opts *opts, const char *option, const char *path)
{
	FILE *f = fopen(path, "a");

	if (!f)
		return fail(opts, EXIT_USAGE, "usage", "%s %s: %s", option, path, strerror(errno));
	fclose(f);
	return EXIT_OK;
}

json_object *read_our_document(const char *path, size_t max, const char *command, char *why, size_t len)
{
	enum json_tokener_error jerr;
	json_object *doc, *schema;
	char want[64], *text = NULL;
	size_t n;
	int err;

	err = read_whole_file(path, max, &text, &n);
	if (err) {
		if (err == -EFBIG)
			snprintf(why, len, "is larger than any `bpfuml %s --json` document", command);
		else
			snprintf(why, len, "cannot be read: %s", strerror(-err));
		return NULL;
	}
	doc = json_tokener_parse_verbose(text, &jerr);
	free(text);
	if (!doc) {
		snprintf(why, len, "is not JSON (%s)", json_tokener_error_desc(jerr));
		return NULL;
	}
	snprintf(want, sizeof(want), "bpfuml-%s/1", command);
	if (!json_object_object_get_ex(doc, "schema", &schema) || !json_object_is_type(schema, json_type_string) ||
	    strcmp(json_object_get_string(schema), want)) {
		snprintf(why, len, "is not a `bpfuml %s --json` document (its schema is not %s)", command, want);
		json_object_put(doc);
		return NULL;
	}
	return doc;
}
