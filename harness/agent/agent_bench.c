// SPDX-License-Identifier: GPL-2.0
/* agent_bench.c — the map benchmarks, run where the kernel under test is:
 * inside the guest, or on the host itself (the agent in host mode).
 *
 * Each case shapes bench_map of map_bench.bpf.o (type, key and value size,
 * max_entries), fills it from BPF, then times BPF_PROG_TEST_RUN of the
 * lookup or overwrite program several times.  Memory cases run in their own
 * memory cgroup and report what the map costs steadily and at its peak.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "agent.h"

#define OPS_PER_RUN 128		/* as in map_bench.bpf.c */

struct bench_case {
	const char *name;	/* "lookup", "full-update", "mem" */
	enum bpf_map_type type;
	__u32 key_size, value_size, max_entries, fill;
	int samples;
	__u32 runs;		/* BPF_PROG_TEST_RUN repeat per sample */
};

/* The program's globals we touch, found by name through BTF: clang does
 * not promise any order of variables within a section. */
struct bench_globals {
	__u8 *key;
	__u32 *cursor;
	__u64 *misses;
	__u32 *nr_entries;	/* .rodata: set before load */
};

static void *global_var(struct bpf_object *obj, const char *section, const char *name)
{
	const struct btf *btf = bpf_object__btf(obj);
	const struct btf_var_secinfo *vsi;
	const struct btf_type *sec;
	struct bpf_map *map;
	size_t size;
	char *data;
	int i;

	bpf_object__for_each_map(map, obj) {
		if (!bpf_map__is_internal(map) || !strstr(bpf_map__name(map), section))
			continue;
		data = bpf_map__initial_value(map, &size);
		sec = btf__type_by_id(btf, bpf_map__btf_value_type_id(map));
		if (!data || !sec || !btf_is_datasec(sec))
			return NULL;
		for (i = 0, vsi = btf_var_secinfos(sec); i < (int)btf_vlen(sec); i++, vsi++) {
			const struct btf_type *var = btf__type_by_id(btf, vsi->type);

			if (!strcmp(btf__name_by_offset(btf, var->name_off), name))
				return data + vsi->offset;
		}
	}
	return NULL;
}

static int case_from_json(json_object *c, struct bench_case *bc)
{
	json_object *v;
	const char *map;

	memset(bc, 0, sizeof(*bc));
#define GET_INT(field, key, fallback) \
	bc->field = json_object_object_get_ex(c, key, &v) ? json_object_get_int64(v) : (fallback)
	GET_INT(key_size, "key_size", 4);
	GET_INT(value_size, "value_size", 8);
	GET_INT(max_entries, "max_entries", 1024);
	GET_INT(fill, "fill", bc->max_entries);
	GET_INT(samples, "samples", 5);
	GET_INT(runs, "runs", 100);
#undef GET_INT
	bc->name = json_object_object_get_ex(c, "bench", &v) ? json_object_get_string(v) : "lookup";
	map = json_object_object_get_ex(c, "map", &v) ? json_object_get_string(v) : "hash";
	bc->type = !strcmp(map, "rhash") ? BPF_MAP_TYPE_RHASH : BPF_MAP_TYPE_HASH;
	if (!bc->fill || bc->fill > bc->max_entries || bc->key_size < 4 || bc->key_size > 256 ||
	    bc->value_size < 8 || bc->value_size > 4096)
		return -EINVAL;
	return 0;
}

static int find_globals(struct bpf_object *obj, struct bench_globals *g)
{
	g->key = global_var(obj, ".bss", "key");
	g->cursor = global_var(obj, ".bss", "cursor");
	g->misses = global_var(obj, ".bss", "misses");
	return g->key && g->cursor && g->misses ? 0 : -ENOENT;
}

/* Time one program: SAMPLES rates in operations per second. */
static int time_prog(struct bpf_program *prog, const struct bench_case *bc,
		     struct bench_globals *g, json_object *rates)
{
	unsigned char packet[64] = { 0 };
	int i;

	for (i = 0; i < bc->samples; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = packet,
			    .data_size_in = sizeof(packet), .repeat = bc->runs);

		if (bpf_prog_test_run_opts(bpf_program__fd(prog), &opts))
			return -errno;
		if (!opts.duration)
			return -ERANGE;
		json_object_array_add(rates, json_object_new_double(OPS_PER_RUN * 1e9 / opts.duration));
	}
	return *g->misses ? -ENOENT : 0;
}

static long long read_cgroup_value(const char *cgroup, const char *file)
{
	char path[512], text[64] = "";
	int fd;

	snprintf(path, sizeof(path), "%s/%s", cgroup, file);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	if (read(fd, text, sizeof(text) - 1) < 0)
		text[0] = '\0';
	close(fd);
	return atoll(text);
}

static int write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY), err = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, text, strlen(text)) < 0)
		err = -errno;
	close(fd);
	return err;
}

/* A fresh memory cgroup holding just us, so that the map is charged there. */
static int enter_memory_cgroup(char *cgroup, size_t size, int index)
{
	char pid[32];
	int err;

	write_text("/sys/fs/cgroup/cgroup.subtree_control", "+memory");
	snprintf(cgroup, size, "/sys/fs/cgroup/bpfuml-bench-%d-%d", getpid(), index);
	if (mkdir(cgroup, 0755) && errno != EEXIST)
		return -errno;
	snprintf(pid, sizeof(pid), "%d", getpid());
	{
		char procs[600];

		snprintf(procs, sizeof(procs), "%s/cgroup.procs", cgroup);
		err = write_text(procs, pid);
	}
	return err;
}

static void leave_memory_cgroup(const char *cgroup)
{
	char pid[32];

	snprintf(pid, sizeof(pid), "%d", getpid());
	write_text("/sys/fs/cgroup/cgroup.procs", pid);
	rmdir(cgroup);
}

/* Keys 1..fill are present: the programs wrap their cursor there. */
static int set_nr_entries(struct bpf_object *obj, __u32 fill)
{
	__u32 *nr = global_var(obj, ".rodata", "nr_entries");

	if (!nr)
		return -ENOENT;
	*nr = fill;
	return 0;
}

static int run_case(const char *path, const struct bench_case *bc, int index, json_object *out)
{
	bool mem = !strcmp(bc->name, "mem");
	const char *timed_name = !strcmp(bc->name, "lookup") ? "bench_lookup" : "bench_overwrite";
	struct bpf_program *timed;
	struct bench_globals globals, *g = &globals;
	struct bpf_object *obj;
	struct bpf_map *map;
	json_object *rates = json_object_new_array();
	char cgroup[512] = "", guest_path[512];
	long long baseline = 0;
	__u32 fill = bc->fill;
	int err, i;

	if (mem && (err = enter_memory_cgroup(cgroup, sizeof(cgroup), index))) {
		json_object_object_add(out, "error_detail", json_object_new_string(
			"cannot run in a memory cgroup of its own: needs cgroup v2 at /sys/fs/cgroup "
			"with the memory controller"));
		goto out_rates;
	}
	if (mem)
		baseline = read_cgroup_value(cgroup, "memory.current");

	if (path[0] == '/')
		snprintf(guest_path, sizeof(guest_path), "%s", path);
	else
		snprintf(guest_path, sizeof(guest_path), "%s/%s", agent_run_dir, path);
	obj = bpf_object__open_file(guest_path, NULL);
	if (!obj) {
		err = -errno;
		goto out_cgroup;
	}
	map = bpf_object__find_map_by_name(obj, "bench_map");
	timed = bpf_object__find_program_by_name(obj, timed_name);
	if (!map || !timed) {
		err = -ENOENT;
		goto out_obj;
	}
	bpf_map__set_type(map, bc->type);
	bpf_map__set_key_size(map, bc->key_size);
	bpf_map__set_value_size(map, bc->value_size);
	bpf_map__set_max_entries(map, bc->max_entries);
	/* RHASH must be NO_PREALLOC; HASH keeps upstream's default, except in
	 * the memory benchmark, which (as upstream's htab-mem) compares both
	 * allocating on demand. */
	bpf_map__set_map_flags(map, bc->type == BPF_MAP_TYPE_RHASH || mem ? BPF_F_NO_PREALLOC : 0);
	err = set_nr_entries(obj, fill);
	err = err ?: bpf_object__load(obj);
	err = err ?: find_globals(obj, g);
	if (err)
		goto out_obj;
	/* Same random tail for every key, as upstream. */
	for (i = 4; i < (int)bc->key_size; i++)
		g->key[i] = random();

	/* Fill from user space in batches: a syscall per key is slow on UML. */
	{
		__u32 batch = 1024, done = 0, n, k;
		char *keys = calloc(batch, bc->key_size), *values = calloc(batch, bc->value_size);
		LIBBPF_OPTS(bpf_map_batch_opts, opts);

		if (!keys || !values) {
			free(keys);
			free(values);
			err = -ENOMEM;
			goto out_obj;
		}
		while (done < fill) {
			n = fill - done < batch ? fill - done : batch;
			for (k = 0; k < n; k++) {
				memcpy(keys + k * bc->key_size, g->key, bc->key_size);
				*(__u32 *)(keys + k * bc->key_size) = done + k + 1;
			}
			if (bpf_map_update_batch(bpf_map__fd(map), keys, values, &n, &opts)) {
				err = -errno;
				break;
			}
			done += n;
		}
		free(keys);
		free(values);
		if (err) {
			json_object_object_add(out, "filled", json_object_new_int64(done));
			goto out_obj;
		}
	}
	*g->cursor = 0;
	if (mem) {
		/* The peak of the timed workload, not of the fill. */
		snprintf(guest_path, sizeof(guest_path), "%s/memory.peak", cgroup);
		write_text(guest_path, "0");
	}
	err = time_prog(timed, bc, g, rates);
	if (mem) {
		json_object_object_add(out, "memory_steady_bytes",
				       json_object_new_int64(read_cgroup_value(cgroup, "memory.current") - baseline));
		json_object_object_add(out, "memory_peak_bytes",
				       json_object_new_int64(read_cgroup_value(cgroup, "memory.peak") - baseline));
	}
	json_object_object_add(out, "misses", json_object_new_int64(*g->misses));
out_obj:
	bpf_object__close(obj);
out_cgroup:
	if (mem && cgroup[0])
		leave_memory_cgroup(cgroup);
out_rates:
	json_object_object_add(out, "ops_per_sec", rates);
	if (err) {
		json_object_object_add(out, "errno", json_object_new_int(-err));
		json_object_object_add(out, "error", json_object_new_string(strerror(-err)));
	}
	return err;
}

int agent_bench(json_object *job, json_object *result)
{
	json_object *cases, *outs = json_object_new_array(), *v;
	const char *path = json_object_object_get_ex(job, "object", &v) ? json_object_get_string(v) : NULL;
	size_t i;

	json_object_object_add(result, "cases", outs);
	if (!path || !json_object_object_get_ex(job, "cases", &cases))
		return -EINVAL;
	srandom(42);
	/* libbpf's complaints (e.g. a map type the kernel lacks) are in each
	 * case's errno; on the host they would clutter the terminal. */
	libbpf_set_print(NULL);
	for (i = 0; i < json_object_array_length(cases); i++) {
		json_object *c = json_object_array_get_idx(cases, i);
		json_object *out = json_object_new_object();
		struct bench_case bc;

		json_object_object_add(out, "case", json_object_get(c));
		json_object_array_add(outs, out);
		if (case_from_json(c, &bc)) {
			json_object_object_add(out, "error", json_object_new_string("invalid case"));
			continue;
		}
		run_case(path, &bc, i, out);
	}
	return 0;
}
