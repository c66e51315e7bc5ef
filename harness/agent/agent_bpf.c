// SPDX-License-Identifier: GPL-2.0
/* agent_bpf.c — the guest agent's BPF work: load programs and collect the
 * verifier's verdicts and logs (verify), and BPF_PROG_TEST_RUN (run).
 *
 * Verdicts come from the kernel through libbpf; nothing here interprets the
 * verifier log (the host parses it).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "agent.h"

/* ---- libbpf's own messages, captured per load attempt ----------------- */

static char *libbpf_messages;
static size_t libbpf_messages_len;

static int capture_libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char line[1024];
	size_t n;
	char *grown;

	if (level == LIBBPF_DEBUG)
		return 0;
	n = vsnprintf(line, sizeof(line), fmt, ap);
	if (n >= sizeof(line))
		n = sizeof(line) - 1;
	/* Verifier logs are collected through log buffers, not here. */
	if (strstr(line, "-- BEGIN PROG LOAD LOG --") || strstr(line, "-- END PROG LOAD LOG --"))
		return 0;
	grown = realloc(libbpf_messages, libbpf_messages_len + n + 1);
	if (!grown)
		return 0;
	libbpf_messages = grown;
	memcpy(libbpf_messages + libbpf_messages_len, line, n + 1);
	libbpf_messages_len += n;
	return 0;
}

static void reset_libbpf_messages(void)
{
	free(libbpf_messages);
	libbpf_messages = NULL;
	libbpf_messages_len = 0;
}

static const char *json_string_member(json_object *obj, const char *key)
{
	json_object *value;

	if (!json_object_object_get_ex(obj, key, &value) || json_object_is_type(value, json_type_null))
		return NULL;
	return json_object_get_string(value);
}

static int json_int_member(json_object *obj, const char *key, int fallback)
{
	json_object *value;

	if (!json_object_object_get_ex(obj, key, &value) || json_object_is_type(value, json_type_null))
		return fallback;
	return json_object_get_int(value);
}

static void set_error(json_object *result, const char *fmt, ...)
{
	char text[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	json_object_object_add(result, "error", json_object_new_string(text));
}

/* ---- loader fixups ---------------------------------------------------------
 *
 * A real object is loaded by its own user space, which sizes maps the object
 * leaves at 0 entries, picks attach targets and pins maps where it wants.
 * Without that, no program of the object could even be tried.  Like
 * veristat, the agent stands in for the loader (unless the job says
 * "fixups": false), and lists each change it made, so that a verdict is
 * never mistaken for one about the object exactly as built.
 */

static bool fixups_enabled = true;
static json_object *attach_targets;	/* the job's {"program": "function"} */
static json_object *set_globals;	/* the job's {"variable": "value"} */

static void note_fixup(json_object *applied, const char *fmt, ...)
{
	char text[512];
	va_list ap;

	if (!applied)
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	json_object_array_add(applied, json_object_new_string(text));
}

/* What a map of 0 entries becomes: the smallest size its type accepts;
 * 0 where the type takes no size (storage maps, struct_ops). */
static __u32 smallest_max_entries(enum bpf_map_type type)
{
	switch (type) {
	case BPF_MAP_TYPE_RINGBUF:
	case BPF_MAP_TYPE_USER_RINGBUF:
		return sysconf(_SC_PAGESIZE);	/* a power-of-two number of pages */
	case BPF_MAP_TYPE_SK_STORAGE:
	case BPF_MAP_TYPE_TASK_STORAGE:
	case BPF_MAP_TYPE_INODE_STORAGE:
	case BPF_MAP_TYPE_CGRP_STORAGE:
	case BPF_MAP_TYPE_CGROUP_STORAGE:
	case BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE:
	case BPF_MAP_TYPE_STRUCT_OPS:
	case BPF_MAP_TYPE_PERF_EVENT_ARRAY:	/* libbpf sizes it: one per CPU */
		return 0;
	default:
		return 1;
	}
}

static void size_map(struct bpf_map *map, json_object *applied)
{
	__u32 size = smallest_max_entries(bpf_map__type(map));

	if (bpf_map__max_entries(map) == 0 && size && !bpf_map__set_max_entries(map, size))
		note_fixup(applied, "map '%s': max_entries 0 -> %u", bpf_map__name(map), size);
}

/* The frames of a stack trace: /proc/sys/kernel/perf_event_max_stack, the
 * kernel's bound on a stack map's value (127 unless changed). */
static __u32 max_stack_frames(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_stack", "r");
	unsigned int frames = 127;

	if (f) {
		if (fscanf(f, "%u", &frames) != 1 || !frames)
			frames = 127;
		fclose(f);
	}
	return frames;
}

/* Map shapes that loaders set at run time: a stack trace map's value size
 * (bcc's libbpf-tools size it from their --perf-max-stack-depth, default
 * 127 frames), and the value size that cilium/ebpf drops from ring buffers
 * and arenas, which take none (their BTF definitions often name an event
 * type). */
static void shape_map(struct bpf_map *map, json_object *applied)
{
	__u32 value_size = bpf_map__value_size(map);

	switch (bpf_map__type(map)) {
	case BPF_MAP_TYPE_STACK_TRACE:
		if (value_size)
			return;
		value_size = max_stack_frames() * sizeof(__u64);
		if (!bpf_map__set_value_size(map, value_size))
			note_fixup(applied, "map '%s': value_size 0 -> %u (%u stack frames)",
				   bpf_map__name(map), value_size, value_size / 8);
		return;
	case BPF_MAP_TYPE_RINGBUF:
	case BPF_MAP_TYPE_USER_RINGBUF:
	case BPF_MAP_TYPE_ARENA:
		if (value_size && !bpf_map__set_value_size(map, 0))
			note_fixup(applied, "map '%s': value_size %u -> 0 (its type takes none)",
				   bpf_map__name(map), value_size);
		return;
	default:
		return;
	}
}

/* Inner maps that stand in for a map-in-map's own (closed at the next open:
 * the kernel copies an inner map's shape when the outer map is created). */
static int inner_fds[16];
static int nr_inner_fds;

static void close_inner_fds(void)
{
	while (nr_inner_fds)
		close(inner_fds[--nr_inner_fds]);
}

/* A map-in-map whose inner map (from its BTF definition) has 0 entries:
 * libbpf's inner map is a template outside the object that cannot be
 * resized, so create the inner map here, sized, and hand its fd over. */
static void size_inner_map(struct bpf_map *map, json_object *applied)
{
	struct bpf_map *inner = bpf_map__inner_map(map);
	__u32 size;
	int fd;

	if (!inner || bpf_map__max_entries(inner) || nr_inner_fds == sizeof(inner_fds) / sizeof(inner_fds[0]))
		return;
	size = smallest_max_entries(bpf_map__type(inner));
	if (!size)
		return;
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = bpf_map__map_flags(inner));
	fd = bpf_map_create(bpf_map__type(inner), NULL, bpf_map__key_size(inner),
			    bpf_map__value_size(inner), size, &opts);
	if (fd < 0) {
		note_fixup(applied, "map '%s' (inner map): max_entries 0, and one of %u could not be "
			   "created: %s", bpf_map__name(map), size, strerror(errno));
		return;
	}
	if (bpf_map__set_inner_map_fd(map, fd)) {
		close(fd);
		return;
	}
	inner_fds[nr_inner_fds++] = fd;
	note_fixup(applied, "map '%s' (inner map): max_entries 0 -> %u", bpf_map__name(map), size);
}

/* VALUE as the integer (or bool, or enumerator) type TYPE_ID of SIZE bytes,
 * into OUT; false when it is none or does not fit. */
static bool global_value(const struct btf *btf, __u32 type_id, __u32 size, const char *value,
			 unsigned char *out)
{
	const struct btf_type *t = btf__type_by_id(btf, btf__resolve_type(btf, type_id));
	bool is_signed = false;
	long long v;
	char *end;
	int i;

	if (!t || size > 8)
		return false;
	if (btf_is_int(t)) {
		is_signed = btf_int_encoding(t) & BTF_INT_SIGNED;
		if (btf_int_encoding(t) & BTF_INT_BOOL || (t->size == 1 && !is_signed)) {
			if (!strcmp(value, "true"))
				value = "1";
			else if (!strcmp(value, "false"))
				value = "0";
		}
	} else if (btf_is_enum(t) || btf_is_enum64(t)) {
		is_signed = btf_kflag(t);
		for (i = 0; btf_is_enum(t) && i < (int)btf_vlen(t); i++)
			if (!strcmp(btf__name_by_offset(btf, btf_enum(t)[i].name_off), value)) {
				v = is_signed ? (long long)btf_enum(t)[i].val : (long long)(__u32)btf_enum(t)[i].val;
				goto store;
			}
		for (i = 0; btf_is_enum64(t) && i < (int)btf_vlen(t); i++)
			if (!strcmp(btf__name_by_offset(btf, btf_enum64(t)[i].name_off), value)) {
				v = (long long)btf_enum64_value(&btf_enum64(t)[i]);
				goto store;
			}
	} else {
		return false;
	}
	errno = 0;
	v = is_signed || value[0] == '-' ? strtoll(value, &end, 0) : (long long)strtoull(value, &end, 0);
	if (!*value || *end || errno)
		return false;
	if (size < 8) {
		long long lo = is_signed ? -(1LL << (size * 8 - 1)) : 0;
		long long hi = is_signed ? (1LL << (size * 8 - 1)) - 1 : (1LL << (size * 8)) - 1;

		if (v < lo || v > hi)
			return false;
	} else if (!is_signed && value[0] == '-') {
		return false;
	}
store:
	for (i = 0; i < (int)size; i++)	/* little-endian, as x86_64 and UML are */
		out[i] = (unsigned long long)v >> (8 * i);
	return true;
}

/* Set the global variable NAME of OBJ (in .rodata, .data, .bss or a custom
 * data section) to VALUE before load, as a loader does through its
 * skeleton; 0, or -1 with WHY said. */
static int set_global(struct bpf_object *obj, const char *name, const char *value, char *why, size_t len)
{
	const struct btf *btf = bpf_object__btf(obj);
	struct bpf_map *map;

	bpf_object__for_each_map(map, obj) {
		const struct btf_var_secinfo *vsi;
		const struct btf_type *sec;
		unsigned char *data;
		size_t size;
		int i;

		if (!btf || !bpf_map__is_internal(map))
			continue;
		sec = btf__type_by_id(btf, bpf_map__btf_value_type_id(map));
		if (!sec || !btf_is_datasec(sec))
			continue;
		for (i = 0, vsi = btf_var_secinfos(sec); i < (int)btf_vlen(sec); i++, vsi++) {
			const struct btf_type *var = btf__type_by_id(btf, vsi->type);

			if (!var || !btf_is_var(var) || strcmp(btf__name_by_offset(btf, var->name_off), name))
				continue;
			data = bpf_map__initial_value(map, &size);
			if (!data || vsi->offset + vsi->size > size) {
				snprintf(why, len, "global '%s' cannot be set before load (%s)", name,
					 bpf_map__name(map));
				return -1;
			}
			if (!global_value(btf, var->type, vsi->size, value, data + vsi->offset)) {
				snprintf(why, len, "global '%s' (%u bytes) cannot hold '%s': give an integer "
					 "in its range, true/false, or one of its enum's names", name, vsi->size,
					 value);
				return -1;
			}
			return 0;
		}
	}
	snprintf(why, len, "no global variable '%s' in the object", name);
	return -1;
}

/* A section name libbpf does not know ("perf_event/type=0,config=3", as
 * ebpf_exporter writes them) leaves the type unset; the loader sets it.
 * When the part before the first '/' is a section libbpf knows, that is
 * the type its loader means. */
static void type_program(struct bpf_program *prog, json_object *applied)
{
	const char *section = bpf_program__section_name(prog), *slash = strchr(section, '/');
	enum bpf_attach_type attach;
	enum bpf_prog_type type;
	char prefix[64];

	if (bpf_program__type(prog) != BPF_PROG_TYPE_UNSPEC || !slash || slash == section ||
	    slash - section >= (long)sizeof(prefix))
		return;
	snprintf(prefix, sizeof(prefix), "%.*s", (int)(slash - section), section);
	if (libbpf_prog_type_by_name(prefix, &type, &attach) ||
	    bpf_program__set_type(prog, type) || bpf_program__set_expected_attach_type(prog, attach))
		return;
	note_fixup(applied, "program '%s': type %s, from its section name's '%s' (libbpf knows no "
		   "section '%s')", bpf_program__name(prog), libbpf_bpf_prog_type_str(type), prefix, section);
}

/* Apply the fixups to a freshly opened OBJ; list them in APPLIED (if not
 * NULL: the first open of an object records, later ones repeat).  Returns
 * 0, or -1 with WHY said when a global the job sets cannot be set. */
static int apply_fixups(struct bpf_object *obj, json_object *applied, char *why, size_t len)
{
	struct bpf_program *prog;
	struct bpf_map *map;
	json_object *target;

	bpf_object__for_each_program(prog, obj) {
		if (!attach_targets ||
		    !json_object_object_get_ex(attach_targets, bpf_program__name(prog), &target))
			continue;
		if (bpf_program__set_attach_target(prog, 0, json_object_get_string(target)))
			note_fixup(applied, "program '%s': attach target '%s' refused by libbpf: %s",
				   bpf_program__name(prog), json_object_get_string(target), strerror(errno));
		else
			note_fixup(applied, "program '%s': attach target '%s' (--attach-target)",
				   bpf_program__name(prog), json_object_get_string(target));
	}
	if (set_globals) {
		json_object_object_foreach(set_globals, name, value) {
			if (set_global(obj, name, json_object_get_string(value), why, len))
				return -1;
			note_fixup(applied, "global '%s' = %s (--set-global)", name, json_object_get_string(value));
		}
	}
	if (!fixups_enabled) {
		/* Pins are kept, so they need bpffs. */
		bpf_object__for_each_map(map, obj) {
			if (bpf_map__pin_path(map)) {
				agent_mount_bpffs();
				break;
			}
		}
		return 0;
	}
	bpf_object__for_each_program(prog, obj)
		type_program(prog, applied);
	bpf_object__for_each_map(map, obj) {
		/* Pins would land in the guest's bpffs and tie objects together. */
		if (bpf_map__pin_path(map)) {
			bpf_map__set_pin_path(map, NULL);
			note_fixup(applied, "map '%s': not pinned", bpf_map__name(map));
		}
		size_map(map, applied);
		shape_map(map, applied);
		size_inner_map(map, applied);
	}
	return 0;
}

static struct bpf_object *open_object_fixed(const char *path, json_object *result,
					    json_object *applied)
{
	char guest_path[512], why[512];
	struct bpf_object *obj;

	close_inner_fds();	/* the previous object's load is done */
	snprintf(guest_path, sizeof(guest_path), "%s/%s", agent_run_dir, path);
	obj = bpf_object__open_file(guest_path, NULL);
	if (!obj) {
		set_error(result, "libbpf could not open the object: %s%s%s", strerror(errno),
			  libbpf_messages ? "\n" : "", libbpf_messages ?: "");
		return NULL;
	}
	if (apply_fixups(obj, applied, why, sizeof(why))) {
		set_error(result, "%s", why);
		bpf_object__close(obj);
		return NULL;
	}
	return obj;
}

static struct bpf_object *open_object(const char *path, json_object *result)
{
	return open_object_fixed(path, result, NULL);
}

/* The job's fixup settings: "fixups" (default true), "attach_targets",
 * "globals". */
static void read_fixup_settings(json_object *job)
{
	json_object *value;

	fixups_enabled = !json_object_object_get_ex(job, "fixups", &value) ||
			 json_object_get_boolean(value);
	attach_targets = NULL;
	if (json_object_object_get_ex(job, "attach_targets", &value) &&
	    json_object_is_type(value, json_type_object))
		attach_targets = value;
	set_globals = NULL;
	if (json_object_object_get_ex(job, "globals", &value) && json_object_is_type(value, json_type_object))
		set_globals = value;
}

/* ---- verify ------------------------------------------------------------- */

/* The verifier's statistics-only log level (the kernel's BPF_LOG_STATS, not
 * in the UAPI headers): a few lines whatever the program, and the kernel's
 * verdict kept. */
#define LOG_LEVEL_STATS 4

/* One program's outcome.  Programs are kept by their index in the object
 * (the order of bpf_object__for_each_program(), the same at every open),
 * never by a copied name: names are unbounded, and two long names may share
 * any prefix. */
struct prog_outcome {
	int index;		/* position in the object */
	char *name;
	char *section;
	enum bpf_prog_type type;
	bool loaded;		/* the kernel returned a program fd */
	int err;		/* 0, or the negative errno of the load */
	const char *error;	/* why, when the agent itself failed (no errno text) */
	char *log;		/* verifier log, NUL-terminated, until written out */
	size_t log_len;
	size_t log_buffer;	/* size of the buffer the log was collected in */
	bool log_truncated;	/* full even at AGENT_LOG_MAX: only part of it is here */
	char *log_file;		/* where the log went in the run directory */
	char *messages;		/* libbpf's warnings during the load */
	const char *load;	/* "together" or "alone" */
};

static bool name_selected(json_object *wanted, const char *name)
{
	size_t i;

	if (!wanted)
		return true;
	for (i = 0; i < json_object_array_length(wanted); i++)
		if (!strcmp(json_object_get_string(json_object_array_get_idx(wanted, i)), name))
			return true;
	return false;
}

static struct bpf_program *program_at(struct bpf_object *obj, int index)
{
	struct bpf_program *prog;
	int i = 0;

	bpf_object__for_each_program(prog, obj)
		if (i++ == index)
			return prog;
	return NULL;
}

static void take_messages(struct prog_outcome *out)
{
	free(out->messages);
	out->messages = libbpf_messages;
	libbpf_messages = NULL;
	libbpf_messages_len = 0;
}

/* The one place a verdict is decided.  "accepted" only when the kernel
 * returned a program fd: a program libbpf skipped (autoload off, a "?"
 * section) was never judged. */
static const char *verdict_of(const struct prog_outcome *out)
{
	if (!out->err && out->loaded)
		return "accepted";
	if (out->err && out->log_len)
		return "rejected";	/* the verifier ran and said why */
	return "not_loaded";	/* refused before or without the verifier, or never tried */
}

/* The agent could not try this program at all: say why, never "accepted". */
static void agent_failed(struct prog_outcome *out, int err, const char *why)
{
	out->loaded = false;
	out->err = err ?: -EIO;
	out->error = why;
}

/* Write the program's log into the run directory now and free it, so that
 * one program's (up to AGENT_LOG_MAX) log is resident at a time. */
static void store_log(struct prog_outcome *out, const char *log_prefix)
{
	char log_name[64];

	out->log_len = out->log ? strlen(out->log) : 0;
	if (out->log_len) {
		snprintf(log_name, sizeof(log_name), PROG_LOG, log_prefix, out->index);
		if (!agent_write_file(log_name, out->log, out->log_len))
			out->log_file = strdup(log_name);
	}
	free(out->log);
	out->log = NULL;
}

/* Load every selected program in one bpf_object__load(), as libbpf would.
 * Returns 0 if all were accepted; any error means the caller judges each
 * program on its own. */
static int load_together(const char *path, json_object *wanted, struct prog_outcome *outs,
			 int nr_progs, int log_level, const char *log_prefix, json_object *result)
{
	struct bpf_object *obj;
	struct bpf_program *prog;
	char **bufs;
	int i = 0, err;

	reset_libbpf_messages();
	obj = open_object(path, result);
	if (!obj)
		return -errno;
	bufs = calloc(nr_progs, sizeof(*bufs));
	if (!bufs) {
		bpf_object__close(obj);
		return -ENOMEM;
	}
	/* Autoload on for every selected program: libbpf leaves programs of
	 * "?" sections off, and they are the ones written to be judged. */
	bpf_object__for_each_program(prog, obj) {
		bool selected = name_selected(wanted, bpf_program__name(prog));

		bpf_program__set_autoload(prog, selected);
		if (!selected)
			continue;
		bufs[i] = calloc(1, AGENT_LOG_MIN);
		if (!bufs[i]) {
			err = -ENOMEM;
			goto out;
		}
		bpf_program__set_log_buf(prog, bufs[i], AGENT_LOG_MIN);
		bpf_program__set_log_level(prog, log_level);
		i++;
	}
	err = bpf_object__load(obj);
	if (err)
		goto out;
	for (i = 0; i < nr_progs; i++) {
		prog = program_at(obj, outs[i].index);
		outs[i].loaded = prog && bpf_program__fd(prog) >= 0;
		outs[i].err = 0;
		outs[i].log = bufs[i];
		outs[i].log_buffer = AGENT_LOG_MIN;
		outs[i].load = "together";
		bufs[i] = NULL;
		store_log(&outs[i], log_prefix);
		if (!outs[i].loaded) {
			err = -ENOENT;	/* judge them alone: never an fd-less "accepted" */
			goto out;
		}
	}
	take_messages(&outs[0]);
out:
	for (i = 0; i < nr_progs; i++)
		free(bufs[i]);
	free(bufs);
	bpf_object__close(obj);
	return err;
}

/* libbpf's message when a prog array slot names a program that has no fd
 * (bpf_object_init_prog_arrays() runs after bpf_object__load_progs()
 * succeeded; fd < 0 is a program that was not loaded). */
static bool prog_array_target_missing(const char *messages)
{
	const char *p = messages;
	unsigned int slot;
	char name[128];
	int fd;

	while (p && (p = strstr(p, "failed to initialize slot ["))) {
		if (sscanf(p, "failed to initialize slot [%u] to prog '%127[^']' fd=%d", &slot, name,
			   &fd) == 3 && fd < 0)
			return true;
		p++;
	}
	return false;
}

/* One load of the object for program out->index, its log in a SIZE buffer
 * at LOG_LEVEL.  WHOLE: the object's other programs load with it as libbpf
 * would load them (their own autoload); else the program alone.  Fills
 * out->err, loaded, log; on success with KEEP, the object is handed back
 * instead of closed.  Returns 0, or a negative errno when the agent could
 * not try (out->error says why). */
static int load_once(const char *path, struct prog_outcome *out, bool whole, int log_level,
		     size_t size, struct bpf_object **keep, json_object *result)
{
	struct bpf_program *prog, *p;
	struct bpf_object *obj;
	int err;

	reset_libbpf_messages();
	obj = open_object(path, result);
	if (!obj) {
		agent_failed(out, -errno, "libbpf could not open the object again");
		return out->err;
	}
	prog = program_at(obj, out->index);
	if (!prog) {
		bpf_object__close(obj);
		agent_failed(out, -ENOENT, "the program is not in the object when opened again");
		return out->err;
	}
	free(out->log);
	out->log = calloc(1, size);
	if (!out->log) {
		bpf_object__close(obj);
		agent_failed(out, -ENOMEM, "no memory for the verifier log buffer");
		return out->err;
	}
	bpf_object__for_each_program(p, obj)
		bpf_program__set_autoload(p, p == prog || (whole && bpf_program__autoload(p)));
	bpf_program__set_log_buf(prog, out->log, size);
	bpf_program__set_log_level(prog, log_level);
	err = bpf_object__load(obj);
	out->loaded = !err && bpf_program__fd(prog) >= 0;
	/* libbpf fills prog arrays only after every program loaded (so this
	 * one had its fd); if a slot names another program, not loaded with
	 * this one, that failure is the harness's, and the verifier accepted. */
	if (err && err != -ENOSPC && !whole && prog_array_target_missing(libbpf_messages)) {
		err = 0;
		out->loaded = true;
	}
	out->err = err;
	out->log_buffer = size;
	out->error = NULL;
	take_messages(out);
	if (keep && out->loaded)
		*keep = obj;
	else
		bpf_object__close(obj);
	return 0;
}

/* Load program out->index (see load_once for WHOLE and KEEP), growing the
 * log buffer whenever the kernel says the log did not fit.  A log that does
 * not fit even AGENT_LOG_MAX is kept as far as it goes and said to be
 * truncated, never turned into a verdict: the kernel fails any load whose
 * log overflowed, so the verdict comes from one more load that logs only
 * its statistics (LOG_LEVEL_STATS: a few lines, whatever the program). */
static void load_program(const char *path, struct prog_outcome *out, bool whole, int log_level,
			 const char *log_prefix, struct bpf_object **keep, json_object *result)
{
	size_t size = AGENT_LOG_MIN, max = AGENT_LOG_MAX;

	/* Test hook: a small ceiling, so that a 16+ MiB log is truncated. */
	if (agent_test_fault && !strcmp(agent_test_fault, "small-log-max"))
		max = AGENT_LOG_MIN;
	out->load = whole ? "together" : "alone";
	for (;;) {
		if (load_once(path, out, whole, log_level, size, keep, result) || out->err != -ENOSPC)
			break;
		if (size >= max) {
			out->log_truncated = true;
			store_log(out, log_prefix);
			load_once(path, out, whole, LOG_LEVEL_STATS, 65536, keep, result);
			free(out->log);
			out->log = NULL;
			out->log_buffer = size;
			return;
		}
		size *= AGENT_LOG_GROWTH;
	}
	store_log(out, log_prefix);
}

static json_object *outcome_to_json(const struct prog_outcome *out)
{
	json_object *prog = json_object_new_object();
	const char *type = libbpf_bpf_prog_type_str(out->type);

	json_object_object_add(prog, "name", json_object_new_string(out->name));
	json_object_object_add(prog, "section", json_object_new_string(out->section));
	json_object_object_add(prog, "type", json_object_new_string(type ?: "unknown"));
	json_object_object_add(prog, "verdict", json_object_new_string(verdict_of(out)));
	json_object_object_add(prog, "load", json_object_new_string(out->load ?: "alone"));
	if (out->err) {
		json_object_object_add(prog, "errno", json_object_new_int(-out->err));
		json_object_object_add(prog, "error", json_object_new_string(out->error ?: strerror(-out->err)));
	} else if (!out->loaded) {
		json_object_object_add(prog, "error", json_object_new_string(
			"libbpf reported success but the kernel returned no program fd"));
	}
	/* Why a program type was refused before any verification: none was
	 * known (libbpf could not tell it from the section name), or this
	 * kernel lacks it. */
	if (out->err && out->type == BPF_PROG_TYPE_UNSPEC)
		json_object_object_add(prog, "type_unknown", json_object_new_boolean(true));
	else if (out->err && !out->error && !out->log_len && libbpf_probe_bpf_prog_type(out->type, NULL) == 0)
		json_object_object_add(prog, "type_unsupported", json_object_new_boolean(true));
	if (out->messages && *out->messages)
		json_object_object_add(prog, "libbpf_messages", json_object_new_string(out->messages));
	if (out->log_file)
		json_object_object_add(prog, "log_file", json_object_new_string(out->log_file));
	json_object_object_add(prog, "log_bytes", json_object_new_int64(out->log_len));
	json_object_object_add(prog, "log_buffer", json_object_new_int64(out->log_buffer));
	if (out->log_truncated)
		json_object_object_add(prog, "log_truncated", json_object_new_boolean(true));
	return prog;
}

static void free_outcome(struct prog_outcome *out)
{
	free(out->name);
	free(out->section);
	free(out->log);
	free(out->log_file);
	free(out->messages);
}

/* Test hook (--test-fault object-vanishes): the object is gone after the
 * first pass, so that every later open fails, as a vanished or unreadable
 * file would. */
static void maybe_remove_object(const char *path)
{
	char guest_path[512];

	if (agent_test_fault && !strcmp(agent_test_fault, "object-vanishes")) {
		snprintf(guest_path, sizeof(guest_path), "%s/%s", agent_run_dir, path);
		unlink(guest_path);
	}
}

/* Judge the programs of one object into RESULT ("programs", or "error");
 * their logs are written as LOG_PREFIXprog-N.log, N the program's index. */
static int verify_object(const char *path, json_object *wanted, int log_level,
			 const char *log_prefix, json_object *result)
{
	json_object *progs, *applied;
	struct prog_outcome *outs;
	struct bpf_object *obj;
	struct bpf_program *prog;
	int nr = 0, i, index, err;

	/* First pass: which programs are there, and are the wanted ones? */
	applied = json_object_new_array();
	obj = open_object_fixed(path, result, applied);
	if (!obj) {
		json_object_put(applied);
		return -EINVAL;
	}
	if (json_object_array_length(applied))
		json_object_object_add(result, "fixups", applied);
	else
		json_object_put(applied);
	bpf_object__for_each_program(prog, obj)
		if (name_selected(wanted, bpf_program__name(prog)))
			nr++;
	if (!nr) {
		json_object *names = json_object_new_array();

		bpf_object__for_each_program(prog, obj)
			json_object_array_add(names, json_object_new_string(bpf_program__name(prog)));
		json_object_object_add(result, "available_programs", names);
		set_error(result, "no matching program in the object");
		bpf_object__close(obj);
		return -ENOENT;
	}
	outs = calloc(nr, sizeof(*outs));
	if (!outs) {
		bpf_object__close(obj);
		return -ENOMEM;
	}
	i = index = 0;
	bpf_object__for_each_program(prog, obj) {
		if (name_selected(wanted, bpf_program__name(prog))) {
			outs[i].index = index;
			outs[i].name = strdup(bpf_program__name(prog));
			outs[i].section = strdup(bpf_program__section_name(prog));
			outs[i].type = bpf_program__type(prog);
			if (!outs[i].name || !outs[i].section)
				agent_failed(&outs[i], -ENOMEM, "no memory for the program's name");
			i++;
		}
		index++;
	}
	bpf_object__close(obj);
	maybe_remove_object(path);

	/* Together first (dependencies resolved as libbpf does); if anything
	 * fails, each program is judged alone so that one rejection does not
	 * hide the others' verdicts. */
	err = nr > 1 ? load_together(path, wanted, outs, nr, log_level, log_prefix, result) : -1;
	if (err) {
		for (i = 0; i < nr; i++) {
			free(outs[i].log_file);
			outs[i].log_file = NULL;
			outs[i].loaded = false;
			if (outs[i].name && outs[i].section)
				load_program(path, &outs[i], false, log_level, log_prefix, NULL, result);
		}
	}

	progs = json_object_new_array();
	for (i = 0; i < nr; i++) {
		json_object_array_add(progs, outcome_to_json(&outs[i]));
		free_outcome(&outs[i]);
	}
	json_object_object_add(result, "programs", progs);
	free(outs);
	return 0;
}

/* The job's objects in one boot: each gets its own entry in the result's
 * "objects", judged as if alone. */
int agent_verify(json_object *job, json_object *result)
{
	int log_level = json_int_member(job, "log_level", 1);
	json_object *wanted = NULL, *objects, *results;
	char prefix[32];
	size_t i;

	libbpf_set_print(capture_libbpf_print);
	read_fixup_settings(job);
	json_object_object_get_ex(job, "programs", &wanted);
	if (wanted && !json_object_is_type(wanted, json_type_array))
		wanted = NULL;
	if (!json_object_object_get_ex(job, "objects", &objects) ||
	    !json_object_is_type(objects, json_type_array)) {
		set_error(result, "job has no objects");
		return -EINVAL;
	}
	results = json_object_new_array();
	json_object_object_add(result, "objects", results);
	for (i = 0; i < json_object_array_length(objects); i++) {
		const char *path = json_object_get_string(json_object_array_get_idx(objects, i));
		json_object *one = json_object_new_object();

		json_object_object_add(one, "object", json_object_new_string(path));
		snprintf(prefix, sizeof(prefix), VERIFY_LOG_PREFIX, i);
		verify_object(path, wanted, log_level, prefix, one);
		json_object_array_add(results, one);
	}
	return 0;
}

/* ---- run ------------------------------------------------------------------ */

static size_t dump_text_len;
static char dump_text[4096];

static void dump_printf(void *ctx, const char *fmt, va_list ap)
{
	int n;

	if (dump_text_len >= sizeof(dump_text) - 1)
		return;
	n = vsnprintf(dump_text + dump_text_len, sizeof(dump_text) - dump_text_len, fmt, ap);
	if (n > 0)
		dump_text_len += n;
	if (dump_text_len >= sizeof(dump_text))
		dump_text_len = sizeof(dump_text) - 1;
}

static json_object *hex_string(const unsigned char *data, size_t len)
{
	char *hex = malloc(len * 2 + 1);
	json_object *s;
	size_t i;

	if (!hex)
		return NULL;
	for (i = 0; i < len; i++)
		sprintf(hex + 2 * i, "%02x", data[i]);
	hex[2 * len] = '\0';
	s = json_object_new_string(hex);
	free(hex);
	return s;
}

/* An integer variable's value as a JSON number; NULL for anything else. */
static json_object *integer_value(const struct btf *btf, __u32 type_id, const unsigned char *data)
{
	const struct btf_type *t;
	int id = btf__resolve_type(btf, type_id);
	__u64 raw = 0;
	__u8 encoding;

	if (id < 0)
		return NULL;
	t = btf__type_by_id(btf, id);
	if (!btf_is_int(t) || t->size > 8 || btf_int_bits(t) != t->size * 8)
		return NULL;
	memcpy(&raw, data, t->size);	/* little-endian, as the guest */
	encoding = btf_int_encoding(t);
	if (encoding & BTF_INT_BOOL)
		return json_object_new_boolean(raw != 0);
	if (encoding & BTF_INT_SIGNED) {
		int shift = 64 - t->size * 8;

		return json_object_new_int64((__s64)(raw << shift) >> shift);
	}
	return json_object_new_uint64(raw);
}

static json_object *globals_of(struct bpf_object *obj)
{
	json_object *globals = json_object_new_array();
	const struct btf *btf = bpf_object__btf(obj);
	struct btf_dump *dump;
	struct bpf_map *map;

	if (!btf)
		return globals;
	dump = btf_dump__new(btf, dump_printf, NULL, NULL);
	bpf_object__for_each_map(map, obj) {
		const char *section = strrchr(bpf_map__name(map), '.');
		const struct btf_var_secinfo *vsi;
		const struct btf_type *sec;
		unsigned char *value;
		__u32 zero = 0;
		int i;

		if (!bpf_map__is_internal(map) || !section || !strcmp(section, ".kconfig"))
			continue;
		sec = btf__type_by_id(btf, bpf_map__btf_value_type_id(map));
		if (!sec || !btf_is_datasec(sec))
			continue;
		value = calloc(1, bpf_map__value_size(map));
		if (!value || bpf_map_lookup_elem(bpf_map__fd(map), &zero, value)) {
			free(value);
			continue;
		}
		for (i = 0, vsi = btf_var_secinfos(sec); i < (int)btf_vlen(sec); i++, vsi++) {
			const struct btf_type *var = btf__type_by_id(btf, vsi->type);
			const struct btf_type *type;
			LIBBPF_OPTS(btf_dump_type_data_opts, opts, .compact = true, .emit_zeroes = true);
			json_object *g, *number;
			const char *type_name;

			if (!btf_is_var(var))
				continue;
			type = btf__type_by_id(btf, btf__resolve_type(btf, var->type));
			type_name = type ? btf__name_by_offset(btf, type->name_off) : "";
			g = json_object_new_object();
			json_object_object_add(g, "section", json_object_new_string(section));
			json_object_object_add(g, "name",
					       json_object_new_string(btf__name_by_offset(btf, var->name_off)));
			json_object_object_add(g, "type", json_object_new_string(type_name && *type_name ?
							type_name : "(anonymous)"));
			json_object_object_add(g, "offset", json_object_new_int(vsi->offset));
			json_object_object_add(g, "size", json_object_new_int(vsi->size));
			number = integer_value(btf, var->type, value + vsi->offset);
			if (number)
				json_object_object_add(g, "value", number);
			json_object_object_add(g, "hex", hex_string(value + vsi->offset, vsi->size));
			dump_text_len = 0;
			dump_text[0] = '\0';
			if (dump && btf_dump__dump_type_data(dump, var->type, value + vsi->offset,
							     vsi->size, &opts) >= 0)
				json_object_object_add(g, "text", json_object_new_string(dump_text));
			json_object_array_add(globals, g);
		}
		free(value);
	}
	btf_dump__free(dump);
	return globals;
}

static int read_input(json_object *job, const char *key, void **buf, size_t *len,
		      json_object *result)
{
	const char *name = json_string_member(job, key);
	int err;

	*buf = NULL;
	*len = 0;
	if (!name)
		return 0;
	err = agent_read_file(name, buf, len);
	if (err)
		set_error(result, "cannot read %s in the run directory: %s", name, strerror(-err));
	return err;
}

/* ---- attach ----------------------------------------------------------- */

/* Attach PROG as libbpf would (struct_ops: the object's struct_ops maps).
 * Fills *links (at most max); returns 0 or a negative errno.  The host
 * explains failures (why some attachments cannot exist on UML). */
static int attach_program(struct bpf_object *obj, struct bpf_program *prog,
			  struct bpf_link **links, int max, int *nr)
{
	struct bpf_map *map;

	*nr = 0;
	if (bpf_program__type(prog) != BPF_PROG_TYPE_STRUCT_OPS) {
		links[0] = bpf_program__attach(prog);
		if (!links[0])
			return -errno;
		*nr = 1;
		return 0;
	}
	bpf_object__for_each_map(map, obj) {
		if (bpf_map__type(map) != BPF_MAP_TYPE_STRUCT_OPS || *nr >= max)
			continue;
		links[*nr] = bpf_map__attach_struct_ops(map);
		if (!links[*nr])
			return -errno;
		(*nr)++;
	}
	return *nr ? 0 : -ENOENT;
}

/* Types whose BPF_PROG_TEST_RUN takes no repeat count and gives no ctx_out
 * (the kernel answers EINVAL otherwise, net/bpf/test_run.c). */
static bool test_run_is_single_shot(enum bpf_prog_type type)
{
	return type == BPF_PROG_TYPE_RAW_TRACEPOINT || type == BPF_PROG_TYPE_SYSCALL;
}

int agent_run(json_object *job, json_object *result)
{
	struct bpf_link *links[8] = { 0 };
	int nr_links = 0, i;
	const char *path = json_string_member(job, "object");
	const char *name = json_string_member(job, "program");
	int log_level = json_int_member(job, "log_level", 1);
	struct prog_outcome out = { 0 };
	void *data_in = NULL, *ctx_in = NULL, *data_out = NULL, *ctx_out = NULL;
	size_t data_in_len, ctx_in_len, data_out_size;
	struct bpf_object *obj = NULL;
	struct bpf_program *prog, *p;
	json_object *progs, *run;
	int err;

	libbpf_set_print(capture_libbpf_print);
	read_fixup_settings(job);
	if (!path || !name) {
		set_error(result, "job needs an object and a program");
		return -EINVAL;
	}
	err = read_input(job, "data_in", &data_in, &data_in_len, result);
	err = err ?: read_input(job, "ctx_in", &ctx_in, &ctx_in_len, result);
	if (err)
		goto out;

	/* Which program: by name once, then by index. */
	obj = open_object(path, result);
	if (!obj) {
		err = -EINVAL;
		goto out;
	}
	prog = bpf_object__find_program_by_name(obj, name);
	if (!prog) {
		set_error(result, "no program named '%s' in the object", name);
		err = -ENOENT;
		goto out;
	}
	bpf_object__for_each_program(p, obj) {
		if (p == prog)
			break;
		out.index++;
	}
	out.name = strdup(name);
	out.section = strdup(bpf_program__section_name(prog));
	out.type = bpf_program__type(prog);
	bpf_object__close(obj);
	obj = NULL;
	if (!out.name || !out.section) {
		set_error(result, "no memory for the program's name");
		err = -ENOMEM;
		goto out;
	}
	/* The whole object first, so that a prog array filled at load finds
	 * its programs (a tail call's target); if another program keeps the
	 * object from loading, the chosen program alone. */
	load_program(path, &out, true, log_level, "", &obj, result);
	if (!out.loaded && !out.error) {
		free(out.log_file);
		out.log_file = NULL;
		out.log_truncated = false;
		load_program(path, &out, false, log_level, "", &obj, result);
	}
	prog = obj ? program_at(obj, out.index) : NULL;
	progs = json_object_new_array();
	json_object_array_add(progs, outcome_to_json(&out));
	json_object_object_add(result, "programs", progs);
	if (!out.loaded || !prog)
		goto out;	/* the verdict says why; no run */

	if (json_object_object_get_ex(job, "attach", &run) && json_object_get_boolean(run)) {
		json_object *attach = json_object_new_object();

		json_object_object_add(result, "attach", attach);
		err = attach_program(obj, prog, links, sizeof(links) / sizeof(links[0]),
				     &nr_links);
		json_object_object_add(attach, "attached", json_object_new_boolean(!err));
		if (err) {
			json_object_object_add(attach, "errno", json_object_new_int(-err));
			json_object_object_add(attach, "error", json_object_new_string(strerror(-err)));
			if (libbpf_messages)
				json_object_object_add(attach, "libbpf_messages",
						       json_object_new_string(libbpf_messages));
			goto out;	/* an unattached tracing program would not run */
		}
	}

	data_out_size = data_in_len + 65536;
	data_out = calloc(1, data_out_size);
	ctx_out = ctx_in_len && !test_run_is_single_shot(out.type) ? calloc(1, ctx_in_len) : NULL;
	{
		LIBBPF_OPTS(bpf_test_run_opts, opts,
			    .data_in = data_in, .data_size_in = data_in_len,
			    .data_out = data_in_len ? data_out : NULL,
			    .data_size_out = data_in_len ? data_out_size : 0,
			    .ctx_in = ctx_in, .ctx_size_in = ctx_in_len,
			    .ctx_out = ctx_out, .ctx_size_out = ctx_out ? ctx_in_len : 0,
			    .repeat = json_int_member(job, "repeat", 1));

		run = json_object_new_object();
		json_object_object_add(result, "run", run);
		/* These types run exactly once and refuse a repeat count. */
		if (test_run_is_single_shot(out.type)) {
			if (opts.repeat > 1) {
				char text[160];

				snprintf(text, sizeof(text), "--repeat is not supported for %s programs: "
					 "the kernel runs them exactly once", libbpf_bpf_prog_type_str(out.type));
				json_object_object_add(run, "errno", json_object_new_int(EINVAL));
				json_object_object_add(run, "error", json_object_new_string(text));
				err = -EINVAL;
				goto out;
			}
			opts.repeat = 0;
		}
		if (bpf_prog_test_run_opts(bpf_program__fd(prog), &opts)) {
			err = -errno;
			json_object_object_add(run, "errno", json_object_new_int(-err));
			json_object_object_add(run, "error", json_object_new_string(strerror(-err)));
			goto out;
		}
		json_object_object_add(run, "retval", json_object_new_int64((int)opts.retval));
		json_object_object_add(run, "duration_ns", json_object_new_int64(opts.duration));
		json_object_object_add(run, "repeat", json_object_new_int(opts.repeat ?: 1));
		if (data_in_len) {
			json_object_object_add(run, "data_size_out", json_object_new_int64(opts.data_size_out));
			if (!agent_write_file("data_out.bin", data_out, opts.data_size_out))
				json_object_object_add(run, "data_out_file",
						       json_object_new_string("data_out.bin"));
		}
		/* Syscall programs take a context but give none back in ctx_out:
		 * the kernel copies it back into ctx_in. */
		if (ctx_in_len && (ctx_out || out.type == BPF_PROG_TYPE_SYSCALL)) {
			const void *ctx = out.type == BPF_PROG_TYPE_SYSCALL ? ctx_in : ctx_out;
			size_t ctx_len = out.type == BPF_PROG_TYPE_SYSCALL ? ctx_in_len : opts.ctx_size_out;

			if (!agent_write_file("ctx_out.bin", ctx, ctx_len))
				json_object_object_add(run, "ctx_out_file",
						       json_object_new_string("ctx_out.bin"));
		}
		json_object_object_add(run, "globals", globals_of(obj));
	}
out:
	for (i = 0; i < nr_links; i++)
		bpf_link__destroy(links[i]);
	bpf_object__close(obj);
	free_outcome(&out);
	free(data_in);
	free(ctx_in);
	free(data_out);
	free(ctx_out);
	return err;
}
