#!/usr/bin/env bash
# build-selftests.sh — build the kernel tree's BPF selftests (test_progs,
# test_verifier, test_maps) and test modules (bpf_testmod.ko, ...) for the UML
# kernel that scripts/build-kernel.sh built, cached outside the repo.
#
#   scripts/build-selftests.sh       (`make kselftest-build`, after `make kernel`)
#
# The runners are host x86_64 binaries: the UML guest sees the host's / through
# hostfs and runs them as they are.  The BPF objects are compiled against
# KSELFTEST_VMLINUX_H: "uml" (the Makefile's default) is the UML kernel's own
# BTF, which with kernel-patches 0005-0010 has the types the selftests name
# (x86_64 pt_regs register names included); a FILE is another vmlinux.h, such
# as the x86_64 reference kernel's (build/qemu/vmlinux.h).  Either way the
# upstream Makefile's permissive mode (BPF_STRICT_BUILD=0) leaves out objects
# that do not compile, with their tests; bpf/not-built.txt in the artifact
# lists those tests, and test_progs reports them as "SKIP (not built)", so
# none vanishes silently.
# The modules are built against the UML build directory (ARCH=um), which must
# hold the kernel of the current artifact (checked by comparing their BTF).
#
# Cache key: the kernel artifact key (source, patches, config, toolchain), the
# selftests' source (the tools/ tree the kernel's manifest names), clang/gcc
# versions and this script.  Artifacts:
# $BPFUML_CACHE/selftests/<key>/, linked as build/selftests.
#
# Environment: BPFUML_CACHE, BUILD_DIR (as build-kernel.sh), JOBS, V=1,
# CLANG (clang-19), KSELFTEST_VMLINUX_H=FILE|uml (the vmlinux.h the BPF
# objects are compiled against; its content is part of the key; default uml).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$top/build}
V=${V:-0}
JOBS=${JOBS:-$(nproc)}
CLANG=${CLANG:-clang-19}
LLVM_SUFFIX=${CLANG#clang}
KEEP_ARTIFACTS=${KEEP_ARTIFACTS:-2}

say() { printf '  %-7s %s\n' "$1" "$2"; }
die() { echo "bpfuml: $*" >&2; exit 1; }
[ "$V" = 1 ] && set -x

VMLINUX_H=${KSELFTEST_VMLINUX_H:-uml}
[ "$VMLINUX_H" = uml ] && VMLINUX_H=
[ -z "$VMLINUX_H" ] || [ -f "$VMLINUX_H" ] ||
	die "KSELFTEST_VMLINUX_H=$VMLINUX_H: no such file (make qemu-kernel builds build/qemu/vmlinux.h; =uml uses UML's BTF)"

. "$top/scripts/cache-dir.sh"
bpfuml_cache_dir
bpfuml_cache_can_build_kernels

kernel_key=$(cat "$BUILD_DIR/.kernel-key" 2>/dev/null) ||
	die "$BUILD_DIR/.kernel-key is missing: build the kernel first (make kernel)"
kernel_art=$cache/artifacts/$kernel_key
[ -f "$kernel_art/.complete" ] || die "kernel artifact $kernel_art is missing; run make kernel"
patched_tree=$(awk '/^patched-tree:/ {print $2}' "$kernel_art/manifest")
tools_tree=$(awk '/^tools-tree:/ {print $2}' "$kernel_art/manifest")
[ -n "$tools_tree" ] || die "$kernel_art/manifest has no tools-tree line (an artifact of an older build script); rebuild it: rm -rf $kernel_art && make kernel"

toolchain_id() {
	gcc -dumpfullversion
	ld --version | head -n1
	"$CLANG" --version | head -n1
}

# The key needs no source tree (the kernel's manifest names the tools/ tree
# the selftests come from), so a cache restored by CI, or a kernel imported
# with its selftests (BPFUML_ARTIFACTS), is a hit with no tree at all.
key=$({
	echo "kernel $kernel_key"
	echo "selftests $tools_tree"
	[ -n "$VMLINUX_H" ] && { echo "vmlinux.h"; sha256sum <"$VMLINUX_H"; }
	toolchain_id
	cat "$top/scripts/build-selftests.sh"
} | sha256sum | cut -c1-16)
art=$cache/selftests/$key

link_build_dir() {
	ln -sfn "$art" "$BUILD_DIR/selftests"
	touch "$art/.complete"
}

if [ -f "$art/.complete" ]; then
	link_build_dir
	[ "$V" = 1 ] && say CACHED "$art"
	exit 0
fi

exec 9>"$cache/selftests.lock"
flock 9

# The source slot that holds the patched tree of this kernel.  Its work tree
# may have moved on to another patch set since (a later make kernel built one
# that was not cached); a build checks it out again below.
find_tree() {
	local t
	for t in "$cache"/trees/*/linux; do
		if git -C "$t" cat-file -e "$patched_tree^{tree}" 2>/dev/null; then
			echo "$t"
			return
		fi
	done
}
tree=$(find_tree)
if [ -z "$tree" ]; then
	# A kernel imported without its selftests (BPFUML_ARTIFACTS), or a
	# cache restored without its trees: the source comes first.
	say KERNEL "no source tree here holds kernel $kernel_key (imported without selftests?); fetching and building it first"
	KERNEL_REBUILD=1 BUILD_DIR="$BUILD_DIR" "$top/scripts/build-kernel.sh" uml ||
		die "building kernel $kernel_key from source failed; a dist made after make kselftest-build carries the selftests"
	tree=$(find_tree)
	[ -n "$tree" ] || die "no source tree in $cache/trees holds the kernel's patched tree $patched_tree after building it"
fi
kbuild=$(dirname "$tree")/build
selftests=$tree/tools/testing/selftests/bpf
out=$(dirname "$tree")/selftests-build
log=$out/build.log
mkdir -p "$out"
: >"$log"
started=$SECONDS

run_logged() {
	if [ "$V" = 1 ]; then "$@" 2>&1 | tee -a "$log"; return "${PIPESTATUS[0]}"; fi
	if ! "$@" >>"$log" 2>&1; then
		echo "---- last lines of $log ----" >&2
		grep -E 'error|Error|ERROR' "$log" | tail -n 15 >&2 || true
		tail -n 25 "$log" >&2
		return 1
	fi
}

# The modules need the very kernel they will be loaded into: vermagic,
# Module.symvers, and split BTF on top of that kernel's BTF.
btf_of() { objcopy -O binary --only-section=.BTF "$1" "$2"; }
btf_of "$kernel_art/kernel/linux" "$out/.btf-artifact"
kernel_in_build_dir() {
	[ "$(git -C "$tree" rev-parse -q --verify 'HEAD^{tree}' 2>/dev/null)" = "$patched_tree" ] &&
		btf_of "$kbuild/vmlinux" "$out/.btf-build" 2>/dev/null &&
		cmp -s "$out/.btf-artifact" "$out/.btf-build"
}
if ! kernel_in_build_dir; then
	say KERNEL "the cache's work tree and build directory hold another patch set; building kernel $kernel_key there again"
	KERNEL_REBUILD=1 BUILD_DIR="$BUILD_DIR" "$top/scripts/build-kernel.sh" uml ||
		die "rebuilding kernel $kernel_key in $kbuild failed"
	btf_of "$kernel_art/kernel/linux" "$out/.btf-artifact"
	kernel_in_build_dir ||
		die "the kernel build directory $kbuild still holds another kernel than artifact $kernel_key;" \
			"rebuild it: rm -rf $kernel_art && make kernel"
fi

# bpf_test_rqspinlock.ko is left out: its stress test drives NMIs through
# perf_event_create_kernel_counter(), and UML has no perf events.
kmods="bpf_testmod.ko bpf_test_no_cfi.ko bpf_test_modorder_x.ko bpf_test_modorder_y.ko"
say KMODS "$kmods for ARCH=um (log: $log)"
rm -rf "$out/test_kmods"
cp -r "$selftests/test_kmods" "$out/test_kmods"
run_logged make -C "$tree" O="$kbuild" ARCH=um M="$out/test_kmods" MODULES="$kmods" -j"$JOBS" modules ||
	die "building the test modules failed (full log: $log)"

if [ -z "$VMLINUX_H" ]; then
	say GEN "vmlinux.h from the UML kernel's BTF"
	"$BUILD_DIR/bin/bpftool" btf dump file "$kernel_art/kernel/linux" format c >"$out/vmlinux.h.new"
	cmp -s "$out/vmlinux.h.new" "$out/vmlinux.h" || mv "$out/vmlinux.h.new" "$out/vmlinux.h"
	rm -f "$out/vmlinux.h.new"
else
	cmp -s "$VMLINUX_H" "$out/vmlinux.h" || cp "$VMLINUX_H" "$out/vmlinux.h"
fi

# VMLINUX_BTF is our vmlinux.h too: it changes only when its content does,
# so a new kernel with the same types rebuilds no BPF object.
# BPF_STRICT_BUILD=0: objects that do not compile against this vmlinux.h are
# left out with their tests.  TEST_KMODS= : the modules come from above.
# BPF_TARGET_ENDIAN carries -mcpu=v4 to libarena (clang-19 defaults BPF to
# v1); the runners' own rules put their -mcpu after it, which wins.
# LLVM's disassembler (llvm-19-dev) lets test_progs check the x86_64 code
# the JIT emits (__jited).  LLVM_LINK_STATIC= links the shared libLLVM
# rather than its static archives: the guest runs the host's binaries with
# the host's libraries, and the runners relink faster.  LLVM_CONFIG goes in
# the environment too: the selftests' feature check runs make from
# $(shell), which gets make's environment, not its command line (make 4.3),
# and without it looks for an unversioned llvm-config, which a machine may
# lack or have of another LLVM.
export LLVM_CONFIG="llvm-config$LLVM_SUFFIX"
mkdir -p "$out/bpf"
say SELFTST "test_progs, test_verifier, test_maps (first build ~4 min on 2 cores; log: $log)"
selftests_make=(make -C "$selftests" OUTPUT="$out/bpf" -j"$JOBS"
	VMLINUX_BTF="$out/vmlinux.h" VMLINUX_H="$out/vmlinux.h"
	CLANG="$CLANG" LLC="llc$LLVM_SUFFIX" LLVM_STRIP="llvm-strip$LLVM_SUFFIX"
	BPF_TARGET_ENDIAN="--target=bpfel -mcpu=v4"
	LLVM_CONFIG="llvm-config$LLVM_SUFFIX" LLVM_LINK_STATIC=
	BPF_STRICT_BUILD=0 TEST_KMODS= SKIP_DOCS=1 SKIP_LIBBFD=1
	test_progs test_verifier test_maps)
# The selftests' make tracks files, not its own variables: where those
# changed since the last build in $out (SKIP_LLVM=1 before), the objects
# built with them and the runners linked with them are made again.
make_vars=$(printf '%s\n' "${selftests_make[@]}" | grep -E '^[A-Z_]+=')
if [ "$make_vars" != "$(cat "$out/make-vars" 2>/dev/null)" ]; then
	rm -f "$out/bpf/jit_disasm_helpers.o" "$out"/bpf/test_progs* "$out/bpf/test_verifier" "$out/bpf/test_maps"
fi
# The selftests' Makefile races with itself on rebuilds: its EXT-COPY rsync
# ran while map_percpu_stats.test.o was being rewritten ("file has
# vanished", rsync exit 24).  A second make finishes what the first left; a
# real error fails it again.
if ! run_logged "${selftests_make[@]}"; then
	say SELFTST "the selftests' make failed; running it once more (its parallel rules race on rebuilds)"
	run_logged "${selftests_make[@]}" || die "building the selftests failed (full log: $log)"
fi
printf '%s\n' "$make_vars" >"$out/make-vars"
say SELFTST "built in $(((SECONDS - started) / 60)) min $(((SECONDS - started) % 60)) s"

# The artifact: what the runners need at run time (they open their BPF
# objects, modules and helper binaries from the current directory), without
# the intermediate objects.
say INSTALL "$art"
staging=$art.tmp
rm -rf "$staging"
mkdir -p "$staging/bpf"
rsync -a --include='*.bpf.o' --exclude='*.o' --exclude='*.d' --exclude='*.skel.h' \
	--exclude='*.lskel.h' --exclude='*.subskel.h' --exclude='/tools/build/libbpf' \
	--exclude='/tools/build/resolve_btfids' --exclude='/tools/include' \
	"$out/bpf/" "$staging/bpf/"
for m in $kmods; do cp "$out/test_kmods/$m" "$staging/bpf/$m"; done
# Tests left out because their objects did not compile against this
# vmlinux.h: test_progs still knows their names (weak symbols) and reports
# them as "SKIP (not built)"; the harness runs them so that they show.
for t in "$selftests"/prog_tests/*.c; do
	name=$(basename "$t" .c)
	[ -f "$out/bpf/$name.test.o" ] && continue
	sed -n -E 's/^void (serial_)?test_([a-zA-Z0-9_]+)\((void)?\).*/\2/p' "$t"
done | sort >"$staging/bpf/not-built.txt"
grep -E '^  SKIP-(BPF|SKEL|TEST)' "$log" | sort -u >"$staging/build-skips.txt" || true
vmlinux_h_desc="${VMLINUX_H:-UML BTF} ($(sha256sum <"$out/vmlinux.h" | cut -c1-16))"
cat >"$staging/manifest" <<-MANIFEST
key: $key
kernel-key: $kernel_key
source: $tree ($tools_tree tools/)
vmlinux.h: $vmlinux_h_desc
modules: $kmods
not-built tests: $(wc -l <"$staging/bpf/not-built.txt")
skipped objects/skeletons/tests: $(wc -l <"$staging/build-skips.txt")
toolchain: $(toolchain_id | tr '\n' ';')
built: $(date -u +%Y-%m-%dT%H:%M:%SZ) in $(((SECONDS - started) / 60)) min $(((SECONDS - started) % 60)) s
MANIFEST
rm -rf "$art"
mv "$staging" "$art"
touch "$art/.complete"
link_build_dir
# Keep the KEEP_ARTIFACTS most recently used.
"$top/scripts/prune-artifacts.sh" "$KEEP_ARTIFACTS" "$cache"/selftests/*
say DONE "selftests in $art, linked as $BUILD_DIR/selftests"
