// SPDX-License-Identifier: GPL-2.0
/* rhash_smoke.c — the foundation's end-to-end check, run as PID 1 in UML.
 *
 * Mounts what a BPF guest needs, loads rhash_smoke.bpf.o with the same-tree
 * libbpf, fills its BPF_MAP_TYPE_RHASH map from user space, runs the syscall
 * program with BPF_PROG_TEST_RUN and checks what it computed.  The verdict is
 * written to RESULT_DIR/result (a host directory mounted with hostfs, see
 * guest.c), then the guest powers off.
 *
 * usage (kernel command line): init=rhash_smoke -- OBJECT RESULT_DIR
 * OBJECT is a file name inside RESULT_DIR: the guest's /tmp is its own
 * tmpfs, so host paths under /tmp would be out of its sight.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "guest.h"

#define NR_KEYS 3
#define SUM_KEY 1000

struct smoke_args {
	__u32 nr_keys;
	__u32 missing;
	__u64 sum;
};

static int run_smoke(const char *object_path)
{
	struct smoke_args args = { .nr_keys = NR_KEYS };
	LIBBPF_OPTS(bpf_test_run_opts, run, .ctx_in = &args, .ctx_size_in = sizeof(args));
	struct bpf_object *obj;
	struct bpf_program *prog;
	struct bpf_map *map;
	__u64 value, expected = 0, stored = 0;
	__u32 key;
	int err, map_fd;

	obj = bpf_object__open_file(object_path, NULL);
	if (!obj) {
		guest_report("FAIL open %s: %s\n", object_path, strerror(errno));
		return -1;
	}
	err = bpf_object__load(obj);
	if (err) {
		guest_report("FAIL load %s: %s\n", object_path, strerror(-err));
		return -1;
	}
	map = bpf_object__find_map_by_name(obj, "values");
	prog = bpf_object__find_program_by_name(obj, "rhash_sum");
	if (!map || !prog) {
		guest_report("FAIL object lacks map 'values' or program 'rhash_sum'\n");
		return -1;
	}
	if (bpf_map__type(map) != BPF_MAP_TYPE_RHASH) {
		guest_report("FAIL map type is %d, not BPF_MAP_TYPE_RHASH\n", bpf_map__type(map));
		return -1;
	}
	map_fd = bpf_map__fd(map);
	for (key = 0; key < NR_KEYS; key++) {
		value = 10 * (key + 1);
		expected += value;
		if (bpf_map_update_elem(map_fd, &key, &value, BPF_NOEXIST)) {
			guest_report("FAIL user-space update of key %u: %s\n", key, strerror(errno));
			return -1;
		}
	}

	err = bpf_prog_test_run_opts(bpf_program__fd(prog), &run);
	if (err) {
		guest_report("FAIL BPF_PROG_TEST_RUN: %s\n", strerror(errno));
		return -1;
	}
	/* The kernel copies the context back for syscall programs. */
	key = SUM_KEY;
	if (bpf_map_lookup_elem(map_fd, &key, &stored))
		guest_report("FAIL key %u not in the map after the run: %s\n", key, strerror(errno));
	if (run.retval != 0 || args.missing || args.sum != expected || stored != expected) {
		guest_report("FAIL retval=%d missing=%u sum=%llu stored=%llu expected=%llu\n",
		       (int)run.retval, args.missing, (unsigned long long)args.sum,
		       (unsigned long long)stored, (unsigned long long)expected);
		return -1;
	}
	/* BPF_NOEXIST must now refuse the key the program inserted. */
	value = 1;
	if (!bpf_map_update_elem(map_fd, &key, &value, BPF_NOEXIST) || errno != EEXIST) {
		guest_report("FAIL BPF_NOEXIST on a present key did not give EEXIST\n");
		return -1;
	}
	guest_report("PASS rhash map: %u keys from user space, sum %llu computed and stored by the syscall program\n",
	       NR_KEYS, (unsigned long long)expected);
	bpf_object__close(obj);
	return 0;
}

int main(int argc, char **argv)
{
	const char *object = guest_boot(argc, argv, "rhash_smoke");

	if (object)
		run_smoke(object);
	guest_power_off();
}
