// SPDX-License-Identifier: GPL-2.0
/* callback_slots.c — lifetime of the interpreter's callback trampolines,
 * run as PID 1 in UML (kernel-patches/0003-...).
 *
 * An interpreted program takes one of a fixed number of trampolines (512)
 * per callback subprog while it is loaded.  This loads the program 'loop'
 * of callbacks.bpf.o (one callback: loop_cb) with libbpf, then copies of it
 * (same instructions, maps and BTF) with bpf_prog_load(), and checks:
 *  1. programs that stay loaded take slots until the kernel refuses one more
 *     with E2BIG, after exactly as many as there are free slots;
 *  2. the slots come back when the programs are freed: once they are closed,
 *     loading works again;
 *  3. 1000 load/run/close rounds, twice the number of slots, all load and
 *     compute the right result (a leaked slot would make them fail);
 *  4. (first) the xlated dump shows the callback as for a JITed program;
 *  5. (before all) a timer callback runs, after its program has returned.
 * Freeing is deferred (RCU, then a workqueue), so a load that finds no free
 * slot right after a close waits a little and retries.
 *
 * usage (kernel command line): init=callback_slots -- OBJECT RESULT_DIR
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "guest.h"

#define SLOTS 512
#define ROUNDS 1000

static const char *object_path;

static const struct bpf_insn *loop_insns;
static size_t loop_insn_cnt;
static struct bpf_func_info loop_func_info[8];
static __u32 loop_func_info_cnt;
static int loop_btf_fd;

/* Load 'loop' of the object once, with libbpf; keep the object (and so its
 * maps) and the instructions as libbpf handed them to the kernel. */
static int prepare(struct bpf_object **objp)
{
	struct bpf_object *obj;
	struct bpf_program *prog, *p;
	int err;

	obj = bpf_object__open_file(object_path, NULL);
	if (!obj)
		return -errno;
	prog = bpf_object__find_program_by_name(obj, "loop");
	if (!prog)
		return -ENOENT;
	bpf_object__for_each_program(p, obj)
		bpf_program__set_autoload(p, p == prog);
	err = bpf_object__load(obj);
	if (err)
		return err;
	loop_insns = bpf_program__insns(prog);
	loop_insn_cnt = bpf_program__insn_cnt(prog);
	*objp = obj;
	if (!loop_insns)
		return -ENOENT;
	/* Callbacks need BTF func_info: take the loaded program's. */
	{
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		info.nr_func_info = 8;
		info.func_info_rec_size = sizeof(struct bpf_func_info);
		info.func_info = (unsigned long)loop_func_info;
		if (bpf_prog_get_info_by_fd(bpf_program__fd(prog), &info, &len))
			return -errno;
		loop_func_info_cnt = info.nr_func_info;
		loop_btf_fd = bpf_btf_get_fd_by_id(info.btf_id);
		if (loop_btf_fd < 0 || loop_func_info_cnt > 8)
			return -EINVAL;
	}
	return 0;
}

/* The xlated dump shows the callback's ld_imm64 as a JIT would leave it:
 * imm the pc-relative offset of the subprog, the second imm its index. */
static int check_xlated(int prog_fd)
{
	static struct bpf_insn insns[4096];
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), i, n;

	info.xlated_prog_len = sizeof(insns);
	info.xlated_prog_insns = (unsigned long)insns;
	if (bpf_prog_get_info_by_fd(prog_fd, &info, &len))
		return -errno;
	n = info.xlated_prog_len / sizeof(insns[0]);
	for (i = 0; i + 1 < n; i++) {
		if (insns[i].code != (BPF_LD | BPF_IMM | BPF_DW) ||
		    insns[i].src_reg != BPF_PSEUDO_FUNC)
			continue;
		if (insns[i].imm <= 0 || i + insns[i].imm + 1 >= n || insns[i + 1].imm != 1) {
			guest_report("FAIL xlated insn %u: callback ld_imm64 with imm %d, %d; want "
			       "a forward offset and subprog 1\n", i, insns[i].imm, insns[i + 1].imm);
			return -EINVAL;
		}
		return 0;
	}
	guest_report("FAIL no callback ld_imm64 in the xlated dump (%u insns)\n", n);
	return -ENOENT;
}

/* One more copy of 'loop': a prog fd, or -errno. */
static int load_loop(void)
{
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .prog_btf_fd = loop_btf_fd,
		    .func_info = loop_func_info, .func_info_cnt = loop_func_info_cnt,
		    .func_info_rec_size = sizeof(struct bpf_func_info));
	int fd = bpf_prog_load(BPF_PROG_TYPE_SCHED_CLS, "loop", "GPL", loop_insns,
			       loop_insn_cnt, &opts);

	return fd < 0 ? -errno : fd;
}

static int run_loop(int fd)
{
	unsigned char packet[64] = {};
	LIBBPF_OPTS(bpf_test_run_opts, run, .data_in = packet, .data_size_in = sizeof(packet),
		    .repeat = 1);

	if (bpf_prog_test_run_opts(fd, &run))
		return -errno;
	return run.retval;
}

/* A load right after closes may find the slots not yet given back. */
static int load_loop_retrying(int *retries)
{
	int fd, i;

	for (i = 0; i < 200; i++) {
		fd = load_loop();
		if (fd != -E2BIG)
			return fd;
		(*retries)++;
		usleep(10000);
	}
	return fd;
}

/* A timer callback runs through its trampoline after the program returned. */
static int check_timer(void)
{
	unsigned char packet[64] = {};
	LIBBPF_OPTS(bpf_test_run_opts, run, .data_in = packet, .data_size_in = sizeof(packet),
		    .repeat = 1);
	struct bpf_program *prog, *p;
	struct bpf_object *obj;
	struct bpf_map *map;
	__u64 fired = 0;
	int zero = 0, i, err;

	obj = bpf_object__open_file(object_path, NULL);
	if (!obj)
		return -errno;
	prog = bpf_object__find_program_by_name(obj, "timer");
	map = bpf_object__find_map_by_name(obj, "timer_fired");
	if (!prog || !map) {
		guest_report("FAIL no program 'timer' or map 'timer_fired'\n");
		return -ENOENT;
	}
	bpf_object__for_each_program(p, obj)
		bpf_program__set_autoload(p, p == prog);
	err = bpf_object__load(obj);
	if (!err && bpf_prog_test_run_opts(bpf_program__fd(prog), &run))
		err = -errno;
	if (err || run.retval) {
		guest_report("FAIL timer: load/run: %s, retval %d\n", strerror(-err), (int)run.retval);
		return -1;
	}
	for (i = 0; i < 100 && !fired; i++) {
		usleep(10000);
		bpf_map_lookup_elem(bpf_map__fd(map), &zero, &fired);
	}
	bpf_object__close(obj);
	if (fired != 1) {
		guest_report("FAIL the timer callback ran %llu times in %d ms, want 1\n",
		       (unsigned long long)fired, i * 10);
		return -1;
	}
	return 0;
}

static int check_slots(void)
{
	static int held[SLOTS + 1];
	int n, fd, i, ret, retries = 0;
	struct bpf_object *obj = NULL;

	if (check_timer())
		return -1;
	ret = prepare(&obj);
	if (ret) {
		guest_report("FAIL loading 'loop' of %s: %s\n", object_path, strerror(-ret));
		return -1;
	}
	if (check_xlated(bpf_program__fd(bpf_object__find_program_by_name(obj, "loop"))))
		return -1;

	/* 1. Hold programs until the kernel refuses one: the object's own
	 * 'loop' holds a slot already. */
	for (n = 0; n < SLOTS; n++) {
		fd = load_loop();
		if (fd < 0)
			break;
		held[n] = fd;
	}
	if (n != SLOTS - 1 || fd != -E2BIG) {
		guest_report("FAIL %d more programs loaded at once, then %s; want %d, then E2BIG\n",
		       n, fd < 0 ? strerror(-fd) : "no error", SLOTS - 1);
		return -1;
	}
	ret = run_loop(held[n - 1]);
	if (ret) {
		guest_report("FAIL the last program loaded returned %d, want 0\n", ret);
		return -1;
	}
	/* 2. Free them all: the slots come back. */
	for (i = 0; i < n; i++)
		close(held[i]);
	fd = load_loop_retrying(&retries);
	if (fd < 0) {
		guest_report("FAIL no program loads after the %d were closed: %s\n", n, strerror(-fd));
		return -1;
	}
	close(fd);
	/* 3. Many more load/run/close rounds than there are slots. */
	for (i = 0; i < ROUNDS; i++) {
		fd = load_loop_retrying(&retries);
		if (fd < 0) {
			guest_report("FAIL round %d: load: %s\n", i, strerror(-fd));
			return -1;
		}
		ret = run_loop(fd);
		close(fd);
		if (ret) {
			guest_report("FAIL round %d: the program returned %d, want 0\n", i, ret);
			return -1;
		}
	}
	guest_report("PASS %d callback programs held at once, the next refused with E2BIG; "
	       "%d load/run/close rounds after (%d loads waited for slots to be freed); "
	       "xlated dump as JITed; timer callback ran\n",
	       SLOTS, ROUNDS, retries);
	bpf_object__close(obj);
	return 0;
}

int main(int argc, char **argv)
{
	object_path = guest_boot(argc, argv, "callback_slots");
	if (object_path) {
		guest_quiet_libbpf();	/* E2BIG is expected in step 1 */
		check_slots();
	}
	guest_power_off();
}
