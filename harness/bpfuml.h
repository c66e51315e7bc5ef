/* SPDX-License-Identifier: GPL-2.0 */
/* bpfuml.h — what the host-side commands share: exit codes, options common
 * to every command, and the steps from a user's file to a guest result.
 */
#ifndef BPFUML_H
#define BPFUML_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>

#include "paths.h"
#include "run_dir.h"
#include "session.h"
#include "verdict.h"

/* Exit codes, documented in `bpfuml help`. */
enum bpfuml_exit {
	EXIT_OK = 0,		/* all accepted / the run succeeded */
	EXIT_REJECTED = 1,	/* a program was rejected or could not be loaded */
	EXIT_USAGE = 2,		/* usage or input error */
	EXIT_INFRA = 3,		/* kernel panic, time-out, guest did not answer */
	EXIT_COMPILE = 4,	/* a .bpf.c did not compile */
	EXIT_INTERRUPTED = 130,	/* SIGINT/SIGTERM: the guest was killed */
};

enum output_format {
	FORMAT_HUMAN,
	FORMAT_JSON,
	FORMAT_GCC,	/* FILE:LINE:COL: error: ... for editors and agents */
	FORMAT_SARIF,	/* SARIF 2.1.0 for code-scanning uploads */
	FORMAT_GITHUB,	/* ::error workflow commands: annotations in GitHub Actions */
};

struct common_opts {
	enum output_format format;
	bool json;		/* stdout is one JSON document (json or sarif) */
	bool color;		/* resolved by common_finish() */
	bool no_color;
	int timeout_s;		/* 0 until common_finish(): the backend's default */
	const char *backend;	/* "uml" or "qemu" (--backend) */
	int log_level;
	bool keep;
	const char *cflags;
	const char *server;	/* --server or $BPFUML_SERVER: a `bpfuml serve` socket */
	/* How the guest runs BPF: "jit" (--jit: x86_64's JIT) or "interpreter"
	 * (--interpreter); NULL: the backend's default (bpf_mode_of()). */
	const char *bpf_mode;
	/* Which kernel the guest boots (--kernel or $BPFUML_KERNEL: "7.2");
	 * NULL: the default (kernels.h). */
	const char *kernel;
	const char *test_fault;		/* test-only: "panic", "hang" or "escape=PATH" in the guest */
};

struct command {
	const char *name;
	int (*func)(int argc, char **argv);
	const char *usage;
	const char *help;
};

int cmd_verify(int argc, char **argv);
int cmd_parse(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_mcp(int argc, char **argv);
int cmd_exec(int argc, char **argv);
int cmd_kselftest(int argc, char **argv);
int cmd_kselftest_merge(int argc, char **argv);
int cmd_help(int argc, char **argv);

/* ---- shared steps (common.c) -------------------------------------------- */


/* Print an error: to stderr for people; in JSON mode it becomes the "error"
 * of the command's one document (print_document(), else output_finish()).
 * Returns CODE so that callers can `return fail(...)`. */
int fail(const struct common_opts *opts, int code, const char *kind, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* The one writer of stdout in JSON mode (and SARIF): DOC is printed once,
 * with fail()'s error in it (for SARIF, as its invocation's notification);
 * a second document is never printed.  output_finish(CODE), as main()
 * returns, prints {"error", "exit_code"} alone when no document was. */
void print_document(json_object *doc);
/* DOC to the file PATH, as print_document() prints it: 0 or -errno. */
int write_document(const char *path, json_object *doc);
int output_finish(int code);

/* Put the user's FILE (a .bpf.o, or a .bpf.c compiled here) into the run
 * directory as NAME.  Returns an exit code (EXIT_OK on success). */
int stage_object(struct session *s, const struct bpfuml_paths *paths,
		 const struct common_opts *opts, const char *file, const char *name);

/* The start of a one-guest command: the build directory found, a run
 * directory made (kept with --keep), the signal handlers in place.
 * EXIT_OK, or the failure reported and its code. */
int open_guest_session(struct session *s, struct bpfuml_paths *paths, const struct common_opts *opts);

/* The agent's "exec" job (agent_exec.c): PROGRAM with ARGS (NULL-ended)
 * run in the guest's CWD, its stdout and stderr into the run directory's
 * OUTPUT, killed after TIMEOUT_S.  Its host deadline wants EXEC_REPORT_S
 * more: the time the agent takes to say it killed the program. */
#define EXEC_REPORT_S 30
json_object *exec_job(const char *cwd, const char *output, int timeout_s, const char *program,
		      const char *const *args);

/* What must hold before any guest boots: its kernel and agent built, paths
 * its command line can carry, a way to confine it.  EXIT_OK, or the
 * failure reported (fail()) and its exit code. */
int guest_can_boot(const struct session *s, const struct bpfuml_paths *paths,
		   const struct common_opts *opts);
/* The one mapping of a session's outcome to an exit code: EXIT_OK when the
 * guest answered, otherwise the failure reported and its code. */
int guest_failure(const struct common_opts *opts, const struct session *s);
/* guest_can_boot(), room for it, session_run(), guest_failure(). */
int boot_guest(struct session *s, const struct bpfuml_paths *paths,
	       const struct common_opts *opts, json_object *job);

/* Exit 3, said with what is needed, what is free and what to do, when DIR's
 * file system has no room for GUESTS guests of MEM_MB at once; HINT (or
 * NULL) adds the command's own ways out.  EXIT_OK otherwise. */
int check_space(const struct common_opts *opts, const char *dir, unsigned int guests,
		unsigned int mem_mb, const char *hint);

/* boot / job / shutdown breakdown of a session, in milliseconds. */
json_object *timing_json(const struct session *s);
/* "kvm" or "tcg" for a QEMU guest, null for UML. */
json_object *accel_json(const struct session *s);
json_object *kernel_json(const struct session *s);
/* What confined the guest on the host: "landlock-abi7", "namespace", "none". */
/* How the guest of S is confined on the host (a warm guest: as its server said). */
json_object *confinement_json(const struct session *s);
/* How BACKEND's kernel runs BPF unless told: "interpreter" (uml), "jit" (qemu). */
const char *bpf_mode_default(const char *backend);
/* The mode a command's guests run BPF in: --jit/--interpreter, or the default. */
const char *bpf_mode_of(const struct common_opts *opts);
void print_timing(FILE *out, const struct session *s);

/* Print one program's verdict block (human), or return it as JSON. */
void print_program(FILE *out, struct session *s, json_object *prog, const struct common_opts *opts);
json_object *program_json(struct session *s, json_object *prog);

/* Where a rejection without a structured report happened, from the trace. */
struct diag_log;
void print_no_report(FILE *out, const struct diag_log *log);


/* OPTION's file PATH can be written (opened to append, so an existing one
 * keeps its text until the report replaces or extends it): EXIT_OK, else a
 * usage error said — checked before a run, which would be lost after it. */
int report_file_check(const struct common_opts *opts, const char *option, const char *path);

/* A user's file (a log, a JSON document) read whole, NUL-terminated: 0, or
 * -errno; -EFBIG beyond MAX bytes (reading /dev/zero ends). */
int read_whole_file(const char *path, size_t max, char **text, size_t *len);

/* PATH, a document `bpfuml COMMAND --json` wrote (the user's file: at most
 * MAX bytes, JSON, schema bpfuml-COMMAND/1): the document, or NULL with
 * WHY, a clause to follow the path ("is not JSON (...)"). */
json_object *read_our_document(const char *path, size_t max, const char *command, char *why, size_t len);

const char *json_str(json_object *obj, const char *key);
/* OBJ's member KEY (NULL when OBJ is NULL or has none). */
json_object *json_member(json_object *obj, const char *key);
/* Member KEY when it is a string, else NULL (json_str() gives any scalar
 * as text): for what another program sends, whose types are not trusted. */
const char *json_string_member(json_object *obj, const char *key);
long long json_int(json_object *obj, const char *key, long long fallback);

#endif
