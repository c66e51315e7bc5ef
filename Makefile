# bpfuml — top-level build.  `make` builds everything, `make test` runs the tests.
#
# The kernel, libbpf and bpftool come from scripts/build-kernel.sh, which keeps
# them in a cache outside the repo (keyed by source, patches, config fragments
# and toolchain) and copies or links the results into build/.  Everything we
# compile ourselves also lands in build/.  Quiet by default; V=1 shows commands.

# Kernels: kernel-patches/versions.conf, whose first line is the default.
# KERNEL=7.2 (or BPFUML_KERNEL, as the harness reads it) builds that kernel
# too; every kernel built before (build/kernels/VERSION) is kept current, and
# one the cache holds for this checkout is linked (no build).
# KERNEL_SRC, KERNEL_DEB, KERNEL_PACKAGE and KERNEL_VERSION apply to KERNEL
# (the default when KERNEL is not set).
KERNEL ?= $(BPFUML_KERNEL)
ALL_KERNELS := $(shell awk '!/^\#/ && NF {print $$1}' kernel-patches/versions.conf)
DEFAULT_KERNEL := $(firstword $(ALL_KERNELS))
OTHER_KERNELS = $(filter-out $(DEFAULT_KERNEL) %-qemu,$(sort $(KERNEL) $(notdir $(wildcard $(B)/kernels/*))))
# The source overrides reach only the kernel they are meant for.
for_kernel = $(if $(filter $(1),$(or $(KERNEL),$(DEFAULT_KERNEL))),,KERNEL_SRC= KERNEL_DEB= KERNEL_PACKAGE= KERNEL_VERSION=)
export KERNEL_PACKAGE KERNEL_VERSION KERNEL_SRC KERNEL_DEB BPFUML_CACHE BPFUML_ARTIFACTS V

B        := build
CLANG    ?= clang-19
CC       ?= gcc
CFLAGS   ?= -O2 -g -Wall -Wextra -Wno-unused-parameter
# -fms-extensions: 7.3 vmlinux.h embeds tagged structs anonymously, as the kernel does.
# harness/bpf_cflags.def: the flags every BPF program here is compiled with.
BPF_CFLAGS := $(shell sed -n 's/^BPF_CFLAG("\(.*\)")$$/\1/p' harness/bpf_cflags.def) -I$(B)/include
GUEST_LDLIBS := $(B)/lib/libbpf.a -lelf -lz -lzstd

ifeq ($(V),1)
Q :=
msg = @true
else
Q := @
msg = @printf '  %-7s %s\n' $(1) $(2)
endif

KERNEL_OUTPUTS := $(B)/include/vmlinux.h $(B)/lib/libbpf.a
BENCH_PROGS    := $(B)/progs/map_bench.bpf.o
PROBE_PROGS    := $(patsubst progs/probe/%.bpf.c,$(B)/progs/%.bpf.o,$(wildcard progs/probe/*.bpf.c))
TEST_PROGS     := $(filter-out %/compile_error.bpf.c,$(wildcard tests/progs/*.bpf.c))
TEST_OUTPUTS   := $(B)/tests/rhash_smoke $(B)/tests/rhash_smoke.bpf.o $(B)/tests/callback_slots \
		  $(B)/tests/uprobe_nop10 $(B)/tests/trap_flag \
		  $(B)/tests/rhash_suite \
		  $(patsubst tests/progs/%.bpf.c,$(B)/tests/progs/%.bpf.o,$(TEST_PROGS))
# Guest programs (run with `bpfuml exec`) share tests/smoke/guest.c.
GUEST_COMMON   := tests/smoke/guest.c tests/smoke/guest.h
# The RHASH suite (issue #6): one guest, one module per area of semantics.
RHASH_SUITE_SRCS := $(wildcard tests/rhash/*.c)

# The host-side harness and the guest agent (static: it is PID 1 in UML).
HARNESS_SRCS := main.c options.c common.c cmd_verify.c cmd_run.c session.c vm.c vm_uml.c vm_qemu.c \
		cmd_parse.c cmd_compare.c cmd_exec.c verdict.c cmd_bench.c cmd_probe.c cmd_kselftest.c kselftest_report.c kselftest_gate.c input.c paths.c \
		diag.c diag_render.c term.c confine.c guest_result.c console_scan.c summary.c junit.c \
		cmd_serve.c serve_proto.c watch.c private_server.c cmd_mcp.c kernels.c verify_matrix.c
AGENT_SRCS   := agent/agent.c agent/agent_bpf.c agent/agent_bench.c agent/agent_probe.c agent/agent_exec.c agent/fatal_watch.c \
		agent/agent_escape.c agent/agent_serve.c agent/line_clock.c
HARNESS_OBJS := $(patsubst %.c,$(B)/harness/%.o,$(HARNESS_SRCS))
AGENT_OBJS   := $(patsubst %.c,$(B)/harness/%.o,$(AGENT_SRCS))
HARNESS_BINS := $(B)/bin/bpfuml $(B)/bin/bpfuml-agent
# Unit tests (tests/unit/test_NAME.c) need no kernel: the parsers of what
# guests print, on recorded and synthetic output.  UNIT_NAME_OBJS: the
# harness objects each links.
UNIT_NAMES   := $(patsubst tests/unit/test_%.c,%,$(wildcard tests/unit/test_*.c))
UNIT_diag_OBJS    := diag.o diag_render.o term.o
UNIT_parsers_OBJS := kselftest_report.o term.o console_scan.o agent/fatal_watch.o agent/line_clock.o
UNIT_TESTS   := $(patsubst %,$(B)/tests/test_%,$(UNIT_NAMES))

.PHONY: all deps kernel kernel-key dist qemu-kernel corpus corpus-compare kselftest-build kselftest test test-kernels clean FORCE \
	fuzz fuzz-build fuzz-bins asan asan-test
.DELETE_ON_ERROR:

all: kernel $(HARNESS_BINS) $(B)/include/vmlinux.h.pch $(TEST_OUTPUTS) $(UNIT_TESTS) $(BENCH_PROGS) $(PROBE_PROGS) $(B)/kselftest/DENYLIST.uml

deps:
	$(Q)scripts/deps.sh

# Always asked: the script decides in well under a second that nothing changed.
# Precious: an interrupted make (a SIGTERM to ./run.sh while this recipe ran)
# must not delete them, as .DELETE_ON_ERROR would: they are the script's.
.PRECIOUS: $(KERNEL_OUTPUTS)
kernel $(KERNEL_OUTPUTS) &: FORCE
	$(Q)scripts/deps.sh
	$(Q)$(call for_kernel,$(DEFAULT_KERNEL)) KERNEL=$(DEFAULT_KERNEL) BUILD_DIR="$(CURDIR)/$(B)" scripts/build-kernel.sh
	$(Q)$(foreach k,$(OTHER_KERNELS),$(call for_kernel,$(k)) KERNEL=$(k) BUILD_DIR="$(CURDIR)/$(B)" scripts/build-kernel.sh &&) true
	$(Q)$(foreach k,$(filter-out $(DEFAULT_KERNEL) $(OTHER_KERNELS),$(ALL_KERNELS)),$(call for_kernel,$(k)) KERNEL=$(k) BUILD_DIR="$(CURDIR)/$(B)" scripts/build-kernel.sh cached &&) true

# The kernel's cache key, computed without the source (a CI cache's key).
kernel-key:
	$(Q)KERNEL=$(KERNEL) scripts/build-kernel.sh key

# The built kernel (and its selftests, when built) as one file for a CI cache
# or a release; BPFUML_ARTIFACTS=FILE makes a fresh checkout use it.
DIST ?= $(B)/bpfuml-kernel.tar.gz
dist: kernel
	$(Q)BUILD_DIR="$(CURDIR)/$(B)" scripts/kernel-dist.sh export $(DIST)

# The x86_64 reference kernel for --backend qemu (build/qemu/bzImage; with
# KERNEL=7.2, build/kernels/7.2-qemu/bzImage): not part
# of `all`; run.sh and the tests ask for it when they need it.  ~20 min the
# first time, a cache hit after that.
qemu-kernel: FORCE
	$(Q)scripts/deps.sh qemu
	$(Q)KERNEL=$(KERNEL) BUILD_DIR="$(CURDIR)/$(B)" scripts/build-kernel.sh qemu

# The fidelity corpus: the selftests' BPF programs compiled for x86_64
# (build/corpus), and their comparison UML against the x86_64 reference.
corpus: qemu-kernel all
	$(Q)BUILD_DIR="$(CURDIR)/$(B)" scripts/build-corpus.sh

corpus-compare: corpus
	$(Q)tests/upstream/corpus.py

# The kernel tree's BPF selftests built for the UML kernel (build/selftests):
# test_progs, test_verifier, test_maps, bpf_testmod.ko.  Not part of `all`;
# `make test` and `make kselftest` ask for it.  ~4 min on 2 cores the first
# time, a cache hit after that.
# The BPF objects are compiled against UML's own BTF (build/include/vmlinux.h):
# with kernel-patches 0005-0010 (perf events, BPF_EVENTS, BPF_JIT's types,
# x86_64 pt_regs names) all 1007 progs/*.c compile against it (measured with
# clang-19 -fsyntax-only; 63 did not with only 0001-0004).  KSELFTEST_VMLINUX_H=
# $(B)/qemu/vmlinux.h compiles them against the x86_64 reference kernel's
# types instead (it then needs make qemu-kernel).
KSELFTEST_VMLINUX_H ?= uml
kselftest-build: kernel $(if $(filter $(CURDIR)/$(B)/qemu/vmlinux.h,$(abspath $(KSELFTEST_VMLINUX_H))),qemu-kernel)
	$(Q)BUILD_DIR="$(CURDIR)/$(B)" KSELFTEST_VMLINUX_H=$(KSELFTEST_VMLINUX_H) scripts/build-selftests.sh

$(B)/kselftest/DENYLIST.uml: tests/kselftest/DENYLIST.uml
	$(Q)mkdir -p $(@D)
	$(Q)cp $< $@

# Every selftest, sharded over as many UML guests as there are cores.
# KSELFTEST_ARGS passes options, e.g. KSELFTEST_ARGS="-t rhash -j 4".
kselftest: all kselftest-build
	$(Q)$(B)/bin/bpfuml kselftest $(KSELFTEST_ARGS)

# vmlinux.h precompiled with the flags of every compile of a .bpf.c by the
# harness (input.c says when it uses it): most of a small compile's time.
$(B)/include/vmlinux.h.pch: $(B)/include/vmlinux.h harness/bpf_cflags.def
	$(call msg,PCH,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -x c-header $< -o $@.tmp && mv $@.tmp $@

$(B)/tests/%.bpf.o: tests/smoke/%.bpf.c harness/bpf_cflags.def $(KERNEL_OUTPUTS)
	$(call msg,CLANG,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(B)/tests/progs/%.bpf.o: tests/progs/%.bpf.c $(wildcard tests/progs/*.h) harness/bpf_cflags.def $(KERNEL_OUTPUTS)
	$(call msg,CLANG,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(B)/progs/%.bpf.o: progs/bench/%.bpf.c harness/bpf_cflags.def $(KERNEL_OUTPUTS)
	$(call msg,CLANG,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(B)/progs/%.bpf.o: progs/probe/%.bpf.c harness/bpf_cflags.def $(KERNEL_OUTPUTS)
	$(call msg,CLANG,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

# Guest programs are static: they run as PID 1 in UML with nothing else.
$(B)/tests/%: tests/smoke/%.c $(GUEST_COMMON) $(KERNEL_OUTPUTS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -static -Itests/smoke -I$(B)/include -o $@ $< tests/smoke/guest.c $(GUEST_LDLIBS)

# -pthread: the concurrency checks run several user-space threads.
$(B)/tests/rhash_suite: $(RHASH_SUITE_SRCS) tests/rhash/suite.h $(GUEST_COMMON) $(KERNEL_OUTPUTS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -pthread -static -Itests/smoke -Itests/rhash -I$(B)/include -o $@ \
		$(RHASH_SUITE_SRCS) tests/smoke/guest.c $(GUEST_LDLIBS)

# Harness objects see the tree's UAPI and libbpf headers (build/include),
# and libxml2's (JUnit reports, junit.c, which opens the library only when
# it writes one; Debian's path: pkg-config is not there before `make` has
# installed the packages).
XML_CFLAGS := -I/usr/include/libxml2
$(B)/harness/%.o: harness/%.c $(KERNEL_OUTPUTS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -MMD -MP -Iharness -I$(B)/include $(XML_CFLAGS) -c $< -o $@

$(B)/bin/bpfuml: $(HARNESS_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -o $@ $^ -ljson-c

$(B)/bin/bpfuml-agent: $(AGENT_OBJS) $(B)/lib/libbpf.a
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -static -o $@ $(AGENT_OBJS) $(B)/lib/libbpf.a -ljson-c -lelf -lz -lzstd

# Prerequisite lists from here on are expanded twice ($$* names the stem).
.SECONDEXPANSION:
$(B)/tests/test_%: tests/unit/test_%.c tests/unit/unit.h $$(addprefix $(B)/harness/,$$(UNIT_$$*_OBJS))
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -Iharness -Iharness/agent -o $@ $(filter-out %.h,$^) -ljson-c

# ---- ASan/UBSan build of the host harness ---------------------------------
# `make asan`: build/asan/bin/bpfuml and the unit tests in build/asan/tests/
# with -fsanitize=address,undefined (any finding aborts); `make asan-test`
# runs the unit tests and the `parse`-based tests with them.  The guest agent is not
# part of it (it is static, and PID 1 in the guest).
ASAN_CFLAGS := $(CFLAGS) -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
	       -fno-sanitize-recover=all
ASAN_OBJS   := $(patsubst %.c,$(B)/asan/harness/%.o,$(HARNESS_SRCS))

asan: $(B)/asan/bin/bpfuml $(patsubst %,$(B)/asan/tests/test_%,$(UNIT_NAMES))

$(B)/asan/harness/%.o: harness/%.c $(KERNEL_OUTPUTS)
	$(call msg,CC-ASAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ASAN_CFLAGS) -MMD -MP -Iharness -I$(B)/include $(XML_CFLAGS) -c $< -o $@

$(B)/asan/bin/bpfuml: $(ASAN_OBJS)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ASAN_CFLAGS) -o $@ $^ -ljson-c

$(B)/asan/tests/test_%: tests/unit/test_%.c tests/unit/unit.h $$(addprefix $(B)/asan/harness/,$$(UNIT_$$*_OBJS))
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ASAN_CFLAGS) -Iharness -Iharness/agent -o $@ $(filter-out %.h,$^) -ljson-c

# BPFUML_BIN points the tests at the sanitized binary; the build directory
# (kernel, agent) stays build/.
asan-test: all asan
	$(Q)for t in $(UNIT_NAMES); do $(B)/asan/tests/test_$$t tests/unit/fixtures || exit 1; done
	$(Q)BPFUML_BIN=$(CURDIR)/$(B)/asan/bin/bpfuml BPFUML_BUILD_DIR=$(CURDIR)/$(B) \
		python3 tests/run_tests.py $(B) -k parse

# ---- libFuzzer targets (tests/fuzz/README.md) ------------------------------
# One tests/fuzz/fuzz_NAME.c per target; FUZZ_NAME_SRCS (NAME as in the file
# name) lists the harness sources it links; FUZZ_NAME_SEEDS optionally names
# seed files kept elsewhere in the tree, copied beside tests/fuzz/seeds/NAME/
# into build/fuzz/seeds/NAME/ at build time.
FUZZ_TARGETS := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BINS    := $(patsubst %,$(B)/fuzz/fuzz_%,$(FUZZ_TARGETS))
FUZZ_SEEDS   := $(patsubst %,$(B)/fuzz/seeds/%.stamp,$(FUZZ_TARGETS))
FUZZ_CFLAGS  := -g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=all
FUZZ_TIME    ?= 60

FUZZ_diag_SRCS  := harness/diag.c harness/diag_render.c harness/term.c
FUZZ_diag_SEEDS := $(wildcard tests/unit/fixtures/*.log)
FUZZ_input_SRCS := harness/input.c
# the host's reading and checking of a guest's result.json
FUZZ_result_SRCS := harness/guest_result.c

# clang's libFuzzer runtime (Debian: libclang-rt-19-dev, from scripts/deps.sh).
# Looked for when the recipe runs, not when make reads this file: on a fresh
# machine `make test` installs it (via deps.sh) after the Makefile was read.
FUZZ_HAS_RUNTIME = ls "$$($(CLANG) -print-resource-dir 2>/dev/null)"/lib/*/libclang_rt.fuzzer*.a >/dev/null 2>&1

fuzz-build: FORCE
	$(Q)if $(FUZZ_HAS_RUNTIME); then $(MAKE) --no-print-directory fuzz-bins; \
	else echo "  FUZZ    skipped: clang's fuzzer runtime is missing" \
		"(apt-get install libclang-rt-19-dev, or make deps as root)"; fi

fuzz-bins: $(FUZZ_BINS) $(FUZZ_SEEDS)
	@:

# make fuzz FUZZ_TIME=SEC: every target for SEC seconds; corpora grow in
# build/fuzz/corpus/NAME, crashes land in build/fuzz/crashes/NAME.
fuzz: fuzz-build
	$(Q)$(FUZZ_HAS_RUNTIME) || { echo "bpfuml: clang's fuzzer runtime is missing; install libclang-rt-19-dev" >&2; exit 2; }
	$(Q)tests/fuzz/run.sh $(B) $(FUZZ_TIME) $(FUZZ_TARGETS)

$(B)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $$(FUZZ_$$*_SRCS)
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -Iharness -I$(B)/include -o $@ $< $(FUZZ_$*_SRCS) -ljson-c

$(B)/fuzz/seeds/%.stamp: $$(wildcard tests/fuzz/seeds/$$*/*) $$(FUZZ_$$*_SEEDS)
	$(Q)rm -rf $(B)/fuzz/seeds/$* && mkdir -p $(B)/fuzz/seeds/$*
	$(Q)$(if $^,cp $^ $(B)/fuzz/seeds/$*/)
	$(Q)touch $@

-include $(HARNESS_OBJS:.o=.d) $(AGENT_OBJS:.o=.d) $(ASAN_OBJS:.o=.d)

test: all kselftest-build fuzz-build asan
	$(Q)tests/run.sh $(B)

# The kernel matrix's tests against every kernel of kernel-patches/versions.conf
# and each one's x86_64 reference, building what is missing first (first
# builds: ~13-17 min per UML kernel, ~20 min per reference on 2 cores).
# `make test` runs the same tests with the kernels already built.
test-kernels: all
	$(Q)$(foreach k,$(ALL_KERNELS),$(MAKE) --no-print-directory kernel qemu-kernel KERNEL=$(k) &&) true
	$(Q)python3 tests/run_tests.py $(B) --area kernels

clean:
	rm -rf $(B)
