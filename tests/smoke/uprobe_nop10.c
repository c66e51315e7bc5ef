// SPDX-License-Identifier: GPL-2.0
/* uprobe_nop10.c — a uprobe on x86_64's optimizable nop10 (kernel-patches
 * 0067), run in a guest.
 *
 * x86_64 takes a probe on 66 2e 0f 1f 84 00 00 00 00 00 (the nop10 after
 * the nop of selftests/bpf/usdt.h's USDT sites) and optimizes it into a
 * call.  UML never optimizes; without 0067 it refused the probe (-ENOTSUPP:
 * the nop's CS prefix).  This attaches progs/uprobe_nop10.bpf.o's on_nop10
 * to nop10_site() of this program, calls the site CALLS times and checks
 * that the attach worked, the program counted every call, and the nop still
 * ran as a nop (the site returns what it was given).
 *
 * usage: bpfuml exec --file uprobe_nop10.bpf.o -- uprobe_nop10 uprobe_nop10.bpf.o
 */
#include <errno.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "guest.h"

#define CALLS 3

/* The nop10 first, then return the argument; 16-byte aligned, so the nop
 * does not cross a page (x86_64 refuses a probe on one that does). */
__attribute__((naked, aligned(16), noinline)) long nop10_site(long value)
{
	asm volatile(".byte 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00\n\t"
		     "movq %rdi, %rax\n\t"
		     "ret\n\t");
}

int main(int argc, char **argv)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .func_name = "nop10_site");
	const char *object = guest_boot(argc, argv, "uprobe_nop10");
	struct bpf_object *obj;
	struct bpf_program *prog;
	struct bpf_link *link;
	struct bpf_map *bss;
	int *hits, i, wrong = 0;
	size_t size;

	if (!object)
		guest_power_off();
	obj = bpf_object__open_file(object, NULL);
	if (!obj || bpf_object__load(obj)) {
		guest_report("FAIL load %s: %s", object, strerror(errno));
		guest_power_off();
	}
	prog = bpf_object__find_program_by_name(obj, "on_nop10");
	bss = bpf_object__find_map_by_name(obj, ".bss");
	hits = bss ? bpf_map__initial_value(bss, &size) : NULL;
	if (!prog || !hits) {
		guest_report("FAIL %s has no on_nop10 or no mapped .bss", object);
		guest_power_off();
	}

	link = bpf_program__attach_uprobe_opts(prog, -1, "/proc/self/exe", 0, &opts);
	if (!link) {
		guest_report("FAIL attach a uprobe to nop10_site: %s (x86_64 attaches)", strerror(errno));
		guest_power_off();
	}
	for (i = 0; i < CALLS; i++)
		wrong += nop10_site(i + 40) != i + 40;
	bpf_link__destroy(link);

	if (*hits != CALLS || wrong)
		guest_report("FAIL %d hit(s) of %d calls, %d wrong return value(s)", *hits, CALLS, wrong);
	else
		guest_report("PASS the uprobe on nop10_site fired %d times, the nop ran as a nop", *hits);
	bpf_object__close(obj);
	guest_power_off();
}
