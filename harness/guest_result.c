// SPDX-License-Identifier: GPL-2.0
/* guest_result.c — reading the guest's files and checking its result.json
 * (see guest_result.h for why everything here distrusts its input).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guest_result.h"
#include "run_dir.h"

int guest_name_ok(const char *name)
{
	return name && *name && !strchr(name, '/') && strcmp(name, ".") && strcmp(name, "..");
}

size_t guest_file_cap(const char *name)
{
	return name && !strcmp(name, RESULT_FILE) ? GUEST_RESULT_MAX : GUEST_FILE_MAX;
}

int guest_file_read(int dir_fd, const char *name, size_t cap, char **buf, size_t *len)
{
	struct stat st;
	size_t done = 0;
	char *data;
	int fd, err = 0;

	*buf = NULL;
	if (len)
		*len = 0;
	if (!guest_name_ok(name))
		return -EINVAL;
	/* O_NONBLOCK: opening a FIFO without a writer must not wait for one. */
	fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		err = -ENODEV;
		goto out;
	}
	if ((unsigned long long)st.st_size > cap) {
		err = -EFBIG;
		goto out;
	}
	data = malloc(st.st_size + 1);
	if (!data) {
		err = -ENOMEM;
		goto out;
	}
	/* A file that grows while read is cut at its size from fstat. */
	while (done < (size_t)st.st_size) {
		ssize_t n = read(fd, data + done, st.st_size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		done += n;
	}
	data[done] = '\0';
	*buf = data;
	if (len)
		*len = done;
out:
	close(fd);
	return err;
}

const char *guest_file_strerror(int err)
{
	switch (err) {
	case -EINVAL: return "not a file name in the run directory";
	case -ELOOP: return "a symbolic link";
	case -ENODEV: return "not a regular file";
	case -EFBIG: return "larger than the host reads";
	default: return strerror(-err);
	}
}

/* ---- the shape of result.json -------------------------------------------- */

enum kind { K_ANY, K_STR, K_NUM, K_BOOL, K_ARR, K_OBJ };

static const char *const kind_name[] = {
	[K_ANY] = "a value", [K_STR] = "a string", [K_NUM] = "a number", [K_BOOL] = "a boolean",
	[K_ARR] = "an array", [K_OBJ] = "an object",
};

struct checker {
	char *why;
	size_t why_len;
	int dir_fd;
	bool bad;		/* the first problem is in WHY */
};

__attribute__((format(printf, 2, 3)))
static bool bad(struct checker *c, const char *fmt, ...)
{
	va_list ap;

	if (!c->bad) {
		va_start(ap, fmt);
		vsnprintf(c->why, c->why_len, fmt, ap);
		va_end(ap);
	}
	c->bad = true;
	return false;
}

static bool is_kind(json_object *v, enum kind kind)
{
	switch (kind) {
	case K_STR: return json_object_is_type(v, json_type_string);
	case K_NUM: return json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double);
	case K_BOOL: return json_object_is_type(v, json_type_boolean);
	case K_ARR: return json_object_is_type(v, json_type_array);
	case K_OBJ: return json_object_is_type(v, json_type_object);
	default: return true;
	}
}

/* OBJ's KEY, which must be of KIND when present (and be present when
 * REQUIRED); null counts as absent.  NULL when absent or wrong. */
static json_object *member(struct checker *c, json_object *obj, const char *path, const char *key,
			   enum kind kind, bool required)
{
	json_object *v = NULL;

	if (!json_object_object_get_ex(obj, key, &v) || !v) {
		if (required)
			bad(c, "%s%s%s is missing", path, *path ? "." : "", key);
		return NULL;
	}
	if (!is_kind(v, kind)) {
		bad(c, "%s%s%s is not %s", path, *path ? "." : "", key, kind_name[kind]);
		return NULL;
	}
	return v;
}

struct field {
	const char *key;
	enum kind kind;
};

static void fields(struct checker *c, json_object *obj, const char *path, const struct field *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		member(c, obj, path, f[i].key, f[i].kind, false);
}

#define FIELDS(c, obj, path, ...) do {						\
	static const struct field f_[] = { __VA_ARGS__ };			\
	fields(c, obj, path, f_, sizeof(f_) / sizeof(f_[0]));			\
} while (0)

/* NAME is PREFIX, a decimal number, SUFFIX: what the agent writes. */
static bool numbered(const char *name, const char *prefix, const char *suffix)
{
	size_t n = strlen(prefix), digits;

	if (strncmp(name, prefix, n))
		return false;
	digits = strspn(name + n, "0123456789");
	return digits && digits <= 9 && !strcmp(name + n + digits, suffix);
}

/* OBJ's KEY names a file of the run directory: it must be one this job
 * writes (PREFIX N SUFFIX, or exactly PREFIX when SUFFIX is NULL) and a
 * regular file the host will read. */
static void file_member(struct checker *c, json_object *obj, const char *path, const char *key,
			const char *prefix, const char *suffix)
{
	json_object *v = member(c, obj, path, key, K_STR, false);
	const char *name;
	struct stat st;

	if (!v)
		return;
	name = json_object_get_string(v);
	if (!guest_name_ok(name) || (suffix ? !numbered(name, prefix, suffix) : strcmp(name, prefix))) {
		bad(c, "%s.%s \"%.64s\" is not a file this job writes (%s%s%s)", path, key, name,
		    prefix, suffix ? "N" : "", suffix ?: "");
		return;
	}
	if (c->dir_fd < 0)
		return;
	if (fstatat(c->dir_fd, name, &st, AT_SYMLINK_NOFOLLOW)) {
		bad(c, "%s.%s names %s, which cannot be read: %s", path, key, name, strerror(errno));
		return;
	}
	if (S_ISLNK(st.st_mode))
		bad(c, "%s.%s names %s, which is a symbolic link", path, key, name);
	else if (!S_ISREG(st.st_mode))
		bad(c, "%s.%s names %s, which is not a regular file", path, key, name);
	else if ((unsigned long long)st.st_size > guest_file_cap(name))
		bad(c, "%s.%s names %s, which has %lld bytes, more than the %zu MiB the host reads",
		    path, key, name, (long long)st.st_size, guest_file_cap(name) >> 20);
}

/* ARR's items must be of KIND. */
static void items(struct checker *c, json_object *arr, const char *path, enum kind kind)
{
	for (size_t i = 0; arr && i < json_object_array_length(arr); i++)
		if (!is_kind(json_object_array_get_idx(arr, i), kind)) {
			bad(c, "%s[%zu] is not %s", path, i, kind_name[kind]);
			return;
		}
}

static void check_program(struct checker *c, json_object *p, const char *path, const char *log_prefix)
{
	static const char *const verdicts[] = { "accepted", "rejected", "not_loaded" };
	json_object *verdict;
	size_t i;

	if (!is_kind(p, K_OBJ)) {
		bad(c, "%s is not an object", path);
		return;
	}
	member(c, p, path, "name", K_STR, true);
	member(c, p, path, "section", K_STR, true);
	member(c, p, path, "type", K_STR, true);
	verdict = member(c, p, path, "verdict", K_STR, true);
	for (i = 0; verdict && i < sizeof(verdicts) / sizeof(verdicts[0]); i++)
		if (!strcmp(json_object_get_string(verdict), verdicts[i]))
			break;
	if (verdict && i == sizeof(verdicts) / sizeof(verdicts[0]))
		bad(c, "%s.verdict \"%.32s\" is none of accepted, rejected, not_loaded", path,
		    json_object_get_string(verdict));
	FIELDS(c, p, path, { "load", K_STR }, { "errno", K_NUM }, { "error", K_STR },
	       { "type_unsupported", K_BOOL }, { "type_unknown", K_BOOL }, { "libbpf_messages", K_STR },
	       { "log_bytes", K_NUM }, { "log_buffer", K_NUM }, { "log_truncated", K_BOOL });
	file_member(c, p, path, "log_file", log_prefix, ".log");
}

static void check_programs(struct checker *c, json_object *obj, const char *path, const char *log_prefix)
{
	json_object *progs = member(c, obj, path, "programs", K_ARR, false);
	char where[128];

	for (size_t i = 0; progs && i < json_object_array_length(progs) && !c->bad; i++) {
		snprintf(where, sizeof(where), "%s%sprograms[%zu]", path, *path ? "." : "", i);
		check_program(c, json_object_array_get_idx(progs, i), where, log_prefix);
	}
}

static void check_verify(struct checker *c, json_object *r)
{
	json_object *objects = member(c, r, "", "objects", K_ARR, false);
	char where[64], prefix[64];

	for (size_t i = 0; objects && i < json_object_array_length(objects) && !c->bad; i++) {
		json_object *one = json_object_array_get_idx(objects, i);

		snprintf(where, sizeof(where), "objects[%zu]", i);
		if (!is_kind(one, K_OBJ)) {
			bad(c, "%s is not an object", where);
			break;
		}
		FIELDS(c, one, where, { "object", K_STR }, { "error", K_STR }, { "available_programs", K_ARR },
		       { "fixups", K_ARR });
		snprintf(prefix, sizeof(prefix), VERIFY_LOG_PREFIX "prog-", i);
		check_programs(c, one, where, prefix);
	}
}

static void check_run(struct checker *c, json_object *r)
{
	json_object *run, *attach, *globals;
	char where[64];

	check_programs(c, r, "", "prog-");
	attach = member(c, r, "", "attach", K_OBJ, false);
	if (attach)
		FIELDS(c, attach, "attach", { "attached", K_BOOL }, { "errno", K_NUM }, { "error", K_STR },
		       { "libbpf_messages", K_STR });
	run = member(c, r, "", "run", K_OBJ, false);
	if (!run)
		return;
	FIELDS(c, run, "run", { "retval", K_NUM }, { "duration_ns", K_NUM }, { "repeat", K_NUM },
	       { "errno", K_NUM }, { "error", K_STR }, { "data_size_out", K_NUM });
	file_member(c, run, "run", "data_out_file", "data_out.bin", NULL);
	file_member(c, run, "run", "ctx_out_file", "ctx_out.bin", NULL);
	globals = member(c, run, "run", "globals", K_ARR, false);
	for (size_t i = 0; globals && i < json_object_array_length(globals) && !c->bad; i++) {
		json_object *g = json_object_array_get_idx(globals, i);

		snprintf(where, sizeof(where), "run.globals[%zu]", i);
		if (!is_kind(g, K_OBJ)) {
			bad(c, "%s is not an object", where);
			break;
		}
		FIELDS(c, g, where, { "section", K_STR }, { "name", K_STR }, { "type", K_STR },
		       { "text", K_STR }, { "hex", K_STR });
	}
}

static void check_probe(struct checker *c, json_object *r)
{
	static const char *const steps[] = { "verify", "run", "attach", "create" };
	json_object *rows = member(c, r, "", "rows", K_ARR, false);
	char where[64], step_path[80];

	for (size_t i = 0; rows && i < json_object_array_length(rows) && !c->bad; i++) {
		json_object *row = json_object_array_get_idx(rows, i);

		snprintf(where, sizeof(where), "rows[%zu]", i);
		if (!is_kind(row, K_OBJ)) {
			bad(c, "%s is not an object", where);
			break;
		}
		FIELDS(c, row, where, { "kind", K_STR }, { "name", K_STR }, { "section", K_STR },
		       { "prog_type", K_STR }, { "uml_note", K_STR });
		for (size_t s = 0; s < sizeof(steps) / sizeof(steps[0]); s++) {
			json_object *step = member(c, row, where, steps[s], K_OBJ, false);

			if (!step)
				continue;
			snprintf(step_path, sizeof(step_path), "%s.%s", where, steps[s]);
			FIELDS(c, step, step_path, { "status", K_STR }, { "errno", K_NUM }, { "error", K_STR },
			       { "verifier_error", K_STR }, { "note", K_STR }, { "retval", K_NUM },
			       { "type_unsupported", K_BOOL }, { "maps_not_created", K_STR },
			       { "libbpf_messages", K_STR });
			file_member(c, step, step_path, "log_file", "probe-", ".log");
		}
	}
}

static void check_bench(struct checker *c, json_object *r)
{
	json_object *cases = member(c, r, "", "cases", K_ARR, false);
	char where[64], rates_path[80];

	for (size_t i = 0; cases && i < json_object_array_length(cases) && !c->bad; i++) {
		json_object *out = json_object_array_get_idx(cases, i), *rates;

		snprintf(where, sizeof(where), "cases[%zu]", i);
		if (!is_kind(out, K_OBJ)) {
			bad(c, "%s is not an object", where);
			break;
		}
		FIELDS(c, out, where, { "error", K_STR }, { "error_detail", K_STR }, { "errno", K_NUM },
		       { "memory_steady_bytes", K_NUM }, { "memory_peak_bytes", K_NUM }, { "case", K_OBJ });
		rates = member(c, out, where, "ops_per_sec", K_ARR, false);
		snprintf(rates_path, sizeof(rates_path), "%s.ops_per_sec", where);
		items(c, rates, rates_path, K_NUM);
	}
}

/* "line_times": [[line, ms], ...], ms a whole number >= 0. */
static void check_line_times(struct checker *c, json_object *times)
{
	for (size_t i = 0; times && i < json_object_array_length(times); i++) {
		json_object *pair = json_object_array_get_idx(times, i);
		json_object *ms = json_object_array_get_idx(pair, 1);

		if (!json_object_is_type(pair, json_type_array) || json_object_array_length(pair) != 2 ||
		    !json_object_is_type(json_object_array_get_idx(pair, 0), json_type_string) ||
		    !json_object_is_type(ms, json_type_int) || json_object_get_int64(ms) < 0) {
			bad(c, "line_times[%zu] is not [line, milliseconds]", i);
			return;
		}
	}
}

static void check_exec(struct checker *c, json_object *r)
{
	FIELDS(c, r, "", { "exit_status", K_NUM }, { "signal", K_NUM }, { "timed_out", K_BOOL },
	       { "fatal_killed", K_BOOL }, { "elapsed_ns", K_NUM });
	items(c, member(c, r, "", "fatal_output", K_ARR, false), "fatal_output", K_STR);
	items(c, member(c, r, "", "processes", K_ARR, false), "processes", K_STR);
	check_line_times(c, member(c, r, "", "line_times", K_ARR, false));
}

json_object *guest_result_parse(const char *text, size_t len, const char *command, int dir_fd,
				char *why, size_t why_len)
{
	struct checker c = { .why = why, .why_len = why_len, .dir_fd = dir_fd };
	struct json_tokener *tok;
	json_object *r;

	tok = json_tokener_new();
	if (!tok) {
		snprintf(why, why_len, "out of memory");
		return NULL;
	}
	r = json_tokener_parse_ex(tok, text, (int)(len > GUEST_RESULT_MAX ? GUEST_RESULT_MAX : len));
	if (!r || json_tokener_get_error(tok) != json_tokener_success) {
		enum json_tokener_error e = json_tokener_get_error(tok);

		snprintf(why, why_len, "result.json is not JSON: %s", e == json_tokener_continue ?
			 "it ends before the document does" : json_tokener_error_desc(e));
		json_object_put(r);
		json_tokener_free(tok);
		return NULL;
	}
	/* Nothing but white space after the document. */
	if (strspn(text + json_tokener_get_parse_end(tok), " \t\r\n") != len - json_tokener_get_parse_end(tok))
		bad(&c, "result.json has more than one JSON value");
	json_tokener_free(tok);

	if (!is_kind(r, K_OBJ))
		bad(&c, "result.json is not an object");
	if (!c.bad) {
		FIELDS(&c, r, "", { "error", K_STR }, { "kernel", K_STR }, { "agent_start_ns", K_NUM },
		       { "mounts_done_ns", K_NUM }, { "job_end_ns", K_NUM }, { "clock_step_ns", K_NUM });
		if (!command)
			;
		else if (!strcmp(command, "verify"))
			check_verify(&c, r);
		else if (!strcmp(command, "run"))
			check_run(&c, r);
		else if (!strcmp(command, "probe"))
			check_probe(&c, r);
		else if (!strcmp(command, "bench"))
			check_bench(&c, r);
		else if (!strcmp(command, "exec"))
			check_exec(&c, r);
	}
	if (c.bad) {
		json_object_put(r);
		return NULL;
	}
	return r;
}
