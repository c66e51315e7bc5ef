#!/usr/bin/env bash
# build-corpus.sh — compile every BPF program source of the kernel tree's
# selftests (tools/testing/selftests/bpf/progs/*.c) into objects for the
# fidelity corpus (tests/upstream/corpus.py), cached outside the repo.
#
#   scripts/build-corpus.sh          (`make corpus`, after `make qemu-kernel`)
#
# The objects are what a user would build for an x86_64 machine: compiled
# with the selftests' own flags against the x86_64 reference kernel's
# vmlinux.h (build/qemu/vmlinux.h), then loaded by both backends; CO-RE
# adapts them to UML.  A source that does not compile with bookworm's clang
# is left out and listed in not-built.txt with clang's first error.
#
# Cache key: the patched tree, the vmlinux.h, clang's version, this script
# and the flags (harness/bpf_cflags.def).  Artifacts: $BPFUML_CACHE/corpus/<key>/, linked as build/corpus.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$top/build}
JOBS=${JOBS:-$(nproc)}
CLANG=${CLANG:-clang-19}
. "$top/scripts/cache-dir.sh"
bpfuml_cache_dir

say() { printf '  %-7s %s\n' "$1" "$2"; }
die() { echo "bpfuml: $*" >&2; exit 1; }

vmlinux_h=$BUILD_DIR/qemu/vmlinux.h
[ -f "$vmlinux_h" ] || die "$vmlinux_h is missing: run make qemu-kernel first"
patched=$(awk '/^patched-tree:/ {print $2}' "$BUILD_DIR/manifest" 2>/dev/null) ||
	die "$BUILD_DIR/manifest is missing: run make first"
tree=
for t in "$cache"/trees/*/linux; do
	if [ "$(git -C "$t" rev-parse -q --verify 'HEAD^{tree}' 2>/dev/null)" = "$patched" ]; then
		tree=$t
		break
	fi
done
[ -n "$tree" ] || die "no kernel tree in $cache/trees holds the patched tree $patched; run make"
selftests=$tree/tools/testing/selftests/bpf

key=$({
	echo "tree $patched"
	sha256sum <"$vmlinux_h"
	"$CLANG" --version | head -n1
	cat "$0" "$top/harness/bpf_cflags.def"
} | sha256sum | cut -c1-16)
art=$cache/corpus/$key
if [ -f "$art/.complete" ]; then
	ln -sfn "$art" "$BUILD_DIR/corpus"
	exit 0
fi

sources=("$selftests"/progs/*.c)
say CORPUS "compiling ${#sources[@]} selftest BPF sources against the x86_64 vmlinux.h (~10 min on 2 cores, once)"
staging=$art.tmp
rm -rf "$staging"
mkdir -p "$staging/include" "$staging/errors"
cp "$vmlinux_h" "$staging/include/vmlinux.h"
cp -r "$BUILD_DIR/include/bpf" "$staging/include/"

# The selftests Makefile's BPF_CFLAGS and CLANG_SYS_INCLUDES, for x86_64,
# one flag a line in a file that compile_one reads back as an array (arrays
# cannot be exported to xargs' shells; a path with blanks stays one flag).
mapfile -t sys_includes < <("$CLANG" -v -E - </dev/null 2>&1 |
	sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter\n\1|p }')
# Ours (harness/bpf_cflags.def) and the selftests' extras.
mapfile -t base_cflags < <(sed -n 's/^BPF_CFLAG("\(.*\)")$/\1/p' "$top/harness/bpf_cflags.def")
cflags=("${base_cflags[@]}" -mlittle-endian -Wall
	"-I$staging/include" "-I$selftests" "-I$tree/tools/include/uapi" "-I$tree/tools/include"
	"-I$selftests/libarena/include" -std=gnu11 -fno-strict-aliasing
	-Wno-compare-distinct-pointer-types -Wno-initializer-overrides "${sys_includes[@]}")
cflags_file=$staging/cflags
printf '%s\0' "${cflags[@]}" >"$cflags_file"

compile_one() {
	local src=$1 name flags=()
	name=$(basename "$src" .c)
	mapfile -d '' -t flags <"$cflags_file"
	# libarena's objects need cpu v4 with clang-19, as upstream builds them.
	grep -q 'libarena\|bpf_arena_common' "$src" && flags+=(-mcpu=v4)
	if ! "$CLANG" "${flags[@]}" -c "$src" -o "$staging/$name.bpf.o" 2>"$staging/errors/$name.txt"; then
		rm -f "$staging/$name.bpf.o"
		return 0
	fi
	rm -f "$staging/errors/$name.txt"
}
export -f compile_one
export CLANG cflags_file staging
printf '%s\0' "${sources[@]}" | nice -n 5 xargs -0 -P "$JOBS" -I{} bash -c 'compile_one "$@"' _ {}

for e in "$staging"/errors/*.txt; do
	[ -e "$e" ] || continue
	printf '%s: %s\n' "$(basename "$e" .txt)" "$(grep -m1 'error:' "$e" || head -n1 "$e")"
done >"$staging/not-built.txt"
rm -rf "$staging/errors" "$staging/include" "$cflags_file"
objects=("$staging"/*.bpf.o)
built=${#objects[@]}
say CORPUS "$built objects built, $(wc -l <"$staging/not-built.txt") left out (not-built.txt)"
rm -rf "$art"
mv "$staging" "$art"
touch "$art/.complete"
ln -sfn "$art" "$BUILD_DIR/corpus"
