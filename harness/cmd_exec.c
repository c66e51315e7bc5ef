// SPDX-License-Identifier: GPL-2.0
/* cmd_exec.c — `bpfuml exec [--file F]... -- PROGRAM [ARG...]`: run a host
 * program inside a guest (as root there, the guest kernel's BPF under it),
 * in the run directory with the --file copies, and give back what it
 * printed and how it ended.
 *
 * The guest agent's "exec" job does the work (agent_exec.c: what the
 * selftests expect mounted, a deadline); the kselftest runners go the same
 * way.  The guest sees the host's / read-only, so PROGRAM is any host path.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfuml.h"
#include "options.h"
#include "term.h"

enum { OPT_FILE = 0x300 };

#define EXEC_OUTPUT "exec.out"	/* the program's stdout and stderr */
#define EXEC_FILES_MAX 64

/* Names the run directory has already. */
static bool name_taken(const char *name)
{
	static const char *const ours[] = { JOB_FILE, RESULT_FILE, "owner", "console.log",
					    EXEC_OUTPUT };

	for (size_t i = 0; i < sizeof(ours) / sizeof(ours[0]); i++)
		if (!strcmp(name, ours[i]))
			return true;
	return false;
}

static int usage(const struct common_opts *opts, const char *why)
{
	return fail(opts, EXIT_USAGE, "usage", "%s; usage: bpfuml exec [--file FILE]... [--] PROGRAM "
		    "[ARG...]; see bpfuml help exec", why);
}

/* How the program ended, as our exit code and in words. */
static int program_outcome(json_object *result, int timeout_s, char *how, size_t len)
{
	long long status = json_int(result, "exit_status", -1), sig = json_int(result, "signal", 0);

	if (json_int(result, "timed_out", 0)) {
		snprintf(how, len, "was killed after %d s (--timeout)", timeout_s);
		return EXIT_INFRA;
	}
	if (sig > 0 && sig < 128) {
		snprintf(how, len, "was killed by signal %lld (SIG%s)", sig, sigabbrev_np(sig) ?: "?");
		return 128 + (int)sig;
	}
	if (status >= 0 && status <= 255) {
		snprintf(how, len, "ended with exit status %lld", status);
		return (int)status;
	}
	snprintf(how, len, "ended without an exit status (%s)",
		 json_object_get_string(json_object_object_get(result, "error")) ?: "no reason given");
	return EXIT_INFRA;
}

static int report(struct session *s, const struct common_opts *opts, int timeout_s)
{
	char how[128], *out = NULL;
	size_t len = 0, i;
	int code;

	session_read_file(s, EXEC_OUTPUT, &out, &len);
	code = program_outcome(s->result, timeout_s, how, sizeof(how));
	if (opts->json) {
		json_object *doc = json_object_new_object();

		json_object_object_add(doc, "schema", json_object_new_string("bpfuml-exec/1"));
		json_object_object_add(doc, "backend", json_object_new_string(opts->backend));
		json_object_object_add(doc, "bpf_mode", json_object_new_string(bpf_mode_of(opts)));
		json_object_object_add(doc, "output", json_object_new_string_len(out ?: "", (int)len));
		json_object_object_add(doc, "how", json_object_new_string(how));
		static const char *const keys[] = { "exit_status", "signal", "timed_out", "elapsed_ns" };

		for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			json_object *v = json_object_object_get(s->result, keys[i]);

			if (v)
				json_object_object_add(doc, keys[i], json_object_get(v));
		}
		json_object_object_add(doc, "exit_code", json_object_new_int(code));
		print_document(doc);
		json_object_put(doc);
	} else {
		/* The guest's words: escaped as everything it hands us is. */
		term_write(stdout, out ?: "", len, TERM_KEEP_NEWLINES);
		fflush(stdout);
		if (code != EXIT_OK)
			fprintf(stderr, "bpfuml: the program %s\n", how);
	}
	free(out);
	return code;
}

int cmd_exec(int argc, char **argv)
{
	static const struct option longopts[] = {
		COMMON_LONGOPTS,
		{ "file", required_argument, NULL, OPT_FILE },
		{ 0 },
	};
	struct common_opts opts = COMMON_OPTS_DEFAULT, host_opts;
	const char *files[EXEC_FILES_MAX];
	char program[PATH_MAX], base[PATH_MAX];
	size_t n_files = 0, i;
	struct bpfuml_paths paths;
	json_object *job;
	struct session s;
	int c, code, err;

	/* "+": PROGRAM's own options are PROGRAM's. */
	while ((c = getopt_long(argc, argv, "+", longopts, NULL)) != -1) {
		if (c == OPT_FILE) {
			if (n_files == EXEC_FILES_MAX)
				return usage(&opts, "too many --file options");
			files[n_files++] = optarg;
			continue;
		}
		code = common_option(&opts, c, optarg);
		if (code >= 0)
			return code;
	}
	common_finish(&opts);
	if (optind >= argc)
		return usage(&opts, "no PROGRAM to run");
	if (!realpath(argv[optind], program) || access(program, X_OK))
		return fail(&opts, EXIT_USAGE, "input", "%s: %s (PROGRAM must be a host file you can "
			    "execute; the guest sees the host's / read-only)", argv[optind], strerror(errno));
	for (i = 0; i < n_files; i++) {
		char other[PATH_MAX];

		snprintf(base, sizeof(base), "%s", files[i]);
		for (size_t j = 0; j < i; j++) {
			snprintf(other, sizeof(other), "%s", files[j]);
			if (!strcmp(basename(base), basename(other)))
				return fail(&opts, EXIT_USAGE, "input", "--file %s and --file %s: two files "
					    "named %s in the run directory", files[j], files[i], basename(base));
		}
		if (access(files[i], R_OK))
			return fail(&opts, EXIT_USAGE, "input", "--file %s: %s", files[i], strerror(errno));
		if (name_taken(basename(base)))
			return fail(&opts, EXIT_USAGE, "input", "--file %s: the run directory's own %s has "
				    "that name; copy it under another name first", files[i], basename(base));
	}
	code = open_guest_session(&s, &paths, &opts);
	if (code != EXIT_OK)
		return code;

	code = EXIT_OK;
	for (i = 0; i < n_files && code == EXIT_OK; i++) {
		snprintf(base, sizeof(base), "%s", files[i]);
		err = session_add_file(&s, basename(base), files[i]);
		if (err)
			code = fail(&opts, EXIT_USAGE, "input", "--file %s: %s", files[i], strerror(-err));
	}
	/* argv[argc] is NULL: PROGRAM's arguments end there. */
	job = exec_job(s.guest_dir, EXEC_OUTPUT, opts.timeout_s, program,
		       (const char *const *)argv + optind + 1);
	/* The program has --timeout; the guest, time to report it on top. */
	host_opts = opts;
	host_opts.timeout_s = opts.timeout_s + EXEC_REPORT_S;
	if (code == EXIT_OK) {
		code = boot_guest(&s, &paths, &host_opts, job);
		/* Kernel trouble while the program ran: what it printed
		 * still counts, beside the console lines already said. */
		if (code == EXIT_OK || (s.status == SESSION_KERNEL_TROUBLE && s.result)) {
			int ran = report(&s, &opts, opts.timeout_s);

			code = code == EXIT_OK ? ran : code;
		}
	}
	if (opts.keep)
		fprintf(stderr, "bpfuml: run directory kept: %s\n", s.run_dir);
	session_destroy(&s);
	json_object_put(job);
	return code;
}
