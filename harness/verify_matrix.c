// SPDX-License-Identifier: GPL-2.0
/*
 * verify_matrix.c — `verify --kernels 7.3,7.2 FILE...`: the same verify on
 * several kernels (issue 22).
 *
 * Each kernel's verify is this program run again with --kernel VERSION in
 * place of --kernels, as many at once as there are CPUs; this file only
 * combines their outputs.  A human reader gets a matrix, program x kernel,
 * and each failure's first error; --json one document holding each
 * kernel's whole verify document; gcc, github and SARIF output are the
 * kernels' own, each message naming its kernel.  The exit code is the
 * worst of the kernels': 1 when any kernel rejects a program.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpfuml.h"
#include "kernels.h"
#include "term.h"
#include "verify_matrix.h"

#define MATRIX_MAX_KERNELS 16

struct kernel_run {
	char version[KERNEL_NAME_MAX];
	pid_t pid;
	int out_fd, err_fd;
	char *out, *err;	/* what it printed */
	size_t out_len, err_len;
	int exit_code;
};

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	interrupted = sig;
}

/* "7.3,7.2" or "all" (every kernel of versions.conf) into RUNS. */
static int parse_kernels(const struct common_opts *opts, const char *list, struct kernel_run *runs,
			 size_t *nr)
{
	struct bpfuml_paths paths;
	struct kernel_info info;
	char known[256], *copy, *tok, *save = NULL;
	int err;

	if (paths_init(&paths))
		return fail(opts, EXIT_INFRA, "infrastructure", "cannot locate bpfuml's build directory");
	err = kernel_lookup(&paths, "", &info, known, sizeof(known));
	if (err != -ENOENT)
		return fail(opts, EXIT_INFRA, "infrastructure", "cannot read %s/versions.conf (%s); run make "
			    "or ./run.sh", paths.build_dir, strerror(-err));
	copy = strdupa(strcmp(list, "all") ? list : known);
	*nr = 0;
	for (tok = strtok_r(copy, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		if (kernel_lookup(&paths, tok, &info, NULL, 0))
			return fail(opts, EXIT_USAGE, "usage", "--kernels: no kernel %s: bpfuml builds %s "
				    "(kernel-patches/versions.conf)", tok, known);
		for (size_t i = 0; i < *nr; i++)
			if (!strcmp(runs[i].version, info.version))
				return fail(opts, EXIT_USAGE, "usage", "--kernels names %s twice", tok);
		if (*nr == MATRIX_MAX_KERNELS)
			return fail(opts, EXIT_USAGE, "usage", "--kernels: at most %d kernels",
				    MATRIX_MAX_KERNELS);
		snprintf(runs[(*nr)++].version, KERNEL_NAME_MAX, "%s", info.version);
	}
	if (!*nr)
		return fail(opts, EXIT_USAGE, "usage", "--kernels wants a list such as 7.3,7.2 or all");
	return EXIT_OK;
}

/* ARGV without --kernels (and, for kernels that print JSON, without the
 * output format), with --kernel VERSION and FORMAT_ARGS (NULL-terminated). */
static char **child_argv(int argc, char **argv, const char *version, const char *const *format_args)
{
	char **out = calloc(argc + 8, sizeof(*out));
	int n = 0, i;

	if (!out)
		return NULL;
	out[n++] = "/proc/self/exe";
	out[n++] = argv[0];	/* "verify" */
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			break;
		} else if (!strcmp(argv[i], "--kernels") || !strcmp(argv[i], "--format")) {
			i++;
		} else if (strncmp(argv[i], "--kernels=", 10) && strncmp(argv[i], "--format=", 9) &&
			   strcmp(argv[i], "--json")) {
			out[n++] = argv[i];
		}
	}
	out[n++] = "--kernel";
	out[n++] = (char *)version;
	while (*format_args)
		out[n++] = (char *)*format_args++;
	for (; i < argc; i++)
		out[n++] = argv[i];
	return out;
}

static int start(struct kernel_run *r, int argc, char **argv, const char *const *format_args)
{
	int out[2], err[2];
	char **args = child_argv(argc, argv, r->version, format_args);

	if (!args || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) {
		free(args);
		return -errno;
	}
	r->pid = fork();
	if (r->pid == 0) {
		dup2(out[1], STDOUT_FILENO);
		dup2(err[1], STDERR_FILENO);
		execv("/proc/self/exe", args);
		dprintf(STDERR_FILENO, "bpfuml: cannot run /proc/self/exe: %s\n", strerror(errno));
		_exit(EXIT_INFRA);
	}
	free(args);
	close(out[1]);
	close(err[1]);
	if (r->pid < 0) {
		close(out[0]);
		close(err[0]);
		return -errno;
	}
	r->out_fd = out[0];
	r->err_fd = err[0];
	return 0;
}

static void drain(int *fd, char **buf, size_t *len)
{
	char chunk[65536];
	ssize_t n = read(*fd, chunk, sizeof(chunk));
	char *grown;

	if (n <= 0) {
		if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
			close(*fd);
			*fd = -1;
		}
		return;
	}
	grown = realloc(*buf, *len + n + 1);
	if (!grown)
		return;		/* dropped; the exit code still counts */
	memcpy(grown + *len, chunk, n);
	*len += n;
	grown[*len] = '\0';
	*buf = grown;
}

/* Run every kernel's verify, JOBS at once; collect outputs and exit codes. */
static void run_all(struct kernel_run *runs, size_t nr, int argc, char **argv, const char *const *format_args)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t jobs = cpus > 0 ? (size_t)cpus : 1, next = 0, running = 0, i;
	struct sigaction sa = { .sa_handler = on_signal }, old[3];
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };

	for (i = 0; i < 3; i++)
		sigaction(sigs[i], &sa, &old[i]);
	for (i = 0; i < nr; i++) {
		runs[i].out_fd = runs[i].err_fd = -1;
		runs[i].exit_code = runs[i].pid = -1;
		runs[i].out = runs[i].err = NULL;
		runs[i].out_len = runs[i].err_len = 0;
	}
	while (next < nr || running) {
		struct pollfd fds[2 * MATRIX_MAX_KERNELS];
		size_t owner[2 * MATRIX_MAX_KERNELS], nfds = 0;

		while (!interrupted && next < nr && running < jobs) {
			if (start(&runs[next], argc, argv, format_args))
				runs[next].exit_code = EXIT_INFRA;
			else
				running++;
			next++;
		}
		if (interrupted) {
			for (i = 0; i < nr; i++)
				if (runs[i].pid > 0 && runs[i].exit_code < 0)
					kill(runs[i].pid, interrupted);
			next = nr;
		}
		for (i = 0; i < nr; i++) {
			if (runs[i].out_fd >= 0) {
				fds[nfds] = (struct pollfd){ .fd = runs[i].out_fd, .events = POLLIN };
				owner[nfds++] = i;
			}
			if (runs[i].err_fd >= 0) {
				fds[nfds] = (struct pollfd){ .fd = runs[i].err_fd, .events = POLLIN };
				owner[nfds++] = i;
			}
		}
		if (nfds && poll(fds, nfds, -1) > 0) {
			for (i = 0; i < nfds; i++) {
				struct kernel_run *r = &runs[owner[i]];

				if (!fds[i].revents)
					continue;
				if (fds[i].fd == r->out_fd)
					drain(&r->out_fd, &r->out, &r->out_len);
				else
					drain(&r->err_fd, &r->err, &r->err_len);
			}
		}
		/* A child whose pipes are closed has exited (or will at once). */
		for (i = 0; i < nr; i++) {
			struct kernel_run *r = &runs[i];
			int status;

			if (r->pid <= 0 || r->exit_code >= 0 || r->out_fd >= 0 || r->err_fd >= 0)
				continue;
			while (waitpid(r->pid, &status, 0) < 0 && errno == EINTR)
				;
			r->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : EXIT_INTERRUPTED;
			running--;
		}
	}
	for (i = 0; i < 3; i++)
		sigaction(sigs[i], &old[i], NULL);
}

/* The worst exit code: interrupted, then infrastructure, usage, compile,
 * rejected. */
static int worst(const struct kernel_run *runs, size_t nr)
{
	static const int order[] = { EXIT_INTERRUPTED, EXIT_INFRA, EXIT_USAGE, EXIT_COMPILE, EXIT_REJECTED };
	size_t i, k;

	for (k = 0; k < sizeof(order) / sizeof(order[0]); k++)
		for (i = 0; i < nr; i++)
			if (runs[i].exit_code == order[k])
				return order[k];
	for (i = 0; i < nr; i++)
		if (runs[i].exit_code != EXIT_OK)
			return EXIT_INFRA;
	return EXIT_OK;
}

/* Each kernel's stderr, its lines prefixed with the kernel. */
static void relay_stderr(const struct kernel_run *runs, size_t nr)
{
	for (size_t i = 0; i < nr; i++) {
		const char *line = runs[i].err, *eol;

		for (; line && *line; line = *eol ? eol + 1 : eol) {
			eol = strchrnul(line, '\n');
			fprintf(stderr, "[%s] ", runs[i].version);
			term_write(stderr, line, eol - line, 0);
			fputc('\n', stderr);
		}
	}
}

static json_object *parse_doc(const struct kernel_run *r)
{
	return r->out ? json_tokener_parse(r->out) : NULL;
}

/* The programs of one file's document ("programs"), or of the FILE-th of
 * "files" when several were verified. */
static json_object *file_doc(json_object *doc, size_t file)
{
	json_object *files;

	if (json_object_object_get_ex(doc, "files", &files))
		return json_object_array_get_idx(files, file);
	return file ? NULL : doc;
}

/* A program's cell and, when it was not accepted, its first error. */
static const char *cell(json_object *prog, const char **why, char *buf, size_t size)
{
	const char *verdict = json_str(prog, "verdict") ?: "?";
	json_object *diag = json_member(prog, "diagnostics"), *v;

	*why = NULL;
	if (!strcmp(verdict, "accepted"))
		return "accepted";
	if (!strcmp(verdict, "not_loaded")) {
		*why = not_loaded_reason(prog, buf, size);
		return "not loaded";
	}
	if (json_object_object_get_ex(prog, "verified", &v) && json_object_get_boolean(v)) {
		*why = "verified, then refused: it needs a JIT to run";
		return "refused";
	}
	*why = json_str(diag, "legacy_error") ?: json_str(prog, "error");
	return "rejected";
}

static void print_matrix(const struct kernel_run *runs, size_t nr, json_object **docs, bool color)
{
	size_t k, f, p, nfiles = 0;
	json_object *any = NULL;

	for (k = 0; k < nr && !any; k++)
		any = docs[k];
	if (any) {
		json_object *files;

		nfiles = json_object_object_get_ex(any, "files", &files) ? json_object_array_length(files) : 1;
	}
	for (f = 0; f < nfiles; f++) {
		json_object *progs = NULL;
		const char *file = NULL;

		/* Rows: the programs of the first kernel that had the file. */
		for (k = 0; k < nr && !progs; k++) {
			json_object *fd = docs[k] ? file_doc(docs[k], f) : NULL;

			if (fd && json_object_object_get_ex(fd, "programs", &progs))
				file = json_str(fd, "file");
		}
		char esc[256];

		printf("%s%-30s", f ? "\n" : "", term_escape(esc, sizeof(esc), file ?: "?"));
		for (k = 0; k < nr; k++)
			printf(" %-12s", runs[k].version);
		putchar('\n');
		for (p = 0; progs && p < json_object_array_length(progs); p++) {
			const char *name = json_str(json_object_array_get_idx(progs, p), "name") ?: "?";

			printf("  %-28s", term_escape(esc, sizeof(esc), name));
			for (k = 0; k < nr; k++) {
				json_object *fd = docs[k] ? file_doc(docs[k], f) : NULL, *kp = NULL, *list;
				const char *why, *text = "-";
				char buf[512];

				if (fd && json_object_object_get_ex(fd, "programs", &list))
					for (size_t j = 0; j < json_object_array_length(list); j++)
						if (!strcmp(json_str(json_object_array_get_idx(list, j), "name") ?: "",
							    name))
							kp = json_object_array_get_idx(list, j);
				if (kp)
					text = cell(kp, &why, buf, sizeof(buf));
				else if (!docs[k] || json_member(docs[k], "error"))
					text = "failed";
				if (color && strcmp(text, "-"))
					printf(" %s%-12s\033[0m", strcmp(text, "accepted") ? "\033[1;31m" : "\033[1;32m",
					       text);
				else
					printf(" %-12s", text);
			}
			putchar('\n');
		}
		/* Each failure's first error, kernel by kernel. */
		for (k = 0; k < nr; k++) {
			json_object *fd = docs[k] ? file_doc(docs[k], f) : NULL, *list;

			if (!fd || !json_object_object_get_ex(fd, "programs", &list))
				continue;
			for (p = 0; p < json_object_array_length(list); p++) {
				json_object *kp = json_object_array_get_idx(list, p);
				const char *why, *text;
				char buf[512];

				text = cell(kp, &why, buf, sizeof(buf));
				if (!strcmp(text, "accepted"))
					continue;
				printf("  ");
				term_puts(stdout, json_str(kp, "name") ?: "?");
				printf(" on %s: %s: ", runs[k].version, text);
				term_puts(stdout, why ?: "?");
				putchar('\n');
			}
		}
	}
	for (k = 0; k < nr; k++) {
		const char *error = json_str(json_member(docs[k], "error"), "message");

		if (!docs[k]) {
			printf("kernel %s: no result (exit %d; its messages are above)\n", runs[k].version,
			       runs[k].exit_code);
		} else if (error) {
			printf("kernel %s: ", runs[k].version);
			term_puts(stdout, error);
			putchar('\n');
		}
	}
}

/* gcc ("FILE:L:C: error: MSG") and GitHub ("::error ...::MSG") lines with
 * "[kernel V] " before MSG; other lines as they are. */
static void print_tagged_lines(const struct kernel_run *r, enum output_format format)
{
	const char *line = r->out, *eol, *at;

	for (; line && *line; line = *eol ? eol + 1 : eol) {
		eol = strchrnul(line, '\n');
		at = NULL;
		if (format == FORMAT_GITHUB && !strncmp(line, "::", 2)) {
			at = memmem(line + 2, eol - line - 2, "::", 2);
			at = at ? at + 2 : NULL;
		} else if (format == FORMAT_GCC) {
			static const char *const kinds[] = { ": error: ", ": warning: ", ": note: " };

			for (size_t i = 0; !at && i < 3; i++)
				if ((at = memmem(line, eol - line, kinds[i], strlen(kinds[i]))))
					at += strlen(kinds[i]);
		}
		if (at)
			printf("%.*s[kernel %s] %.*s\n", (int)(at - line), line, r->version, (int)(eol - at), at);
		else
			printf("%.*s\n", (int)(eol - line), line);
	}
}

/* One SARIF log of every kernel's runs, each run and message naming it. */
static json_object *merge_sarif(const struct kernel_run *runs, size_t nr)
{
	json_object *merged = NULL, *all_runs = json_object_new_array();

	for (size_t k = 0; k < nr; k++) {
		json_object *doc = parse_doc(&runs[k]), *kruns, *results;

		if (!doc || !json_object_object_get_ex(doc, "runs", &kruns)) {
			json_object_put(doc);
			continue;
		}
		for (size_t i = 0; i < json_object_array_length(kruns); i++) {
			json_object *run = json_object_array_get_idx(kruns, i), *props = json_member(run, "properties");

			if (!props) {
				props = json_object_new_object();
				json_object_object_add(run, "properties", props);
			}
			json_object_object_add(props, "kernel", json_object_new_string(runs[k].version));
			if (!json_object_object_get_ex(run, "results", &results))
				continue;
			for (size_t j = 0; j < json_object_array_length(results); j++) {
				json_object *msg = json_member(json_object_array_get_idx(results, j), "message");
				const char *text = json_str(msg, "text");
				char *tagged;

				if (text && asprintf(&tagged, "[kernel %s] %s", runs[k].version, text) > 0) {
					json_object_object_add(msg, "text", json_object_new_string(tagged));
					free(tagged);
				}
			}
			json_object_array_add(all_runs, json_object_get(run));
		}
		if (!merged) {
			merged = doc;	/* its $schema and version */
		} else {
			json_object_put(doc);
		}
	}
	if (!merged)
		merged = json_object_new_object();
	json_object_object_add(merged, "runs", all_runs);
	return merged;
}

int verify_matrix(const struct common_opts *opts, const char *kernels, int argc, char **argv)
{
	static const char *const as_json[] = { "--json", NULL };
	const char *format_args[3] = { NULL };
	struct kernel_run runs[MATRIX_MAX_KERNELS];
	json_object *docs[MATRIX_MAX_KERNELS] = { NULL };
	size_t nr = 0, k;
	int code;

	if (opts->kernel)
		return fail(opts, EXIT_USAGE, "usage", "--kernels and --kernel (or BPFUML_KERNEL) together: "
			    "give one");
	code = parse_kernels(opts, kernels, runs, &nr);
	if (code != EXIT_OK)
		return code;
	if (opts->format == FORMAT_GCC || opts->format == FORMAT_GITHUB || opts->format == FORMAT_SARIF) {
		format_args[0] = "--format";
		format_args[1] = opts->format == FORMAT_GCC ? "gcc" : opts->format == FORMAT_GITHUB ? "github" : "sarif";
	}
	/* BPFUML_KERNEL must not reach the kernels' runs: --kernel names theirs. */
	unsetenv("BPFUML_KERNEL");
	run_all(runs, nr, argc, argv, format_args[0] ? format_args : as_json);
	code = worst(runs, nr);
	relay_stderr(runs, nr);
	if (opts->format == FORMAT_GCC || opts->format == FORMAT_GITHUB) {
		for (k = 0; k < nr; k++)
			print_tagged_lines(&runs[k], opts->format);
	} else if (opts->format == FORMAT_SARIF) {
		json_object *sarif = merge_sarif(runs, nr);

		print_document(sarif);
		json_object_put(sarif);
	} else {
		for (k = 0; k < nr; k++)
			docs[k] = parse_doc(&runs[k]);
		if (opts->json) {
			json_object *doc = json_object_new_object(), *list = json_object_new_array();

			json_object_object_add(doc, "schema", json_object_new_string("bpfuml-verify-matrix/1"));
			for (k = 0; k < nr; k++) {
				json_object *row = json_object_new_object();

				json_object_object_add(row, "kernel", json_object_new_string(runs[k].version));
				json_object_object_add(row, "exit_code", json_object_new_int(runs[k].exit_code));
				json_object_object_add(row, "result", json_object_get(docs[k]));
				json_object_array_add(list, row);
			}
			json_object_object_add(doc, "kernels", list);
			json_object_object_add(doc, "exit_code", json_object_new_int(code));
			print_document(doc);
			json_object_put(doc);
		} else {
			print_matrix(runs, nr, docs, opts->color);
		}
	}
	for (k = 0; k < nr; k++) {
		json_object_put(docs[k]);
		free(runs[k].out);
		free(runs[k].err);
	}
	return code;
}
