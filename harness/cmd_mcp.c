// SPDX-License-Identifier: GPL-2.0
/* cmd_mcp.c — `bpfuml mcp`: a Model Context Protocol server on stdio, so that
 * coding agents reach verify, run, parse, probe and kselftest as tools.
 *
 * JSON-RPC 2.0, one message per line.  Both eras of the protocol are
 * spoken: clients that open with "initialize" (2025-11-25 back to
 * 2024-11-05), and 2026-07-28's stateless requests, which carry their
 * version in _meta and may start with "server/discover".
 *
 * Each tool call is the bpfuml command itself with --json, run as a child
 * (what an agent gets is exactly what the command gives), against a `bpfuml
 * serve` of our own started at the first call that needs a guest.  A call
 * runs to its end before the next request is read, but a cancellation of
 * it is read meanwhile and kills it; a kselftest call sends progress
 * notifications as its guests finish.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpfuml.h"
#include "options.h"
#include "private_server.h"
#include "session.h"

#define MODERN_VERSION "2026-07-28"
static const char *const legacy_versions[] = { "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", NULL };

/* A message longer than this is refused (inline C sources are capped lower). */
#define MESSAGE_MAX (8u << 20)
#define SOURCE_MAX (1u << 20)
#define LOG_MAX (64u << 20)
#define OUTPUT_MAX (256u << 20)

enum { PARSE_ERROR = -32700, INVALID_REQUEST = -32600, METHOD_NOT_FOUND = -32601,
       INVALID_PARAMS = -32602, INTERNAL_ERROR = -32603, UNSUPPORTED_VERSION = -32022 };

struct mcp {
	/* stdin, read in pieces: whole lines are taken from the front. */
	char *in;
	size_t in_len, in_cap;
	bool in_eof, in_discarding;	/* a line over MESSAGE_MAX is skipped */
	struct private_server server;
	bool server_tried;
	char scratch[PATH_MAX];		/* inline sources, logs, data */
	unsigned int files;
};

/* ---- messages ----------------------------------------------------------- */

static void send_message(json_object *msg)
{
	/* Plain JSON escapes newlines: one message, one line. */
	fputs(json_object_to_json_string_ext(msg, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
	      stdout);
	fputc('\n', stdout);
	fflush(stdout);
	json_object_put(msg);
}

static json_object *envelope(json_object *id)
{
	json_object *msg = json_object_new_object();

	json_object_object_add(msg, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(msg, "id", id ? json_object_get(id) : NULL);
	return msg;
}

static void reply(json_object *id, json_object *result)
{
	json_object *msg = envelope(id);

	json_object_object_add(msg, "result", result);
	send_message(msg);
}

static void reply_error(json_object *id, int code, const char *message, json_object *data)
{
	json_object *msg = envelope(id), *err = json_object_new_object();

	json_object_object_add(err, "code", json_object_new_int(code));
	json_object_object_add(err, "message", json_object_new_string(message));
	if (data)
		json_object_object_add(err, "data", data);
	json_object_object_add(msg, "error", err);
	send_message(msg);
}

static void notify_progress(json_object *token, double progress, double total, const char *message)
{
	json_object *msg = json_object_new_object(), *params = json_object_new_object();

	json_object_object_add(msg, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(msg, "method", json_object_new_string("notifications/progress"));
	json_object_object_add(params, "progressToken", json_object_get(token));
	json_object_object_add(params, "progress", json_object_new_double(progress));
	if (total > 0)
		json_object_object_add(params, "total", json_object_new_double(total));
	if (message)
		json_object_object_add(params, "message", json_object_new_string(message));
	json_object_object_add(msg, "params", params);
	send_message(msg);
}

/* ---- stdin -------------------------------------------------------------- */

/* Read what stdin has (blocking when WAIT): false at its end. */
static bool read_input(struct mcp *m, bool wait)
{
	char buf[65536];
	ssize_t n;

	{
		struct pollfd pfd = { .fd = 0, .events = POLLIN };

		if (session_ppoll(&pfd, 1, wait ? -1 : 0) != 1)
			return !session_interrupted;
	}
	n = read(0, buf, sizeof(buf));
	if (n < 0)
		return errno == EINTR || errno == EAGAIN;
	if (n == 0) {
		m->in_eof = true;
		return false;
	}
	if (m->in_len + n > m->in_cap) {
		size_t cap = m->in_cap ? m->in_cap * 2 : 1 << 16;

		while (cap < m->in_len + n)
			cap *= 2;
		m->in = realloc(m->in, cap);
		if (!m->in)
			exit(EXIT_INFRA);
		m->in_cap = cap;
	}
	memcpy(m->in + m->in_len, buf, n);
	m->in_len += n;
	return true;
}

/* The next whole line (malloc'd, without its newline), or NULL. */
static char *take_line(struct mcp *m)
{
	for (;;) {
		char *nl = m->in_len ? memchr(m->in, '\n', m->in_len) : NULL, *line;
		size_t len;

		if (!nl) {
			if (m->in_len > MESSAGE_MAX) {
				/* Too long to be ours: dropped up to its end. */
				m->in_len = 0;
				m->in_discarding = true;
				reply_error(NULL, INVALID_REQUEST, "message too long (over 8 MiB)", NULL);
			}
			return NULL;
		}
		len = nl - m->in;
		line = m->in_discarding ? NULL : strndup(m->in, len);
		memmove(m->in, nl + 1, m->in_len - len - 1);
		m->in_len -= len + 1;
		if (m->in_discarding) {
			m->in_discarding = false;
			continue;
		}
		return line;
	}
}

/* ---- running a bpfuml command for a tool --------------------------------- */

struct outcome {
	int code;			/* the command's exit code; -1: cancelled */
	char *out, *err;		/* its stdout and stderr */
	size_t out_len, err_len;
};

static void append(char **buf, size_t *len, const char *data, size_t n, size_t cap)
{
	if (*len + n > cap)
		n = *len < cap ? cap - *len : 0;
	*buf = realloc(*buf, *len + n + 1);
	memcpy(*buf + *len, data, n);
	*len += n;
	(*buf)[*len] = '\0';
}

/* A line of kselftest's progress on stderr: "  guest 3/12 done (...)". */
static void relay_progress(json_object *token, const char *err, size_t *seen)
{
	const char *line = err + *seen, *nl;

	while ((nl = strchr(line, '\n'))) {
		unsigned int done, total;

		if (token && sscanf(line, " guest %u/%u done", &done, &total) == 2) {
			char *text = strndup(line, nl - line);

			notify_progress(token, done, total, text ? text + strspn(text, " ") : NULL);
			free(text);
		}
		line = nl + 1;
	}
	*seen = line - err;
}

/* Is this message a cancellation of request ID?  Other messages that come
 * meanwhile wait for their turn. */
static bool cancels(const char *line, json_object *id)
{
	json_object *msg = json_tokener_parse(line), *method, *params, *req;
	bool yes = false;

	if (msg && json_object_object_get_ex(msg, "method", &method) &&
	    !strcmp(json_object_get_string(method), "notifications/cancelled") &&
	    json_object_object_get_ex(msg, "params", &params) &&
	    json_object_object_get_ex(params, "requestId", &req))
		yes = json_object_equal(req, id);
	json_object_put(msg);
	return yes;
}

static void run_command(struct mcp *m, const char *cwd, char **argv, json_object *id,
			json_object *token, struct outcome *o)
{
	int out[2], err[2], status;
	size_t progress_seen = 0;
	char **queued = NULL;
	size_t nr_queued = 0;
	pid_t pid;

	memset(o, 0, sizeof(*o));
	o->code = EXIT_INFRA;
	if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
		return;
	pid = fork();
	if (pid < 0)
		return;
	if (pid == 0) {
		dup2(out[1], 1);
		dup2(err[1], 2);
		if (cwd && chdir(cwd))
			_exit(EXIT_INFRA);
		if (m->server.pid > 0)
			setenv("BPFUML_SERVER", m->server.socket, 1);
		setenv("NO_COLOR", "1", 1);
		execv("/proc/self/exe", argv);
		_exit(EXIT_INFRA);
	}
	close(out[1]);
	close(err[1]);
	for (int open_fds = 2; open_fds;) {
		struct pollfd pfd[3] = {
			{ .fd = out[0], .events = POLLIN }, { .fd = err[0], .events = POLLIN },
			{ .fd = m->in_eof ? -1 : 0, .events = POLLIN },
		};
		char buf[65536], *line;
		ssize_t n;

		if (session_ppoll(pfd, 3, -1) < 0) {
			if (session_interrupted) {
				/* We are stopping: the call goes with us, unanswered. */
				kill(pid, SIGTERM);
				o->code = -1;
				break;
			}
			if (errno != EINTR)
				break;
			continue;
		}
		for (int k = 0; k < 2; k++) {
			if (pfd[k].fd < 0 || !(pfd[k].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			n = read(pfd[k].fd, buf, sizeof(buf));
			if (n <= 0) {
				close(pfd[k].fd);
				*(k ? &err[0] : &out[0]) = -1;
				open_fds--;
				continue;
			}
			if (k == 0) {
				append(&o->out, &o->out_len, buf, n, OUTPUT_MAX);
			} else {
				append(&o->err, &o->err_len, buf, n, 1 << 20);
				relay_progress(token, o->err, &progress_seen);
			}
		}
		if (pfd[2].revents & (POLLIN | POLLHUP)) {
			read_input(m, true);
			while ((line = take_line(m))) {
				if (cancels(line, id)) {
					free(line);
					kill(pid, SIGTERM);
					o->code = -1;
					continue;
				}
				queued = realloc(queued, (nr_queued + 1) * sizeof(*queued));
				queued[nr_queued++] = line;
			}
		}
	}
	if (out[0] >= 0)
		close(out[0]);
	if (err[0] >= 0)
		close(err[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (o->code != -1)
		o->code = WIFEXITED(status) ? WEXITSTATUS(status) : EXIT_INFRA;
	/* The messages that came meanwhile go back in front of the rest. */
	if (nr_queued) {
		size_t total = 0;
		char *joined;

		for (size_t i = 0; i < nr_queued; i++)
			total += strlen(queued[i]) + 1;
		joined = malloc(total + m->in_len + 1);
		total = 0;
		for (size_t i = 0; i < nr_queued; i++) {
			total += sprintf(joined + total, "%s\n", queued[i]);
			free(queued[i]);
		}
		memcpy(joined + total, m->in, m->in_len);
		free(m->in);
		m->in = joined;
		m->in_len += total;
		m->in_cap = m->in_len + 1;
	}
	free(queued);
}

/* Warm guests for the tools that boot one; without them, each boots its own. */
static void want_server(struct mcp *m)
{
	int err;

	if (m->server_tried)
		return;
	m->server_tried = true;
	if (getenv("BPFUML_SERVER") && *getenv("BPFUML_SERVER"))
		return;		/* the user's own server: the children find it */
	err = private_server_start(&m->server);
	if (err)
		fprintf(stderr, "bpfuml mcp: no warm guest (bpfuml serve did not start: %s); each call "
			"boots one\n", strerror(-err));
}

/* A file of ours in the scratch directory, holding DATA. */
static int scratch_file(struct mcp *m, const char *name, const char *data, size_t len,
			char *path, size_t size, char *dir, size_t dir_size)
{
	FILE *f;

	if (snprintf(dir, dir_size, "%s/%u", m->scratch, ++m->files) >= (int)dir_size ||
	    snprintf(path, size, "%s/%s", dir, name) >= (int)size)
		return -ENAMETOOLONG;
	if (mkdir(dir, 0700))
		return -errno;
	f = fopen(path, "we");
	if (!f)
		return -errno;
	if (fwrite(data, 1, len, f) != len) {
		fclose(f);
		return -EIO;
	}
	return fclose(f) ? -errno : 0;
}

static void remove_scratch(const char *dir)
{
	if (dir && *dir)
		session_remove_tree(dir);
}

/* ---- tool results ------------------------------------------------------- */

static json_object *copy_of(json_object *v)
{
	json_object *c = NULL;

	if (v)
		json_object_deep_copy(v, &c, NULL);
	return c;
}

/* A site of a report (At, or a causal-path event): its message and where. */
static json_object *site(json_object *at)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "message", copy_of(json_member(at, "message")));
	json_object_object_add(o, "location", copy_of(json_member(at, "location")));
	json_object_object_add(o, "insn", copy_of(json_member(at, "insn")));
	return o;
}

/* Each program's verdict with its report first, for an agent to read:
 * category, problem, reason, where (At), the causal path, the suggestion;
 * KERNEL: the kernel of a --kernels row, or NULL. */
static void add_reports(json_object *reports, json_object *file_doc, const char *kernel)
{
	json_object *progs = json_member(file_doc, "programs");

	for (size_t i = 0; progs && i < json_object_array_length(progs); i++) {
		json_object *p = json_object_array_get_idx(progs, i), *o = json_object_new_object();
		json_object *r = json_object_array_get_idx(json_member(json_member(p, "diagnostics"), "reports"), 0);
		json_object *events = json_member(json_member(r, "causal_path"), "events"), *path;

		if (kernel)
			json_object_object_add(o, "kernel", json_object_new_string(kernel));
		json_object_object_add(o, "file", copy_of(json_member(file_doc, "file")));
		json_object_object_add(o, "program", copy_of(json_member(p, "name")));
		json_object_object_add(o, "verdict", copy_of(json_member(p, "verdict")));
		if (r) {
			json_object_object_add(o, "category", copy_of(json_member(r, "category")));
			json_object_object_add(o, "problem", copy_of(json_member(r, "problem")));
			json_object_object_add(o, "reason", copy_of(json_member(r, "reason")));
			json_object_object_add(o, "at", json_member(r, "at") ? site(json_member(r, "at")) : NULL);
			path = json_object_new_array();
			for (size_t k = 0; events && k < json_object_array_length(events); k++)
				json_object_array_add(path, site(json_object_array_get_idx(events, k)));
			json_object_object_add(o, "causal_path", path);
			json_object_object_add(o, "suggestion", copy_of(json_member(r, "suggestion")));
		} else if (json_member(p, "error")) {
			json_object_object_add(o, "error", copy_of(json_member(p, "error")));
		}
		json_object_array_add(reports, o);
	}
}

/* One line per program for the text content. */
static void summarize(char **text, size_t *len, json_object *reports)
{
	for (size_t i = 0; i < json_object_array_length(reports); i++) {
		json_object *r = json_object_array_get_idx(reports, i), *loc = json_member(json_member(r, "at"), "location");
		char *line = NULL, where[PATH_MAX + 64] = "";

		if (loc)
			snprintf(where, sizeof(where), " at %s:%d:%d", json_object_get_string(json_member(loc, "file")) ?: "?",
				 json_object_get_int(json_member(loc, "line")), json_object_get_int(json_member(loc, "column")));
		if (asprintf(&line, "%s%s%s%s %s: %s%s%s%s%s%s%s%s\n",
			     json_member(r, "kernel") ? "[kernel " : "",
			     json_member(r, "kernel") ? json_object_get_string(json_member(r, "kernel")) : "",
			     json_member(r, "kernel") ? "] " : "", json_object_get_string(json_member(r, "file")),
			     json_object_get_string(json_member(r, "program")), json_object_get_string(json_member(r, "verdict")),
			     json_member(r, "category") ? " - " : "", json_member(r, "category") ? json_object_get_string(json_member(r, "category")) : "",
			     json_member(r, "problem") ? ": " : "", json_member(r, "problem") ? json_object_get_string(json_member(r, "problem")) : "",
			     where, json_member(r, "reason") ? ". " : "",
			     json_member(r, "reason") ? json_object_get_string(json_member(r, "reason")) : "") > 0) {
			append(text, len, line, strlen(line), 1 << 20);
			if (json_member(r, "suggestion")) {
				free(line);
				line = NULL;
				if (asprintf(&line, "  suggestion: %s\n", json_object_get_string(json_member(r, "suggestion"))) > 0)
					append(text, len, line, strlen(line), 1 << 20);
			}
		}
		free(line);
	}
}

/* The result of a tool call from what the command gave: its document as
 * structured content (verify's with "reports" first), a text summary and
 * the document as text (for clients without structured content).  A
 * command that failed as a tool (bad input, no guest, no compile) is an
 * error result; a rejected program is not: that is the answer. */
static json_object *tool_result(const char *tool, const struct outcome *o)
{
	json_object *result = json_object_new_object(), *content = json_object_new_array(), *item;
	json_object *doc = o->out_len ? json_tokener_parse(o->out) : NULL, *structured = NULL;
	bool is_error = o->code != EXIT_OK && o->code != EXIT_REJECTED;
	char *text = NULL;
	size_t len = 0;

	if (doc && !json_object_is_type(doc, json_type_object)) {
		json_object_put(doc);
		doc = NULL;
	}
	if (doc && !strcmp(tool, "verify") && !json_member(doc, "error")) {
		json_object *reports = json_object_new_array(), *kernels = json_member(doc, "kernels");
		size_t nr = kernels ? json_object_array_length(kernels) : 1;

		/* One verify document, or (--kernels) one per kernel. */
		for (size_t k = 0; k < nr; k++) {
			json_object *row = kernels ? json_object_array_get_idx(kernels, k) : NULL;
			json_object *kdoc = row ? json_member(row, "result") : doc, *files = json_member(kdoc, "files");
			const char *kernel = row ? json_object_get_string(json_member(row, "kernel")) : NULL;

			if (files)
				for (size_t i = 0; i < json_object_array_length(files); i++)
					add_reports(reports, json_object_array_get_idx(files, i), kernel);
			else
				add_reports(reports, kdoc, kernel);
		}
		summarize(&text, &len, reports);
		structured = json_object_new_object();
		json_object_object_add(structured, "reports", reports);
		json_object_object_foreach(doc, key, value)
			json_object_object_add(structured, key, json_object_get(value));
		json_object_put(doc);
	} else {
		structured = doc;
	}
	if (is_error) {
		const char *message = json_object_get_string(json_member(json_member(structured, "error"), "message"));
		char *line = NULL;

		if (asprintf(&line, "bpfuml %s failed (exit %d): %s\n%s", tool, o->code,
			     message ?: "", message ? "" : o->err ?: "") > 0)
			append(&text, &len, line, strlen(line), 1 << 20);
		free(line);
	} else if (!text) {
		append(&text, &len, "done\n", 5, 16);
	}
	item = json_object_new_object();
	json_object_object_add(item, "type", json_object_new_string("text"));
	json_object_object_add(item, "text", json_object_new_string(text));
	json_object_array_add(content, item);
	if (structured) {
		item = json_object_new_object();
		json_object_object_add(item, "type", json_object_new_string("text"));
		json_object_object_add(item, "text", json_object_new_string(
			json_object_to_json_string_ext(structured, JSON_C_TO_STRING_PLAIN)));
		json_object_array_add(content, item);
		json_object_object_add(result, "structuredContent", structured);
	}
	json_object_object_add(result, "content", content);
	json_object_object_add(result, "isError", json_object_new_boolean(is_error));
	free(text);
	return result;
}

/* ---- the tools ---------------------------------------------------------- */

static json_object *schema_of(const char *text)
{
	return json_tokener_parse(text);
}

static json_object *tools_list(void)
{
	static const struct { const char *name, *title, *description, *input, *output; } tools[] = {
		{ "verify", "Verify BPF programs",
		  "Load every BPF program of an object (.bpf.o), a source (.bpf.c, compiled with clang-19 "
		  "against the UML 7.3 kernel's vmlinux.h), or C source text given inline, in a warm "
		  "user-mode Linux 7.3 guest, and return each program's verdict (accepted, rejected, could "
		  "not be loaded) with the verifier's structured report first: category, problem, reason, "
		  "where (at), the causal path and a suggestion; the full bpfuml-verify/1 document follows.",
		  "{\"type\":\"object\",\"properties\":{"
		  "\"path\":{\"type\":\"string\",\"description\":\"a .bpf.o or .bpf.c the server can read (relative: to its working directory)\"},"
		  "\"source\":{\"type\":\"string\",\"description\":\"BPF C source text (at most 1 MiB), instead of path; it may include vmlinux.h and <bpf/bpf_helpers.h>\"},"
		  "\"name\":{\"type\":\"string\",\"description\":\"the file name given to inline source (default prog.bpf.c)\"},"
		  "\"programs\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"description\":\"only these programs\"},"
		  "\"log_level\":{\"type\":\"integer\",\"enum\":[1,2]},"
		  "\"cflags\":{\"type\":\"string\",\"description\":\"extra clang flags for a source\"},"
		  "\"set_globals\":{\"type\":\"object\",\"additionalProperties\":{\"type\":[\"string\",\"integer\",\"boolean\"]},\"description\":\"const volatile globals set before load, as a skeleton does\"},"
		  "\"kernels\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"description\":\"verify on each of these kernels (e.g. [\\\"7.3\\\",\\\"7.2\\\"], or [\\\"all\\\"]); each report then names its kernel. Default: the default kernel alone, in the warm guest\"}},"
		  "\"oneOf\":[{\"required\":[\"path\"]},{\"required\":[\"source\"]}]}",
		  "{\"type\":\"object\",\"properties\":{\"reports\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
		  "\"properties\":{\"kernel\":{\"type\":\"string\"},\"file\":{\"type\":\"string\"},\"program\":{\"type\":\"string\"},\"verdict\":{\"type\":\"string\"},"
		  "\"category\":{\"type\":[\"string\",\"null\"]},\"problem\":{\"type\":[\"string\",\"null\"]},\"reason\":{\"type\":[\"string\",\"null\"]},"
		  "\"at\":{\"type\":[\"object\",\"null\"]},\"causal_path\":{\"type\":\"array\"},\"suggestion\":{\"type\":[\"string\",\"null\"]}}}}},"
		  "\"required\":[\"reports\"]}" },
		{ "run", "Run a BPF program",
		  "Load one program of an object or source and run it with BPF_PROG_TEST_RUN in the guest: "
		  "return value, duration, data out, and the object's global variables after the run "
		  "(the bpfuml-run/1 document).",
		  "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},\"program\":{\"type\":\"string\"},"
		  "\"data_in_hex\":{\"type\":\"string\",\"description\":\"the packet or input, as hex\"},"
		  "\"repeat\":{\"type\":\"integer\",\"minimum\":1},\"attach\":{\"type\":\"boolean\"}},"
		  "\"required\":[\"path\",\"program\"]}", NULL },
		{ "parse_log", "Explain a verifier log",
		  "Parse a verifier log (the text the kernel gave a loader) into its structured report: "
		  "category, problem, reason, location, causal path, suggestion (bpfuml-diag/1).  No guest.",
		  "{\"type\":\"object\",\"properties\":{\"log\":{\"type\":\"string\"},\"program\":{\"type\":\"string\"}},"
		  "\"required\":[\"log\"]}", NULL },
		{ "probe", "What the UML kernel can do",
		  "Which program types, attach kinds, map types and features the guest kernel verifies, "
		  "attaches and runs (bpfuml-probe/1), each no with its reason.",
		  "{\"type\":\"object\",\"properties\":{}}", NULL },
		{ "kselftest", "Run the kernel's BPF selftests",
		  "Run the kernel tree's own BPF selftests (test_progs, and test_verifier/test_maps when "
		  "asked) in UML guests: minutes for all of them; progress notifications as guests finish "
		  "when the call has a progress token.  Returns the bpfuml-kselftest/1 document.",
		  "{\"type\":\"object\",\"properties\":{\"filter\":{\"type\":\"string\",\"description\":\"test_progs -t: names containing one of these comma-separated words\"},"
		  "\"runners\":{\"type\":\"string\",\"description\":\"comma-separated: test_progs,test_verifier,test_maps\"}}}", NULL },
	};
	json_object *list = json_object_new_array();

	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
		json_object *t = json_object_new_object(), *annotations = json_object_new_object();

		json_object_object_add(t, "name", json_object_new_string(tools[i].name));
		json_object_object_add(t, "title", json_object_new_string(tools[i].title));
		json_object_object_add(t, "description", json_object_new_string(tools[i].description));
		json_object_object_add(t, "inputSchema", schema_of(tools[i].input));
		if (tools[i].output)
			json_object_object_add(t, "outputSchema", schema_of(tools[i].output));
		/* Nothing on the host changes; a guest's kernel state is its own. */
		json_object_object_add(annotations, "readOnlyHint", json_object_new_boolean(true));
		json_object_object_add(annotations, "openWorldHint", json_object_new_boolean(false));
		json_object_object_add(t, "annotations", annotations);
		json_object_array_add(list, t);
	}
	return list;
}

#define ARGV_MAX 64

struct args {
	char *v[ARGV_MAX + 1];
	int n;
};

static void arg(struct args *a, const char *s)
{
	if (a->n < ARGV_MAX)
		a->v[a->n++] = strdup(s);
	a->v[a->n] = NULL;
}

static void args_free(struct args *a)
{
	for (int i = 0; i < a->n; i++)
		free(a->v[i]);
	a->n = 0;
}

/* A path the user gave: readable by us (and so by the guest's job), or why not. */
static const char *unreadable(const char *path, char *why, size_t size)
{
	if (!access(path, R_OK))
		return NULL;
	snprintf(why, size, "cannot read %s: %s", path, strerror(errno));
	return why;
}

static bool is_hex(const char *s)
{
	for (; *s; s++)
		if (!strchr("0123456789abcdefABCDEF", *s))
			return false;
	return true;
}

/* tools/call: the command line of TOOL from ARGS, or an error message. */
static const char *build_call(struct mcp *m, const char *tool, json_object *args, struct args *a,
			      char *cwd, size_t cwd_size, char *why, size_t why_size)
{
	const char *path = json_string_member(args, "path"), *source = json_string_member(args, "source");
	char file[PATH_MAX + 64];
	json_object *v;

	cwd[0] = '\0';
	arg(a, "bpfuml");
	if (!strcmp(tool, "verify")) {
		arg(a, "verify");
		arg(a, "--json");
		if (!path == !source)
			return "verify wants \"path\" or \"source\", one of them";
		if (source) {
			const char *name = json_string_member(args, "name") ?: "prog.bpf.c";
			size_t len = strlen(source);

			if (len > SOURCE_MAX)
				return "\"source\" is over 1 MiB";
			if (strchr(name, '/') || name[0] == '.' || strlen(name) < 3 ||
			    strcmp(name + strlen(name) - 2, ".c"))
				return "\"name\" is a plain file name ending in .c";
			if (scratch_file(m, name, source, len, file, sizeof(file), cwd, cwd_size))
				return "cannot write the inline source to a scratch file";
			path = name;	/* relative to cwd: the document names it so */
		} else if (unreadable(path, why, why_size)) {
			return why;
		}
		if (json_object_object_get_ex(args, "programs", &v) && json_object_is_type(v, json_type_array))
			for (size_t i = 0; i < json_object_array_length(v); i++) {
				arg(a, "--prog");
				arg(a, json_object_get_string(json_object_array_get_idx(v, i)));
			}
		if (json_object_object_get_ex(args, "log_level", &v)) {
			arg(a, "--log-level");
			arg(a, json_object_get_string(v));
		}
		if (json_string_member(args, "cflags")) {
			arg(a, "--cflags");
			arg(a, json_string_member(args, "cflags"));
		}
		if (json_object_object_get_ex(args, "set_globals", &v) && json_object_is_type(v, json_type_object)) {
			json_object_object_foreach(v, key, value) {
				char *pair = NULL;

				if (asprintf(&pair, "%s=%s", key, json_object_get_string(value)) > 0) {
					arg(a, "--set-global");
					arg(a, pair);
				}
				free(pair);
			}
		}
		if (json_object_object_get_ex(args, "kernels", &v) && json_object_is_type(v, json_type_array)) {
			char list[256] = "";
			size_t used = 0;

			for (size_t i = 0; i < json_object_array_length(v) && used < sizeof(list); i++)
				used += snprintf(list + used, sizeof(list) - used, "%s%s", i ? "," : "",
						 json_object_get_string(json_object_array_get_idx(v, i)));
			if (!used || used >= sizeof(list))
				return "\"kernels\" is a short list of kernel versions such as [\"7.3\", \"7.2\"]";
			arg(a, "--kernels");
			arg(a, list);
		}
		arg(a, "--");
		arg(a, path);
		want_server(m);
		return NULL;
	}
	if (!strcmp(tool, "run")) {
		const char *prog = json_string_member(args, "program"), *hex = json_string_member(args, "data_in_hex");

		if (!path || !prog)
			return "run wants \"path\" and \"program\"";
		if (unreadable(path, why, why_size))
			return why;
		arg(a, "run");
		arg(a, "--json");
		arg(a, "--prog");
		arg(a, prog);
		if (hex) {
			size_t len = strlen(hex) / 2;
			char *data;

			if (strlen(hex) % 2 || !is_hex(hex) || len > (16u << 20))
				return "\"data_in_hex\" is an even number of hex digits (at most 16 MiB)";
			data = malloc(len + 1);
			for (size_t i = 0; i < len; i++)
				sscanf(hex + 2 * i, "%2hhx", (unsigned char *)&data[i]);
			if (scratch_file(m, "data.in", data, len, file, sizeof(file), cwd, cwd_size)) {
				free(data);
				return "cannot write the data to a scratch file";
			}
			free(data);
			cwd[0] = '\0';	/* the path is the user's, relative to ours */
			arg(a, "--data-in");
			arg(a, file);
		}
		if (json_object_object_get_ex(args, "repeat", &v)) {
			arg(a, "--repeat");
			arg(a, json_object_get_string(v));
		}
		if (json_object_object_get_ex(args, "attach", &v) && json_object_get_boolean(v))
			arg(a, "--attach");
		arg(a, "--");
		arg(a, path);
		want_server(m);
		return NULL;
	}
	if (!strcmp(tool, "parse_log")) {
		const char *log = json_string_member(args, "log");
		char dir[PATH_MAX];

		if (!log)
			return "parse_log wants \"log\", the verifier's text";
		if (strlen(log) > LOG_MAX)
			return "\"log\" is over 64 MiB";
		if (scratch_file(m, "verifier.log", log, strlen(log), file, sizeof(file), dir, sizeof(dir)))
			return "cannot write the log to a scratch file";
		arg(a, "parse");
		arg(a, "--json");
		if (json_string_member(args, "program")) {
			arg(a, "--prog");
			arg(a, json_string_member(args, "program"));
		}
		arg(a, file);
		return NULL;
	}
	if (!strcmp(tool, "probe")) {
		arg(a, "probe");
		arg(a, "--json");
		want_server(m);
		return NULL;
	}
	if (!strcmp(tool, "kselftest")) {
		arg(a, "kselftest");
		arg(a, "--json");
		if (json_string_member(args, "filter")) {
			arg(a, "-t");
			arg(a, json_string_member(args, "filter"));
		}
		if (json_string_member(args, "runners")) {
			arg(a, "--runners");
			arg(a, json_string_member(args, "runners"));
		}
		return NULL;
	}
	return "";	/* unknown tool */
}

static void tools_call(struct mcp *m, json_object *id, json_object *params, bool modern)
{
	const char *tool = json_string_member(params, "name"), *problem;
	json_object *args = json_member(params, "arguments"), *token = json_member(json_member(params, "_meta"), "progressToken");
	char cwd[PATH_MAX], why[PATH_MAX + 128];
	struct args a = { 0 };
	struct outcome o;
	json_object *result;

	if (!tool) {
		reply_error(id, INVALID_PARAMS, "tools/call wants \"name\"", NULL);
		return;
	}
	if (args && !json_object_is_type(args, json_type_object)) {
		reply_error(id, INVALID_PARAMS, "\"arguments\" is an object", NULL);
		return;
	}
	problem = build_call(m, tool, args, &a, cwd, sizeof(cwd), why, sizeof(why));
	if (problem && !*problem) {
		args_free(&a);
		reply_error(id, INVALID_PARAMS, "unknown tool; tools/list names them", NULL);
		return;
	}
	if (problem) {
		/* The tool was called wrongly: a result the model can read. */
		struct outcome bad = { .code = EXIT_USAGE };
		json_object *err_doc = json_object_new_object(), *err = json_object_new_object();

		json_object_object_add(err, "kind", json_object_new_string("usage"));
		json_object_object_add(err, "message", json_object_new_string(problem));
		json_object_object_add(err_doc, "error", err);
		bad.out = strdup(json_object_to_json_string(err_doc));
		bad.out_len = strlen(bad.out);
		json_object_put(err_doc);
		result = tool_result(tool, &bad);
		free(bad.out);
	} else {
		if (token)
			notify_progress(token, 0, 0, "started");
		run_command(m, cwd[0] ? cwd : NULL, a.v, id, token, &o);
		if (o.code == -1) {	/* cancelled: no answer (the spec's rule) */
			free(o.out);
			free(o.err);
			args_free(&a);
			remove_scratch(cwd);
			return;
		}
		result = tool_result(tool, &o);
		free(o.out);
		free(o.err);
	}
	args_free(&a);
	remove_scratch(cwd);
	if (modern)
		json_object_object_add(result, "resultType", json_object_new_string("complete"));
	reply(id, result);
}

/* ---- requests ----------------------------------------------------------- */

static json_object *server_info(void)
{
	json_object *info = json_object_new_object();

	json_object_object_add(info, "name", json_object_new_string("bpfuml"));
	json_object_object_add(info, "title", json_object_new_string("bpfuml: BPF verifier in milliseconds"));
	json_object_object_add(info, "version", json_object_new_string("1"));
	return info;
}

static json_object *capabilities(void)
{
	json_object *caps = json_object_new_object(), *tools = json_object_new_object();

	json_object_object_add(tools, "listChanged", json_object_new_boolean(false));
	json_object_object_add(caps, "tools", tools);
	return caps;
}

static const char instructions[] =
	"Verify and run BPF programs in a user-mode Linux 7.3 guest (a kernel that verifies as "
	"x86_64's does), in milliseconds.  Call verify with a path or with C source text; read "
	"each report's category, reason, at and suggestion.";

static json_object *supported_versions(void)
{
	json_object *list = json_object_new_array();

	json_object_array_add(list, json_object_new_string(MODERN_VERSION));
	for (int i = 0; legacy_versions[i]; i++)
		json_object_array_add(list, json_object_new_string(legacy_versions[i]));
	return list;
}

static void handle(struct mcp *m, char *line)
{
	json_object *msg = json_tokener_parse(line), *id = NULL, *params, *meta_version;
	const char *method;
	bool modern = false;

	if (!msg || !json_object_is_type(msg, json_type_object)) {
		reply_error(NULL, PARSE_ERROR, "not a JSON object", NULL);
		json_object_put(msg);
		return;
	}
	json_object_object_get_ex(msg, "id", &id);
	method = json_string_member(msg, "method");
	params = json_member(msg, "params");
	if (!method || (params && !json_object_is_type(params, json_type_object))) {
		if (id)		/* a response to us, or nonsense: answered only when it asked */
			reply_error(id, INVALID_REQUEST, "a request has a \"method\" and object \"params\"", NULL);
		json_object_put(msg);
		return;
	}
	if (!id) {		/* notifications: initialized, cancelled (of nothing running) */
		json_object_put(msg);
		return;
	}
	meta_version = json_member(json_member(params, "_meta"), "io.modelcontextprotocol/protocolVersion");
	if (meta_version) {
		const char *v = json_object_get_string(meta_version);

		if (strcmp(v, MODERN_VERSION)) {
			json_object *data = json_object_new_object();

			json_object_object_add(data, "supported", supported_versions());
			json_object_object_add(data, "requested", json_object_new_string(v));
			reply_error(id, UNSUPPORTED_VERSION, "unsupported protocol version", data);
			json_object_put(msg);
			return;
		}
		modern = true;
	}
	if (!strcmp(method, "initialize")) {
		const char *asked = json_string_member(params, "protocolVersion"), *chosen = legacy_versions[0];
		json_object *result = json_object_new_object();

		for (int i = 0; asked && legacy_versions[i]; i++)
			if (!strcmp(asked, legacy_versions[i]))
				chosen = legacy_versions[i];
		json_object_object_add(result, "protocolVersion", json_object_new_string(chosen));
		json_object_object_add(result, "capabilities", capabilities());
		json_object_object_add(result, "serverInfo", server_info());
		json_object_object_add(result, "instructions", json_object_new_string(instructions));
		reply(id, result);
	} else if (!strcmp(method, "server/discover")) {
		json_object *result = json_object_new_object();

		json_object_object_add(result, "resultType", json_object_new_string("complete"));
		json_object_object_add(result, "supportedVersions", supported_versions());
		json_object_object_add(result, "capabilities", capabilities());
		json_object_object_add(result, "serverInfo", server_info());
		json_object_object_add(result, "instructions", json_object_new_string(instructions));
		reply(id, result);
	} else if (!strcmp(method, "ping")) {
		reply(id, json_object_new_object());
	} else if (!strcmp(method, "tools/list")) {
		json_object *result = json_object_new_object();

		json_object_object_add(result, "tools", tools_list());
		if (modern)
			json_object_object_add(result, "resultType", json_object_new_string("complete"));
		reply(id, result);
	} else if (!strcmp(method, "tools/call")) {
		tools_call(m, id, params, modern);
	} else {
		reply_error(id, METHOD_NOT_FOUND, "method not found", NULL);
	}
	json_object_put(msg);
}

int cmd_mcp(int argc, char **argv)
{
	static struct mcp m;
	struct common_opts opts = COMMON_OPTS_DEFAULT;
	char *line;

	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		char *help[] = { "help", "mcp", NULL };

		return cmd_help(2, help);
	}
	if (argc > 1)
		return fail(&opts, EXIT_USAGE, "usage", "mcp takes no arguments; a client starts it and "
			    "talks on its stdin and stdout (see bpfuml help mcp)");
	snprintf(m.scratch, sizeof(m.scratch), "%s/bpfuml-mcp.XXXXXX", getenv("TMPDIR") ?: "/tmp");
	if (!mkdtemp(m.scratch))
		return fail(&opts, EXIT_INFRA, "infrastructure", "cannot make a scratch directory: %s",
			    strerror(errno));
	session_install_signal_handlers();
	while (!session_interrupted) {
		while ((line = take_line(&m))) {
			handle(&m, line);
			free(line);
		}
		if (m.in_eof || !read_input(&m, true))
			break;
	}
	private_server_stop(&m.server);
	session_remove_tree(m.scratch);
	free(m.in);
	/* stdin closed is how a client ends a stdio server. */
	return session_interrupted ? EXIT_INTERRUPTED : EXIT_OK;
}
