#!/usr/bin/env bash
# kernel-dist.sh — the built kernel as one file: what a CI cache or a release
# asset holds, so that a fresh checkout runs with no kernel build.
#
#   scripts/kernel-dist.sh export FILE    (`make dist`) pack the UML kernel
#       artifact build/ is linked to (kernel, config, libbpf, bpftool,
#       headers, vmlinux.h) and, when built for that kernel, its selftests
#   scripts/kernel-dist.sh import FILE KEY INPUTS    (build-kernel.sh, for
#       BPFUML_ARTIFACTS=FILE) unpack FILE into the cache when it holds
#       kernel KEY; else say which of INPUTS (the key's input lines, a
#       file) differ, and exit 2
#   scripts/kernel-dist.sh check FILE KEY [selftests]    (scripts/ci/kernel.sh)
#       exit 0 when FILE is a dist of kernel KEY (with its selftests, when
#       asked), 1 when it is not or is no dist
#
# FILE is a gzip'd tar: bpfuml-dist/manifest first (the key, the selftests'
# key, the key's input lines), then artifacts/KEY/ and selftests/SKEY/ as
# they are in the cache.  Exit codes: 0 done, 1 nothing built to export,
# 2 a FILE that is missing, not a dist, or of another kernel.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$top/build}
. "$top/scripts/cache-dir.sh"
bpfuml_cache_dir

say() { printf '  %-7s %s\n' "$1" "$2" >&2; }
die() { local code=$1; shift; echo "bpfuml: $*" >&2; exit "$code"; }
# Scratch directories (global: the EXIT trap runs after their function).
stage= tmp=
trap 'rm -rf "$stage" "$tmp"' EXIT

export_dist() {
	local file=$1 key art skey= sdir
	key=$(cat "$BUILD_DIR/.kernel-key" 2>/dev/null) || die 1 "nothing to pack: $BUILD_DIR/.kernel-key is missing (make kernel first)"
	art=$cache/artifacts/$key
	[ -f "$art/.complete" ] || die 1 "kernel artifact $art is missing; run make kernel"
	grep -q '^input: ' "$art/manifest" ||
		die 1 "$art/manifest lists no key inputs (built by an older script); rebuild: rm -rf $art && make kernel"
	# The selftests go along when build/selftests is of this very kernel.
	sdir=$(readlink -f "$BUILD_DIR/selftests" 2>/dev/null || true)
	if [ -n "$sdir" ] && [ -f "$sdir/.complete" ] &&
		[ "$(awk '/^kernel-key:/ {print $2}' "$sdir/manifest")" = "$key" ]; then
		skey=$(basename "$sdir")
	fi
	stage=$(mktemp -d)
	mkdir -p "$stage/bpfuml-dist"
	{
		echo "key: $key"
		echo "selftests: ${skey:-none}"
		echo "made: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -m)"
		grep '^input: ' "$art/manifest"
	} >"$stage/bpfuml-dist/manifest"
	mkdir -p "$(dirname "$file")"
	say DIST "$file: kernel $key${skey:+, selftests $skey}"
	tar -czf "$file.tmp" -C "$stage" bpfuml-dist -C "$cache" "artifacts/$key" ${skey:+"selftests/$skey"}
	mv "$file.tmp" "$file"
	say DIST "$(du -h "$file" | cut -f1) written"
}

# Move DIR (unpacked) to the cache as TARGET unless a complete one is there;
# the rename makes it appear whole or not at all.
place() {
	local dir=$1 target=$2 from=$3
	[ -f "$target/.complete" ] && return
	echo "imported: $from $(date -u +%Y-%m-%dT%H:%M:%SZ)" >>"$dir/manifest"
	touch "$dir/.complete"
	rm -rf "$target"
	mkdir -p "$(dirname "$target")"
	mv "$dir" "$target"
}

# FILE's manifest into $manifest, its kernel key into $have and its
# selftests' key (or none) into $skey (the caller's locals); else say why in
# $why, and return 1.
read_manifest() {
	local file=$1
	why=
	[ -f "$file" ] || { why="BPFUML_ARTIFACTS=$file: no such file (make dist writes one)"; return 1; }
	# The manifest is the first member: tar stops after it.
	manifest=$(tar -xzOf "$file" --occurrence=1 bpfuml-dist/manifest 2>/dev/null) ||
		{ why="BPFUML_ARTIFACTS=$file is not a bpfuml kernel dist (make dist writes one)"; return 1; }
	have=$(sed -n 's/^key: //p' <<<"$manifest")
	skey=$(sed -n 's/^selftests: //p' <<<"$manifest")
	[[ $have =~ ^[0-9a-f]{16}$ ]] || { why="BPFUML_ARTIFACTS=$file: its manifest names no kernel key"; return 1; }
	[[ $skey =~ ^([0-9a-f]{16}|none)$ ]] ||
		{ why="BPFUML_ARTIFACTS=$file: its manifest names no selftests key"; return 1; }
}

check_dist() {
	local file=$1 key=$2 want_selftests=$3 manifest have skey why
	read_manifest "$file" && [ "$have" = "$key" ] &&
		{ [ -z "$want_selftests" ] || [ "$skey" != none ]; }
}

import_dist() {
	local file=$1 key=$2 inputs=$3 manifest have skey why
	read_manifest "$file" || die 2 "$why"
	if [ "$have" != "$key" ]; then
		echo "bpfuml: BPFUML_ARTIFACTS=$file holds kernel $have, but this checkout's patches, config" \
			"and toolchain make kernel $key; not using it.  What differs (- the file's, + this checkout's):" >&2
		diff <(sed -n 's/^input: //p' <<<"$manifest") "$inputs" | grep '^[<>]' |
			sed -e 's/^</  -/' -e 's/^>/  +/' >&2 || true
		echo "bpfuml: unset BPFUML_ARTIFACTS to build the kernel here, or make a dist from this checkout" >&2
		exit 2
	fi
	local what="kernel $key"
	[ "$skey" = none ] || what+=" and its selftests $skey"
	say IMPORT "$what from $file"
	tmp=$(mktemp -d "$cache/import.XXXXXX")
	# Only the named members, as plain files owned by us: the file is input.
	local members=("artifacts/$key")
	[ "$skey" = none ] || members+=("selftests/$skey")
	tar -xzf "$file" -C "$tmp" --no-same-owner --no-same-permissions "${members[@]}" 2>"$tmp/tar.err" ||
		die 2 "BPFUML_ARTIFACTS=$file: unpacking failed: $(head -n 3 "$tmp/tar.err")"
	[ -x "$tmp/artifacts/$key/kernel/linux" ] && [ -f "$tmp/artifacts/$key/include/vmlinux.h" ] ||
		die 2 "BPFUML_ARTIFACTS=$file: artifacts/$key lacks kernel/linux or include/vmlinux.h"
	place "$tmp/artifacts/$key" "$cache/artifacts/$key" "$file"
	[ "$skey" = none ] || place "$tmp/selftests/$skey" "$cache/selftests/$skey" "$file"
}

case ${1:-} in
export) [ $# = 2 ] || die 2 "usage: kernel-dist.sh export FILE"; export_dist "$2" ;;
import) [ $# = 4 ] || die 2 "usage: kernel-dist.sh import FILE KEY INPUTS"; import_dist "$2" "$3" "$4" ;;
check)
	[ $# = 3 ] || { [ $# = 4 ] && [ "$4" = selftests ]; } ||
		die 2 "usage: kernel-dist.sh check FILE KEY [selftests]"
	check_dist "$2" "$3" "${4:-}" ;;
*) die 2 "usage: kernel-dist.sh export FILE | import FILE KEY INPUTS | check FILE KEY [selftests]" ;;
esac
