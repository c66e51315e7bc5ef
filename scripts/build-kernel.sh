#!/usr/bin/env bash
# build-kernel.sh — fetch, patch, configure and build the UML kernel, libbpf
# and bpftool from one tree, cached outside the repo, keyed by what went in.
#
#   scripts/build-kernel.sh          the UML kernel, libbpf, bpftool (`make`)
#   scripts/build-kernel.sh qemu     the x86_64 reference kernel (bzImage, JIT)
#                                    for --backend qemu, from the same patched
#                                    tree, in its own build dir and cache key
#                                    (`make qemu-kernel`)
#   scripts/build-kernel.sh prune    only remove old artifacts (both kinds, each
#                                    kernel), as every build does at its end
#   scripts/build-kernel.sh cached   link the UML kernel when the cache has it
#                                    for this checkout's key; build nothing
#   scripts/build-kernel.sh key      print the UML artifact's key, computed
#                                    without fetching or reading the source
#                                    (`make kernel-key`; a CI cache's key)
#
# Environment (the Makefile passes these through):
#   KERNEL=VERSION      which kernel of kernel-patches/versions.conf (7.3,
#                       7.2, ...); default: its first line
#   KERNEL_SRC=DIR      build this kernel tree instead of the Debian package
#                       (with KERNEL's patches and config)
#   KERNEL_DEB=FILE     use this linux-source-*.deb instead of downloading one
#   KERNEL_PACKAGE, KERNEL_VERSION   override the Debian package and pinned
#                       version that versions.conf gives KERNEL
#   BPFUML_CACHE        cache directory (default $XDG_CACHE_HOME/bpfuml)
#   BUILD_DIR           where the stable artifact links go (default ./build)
#   V=1                 show commands and the kernel's own build output
#   KERNEL_REBUILD=1    build the UML kernel in the cache's build directory
#                       even when its artifact is cached (build-selftests.sh
#                       asks for it when that directory holds another kernel)
#   BPFUML_ARTIFACTS=FILE  a kernel packed by `make dist` (scripts/kernel-dist.sh):
#                       when its key is this checkout's, it is imported into
#                       the cache instead of building; another key is refused
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$top/build}
V=${V:-0}
JOBS=${JOBS:-$(nproc)}
# BTF in link order, the same every build.  With pahole 1.24 (bookworm),
# scripts/Makefile.btf runs pahole -j, which encodes compile units in a random
# order, unless KBUILD_BUILD_TIMESTAMP is set.  The order decides which of two
# BTF functions of one name libbpf attaches to: kernel/bpf/bpf_lsm_proto.c's
# prototypes (file__nullable) must come before bpf_lsm.c's, or an LSM program
# may dereference a NULL file unchecked (selftest verifier_lsm).
export KBUILD_BUILD_TIMESTAMP='1970-01-01 00:00:00 UTC'
CLANG=${CLANG:-clang-19}
LLVM_STRIP=${LLVM_STRIP:-llvm-strip-19}
KEEP_ARTIFACTS=${KEEP_ARTIFACTS:-4}
TARGET=${1:-uml}
case $TARGET in
uml | qemu | prune | key | cached) ;;
*) echo "usage: build-kernel.sh [uml|qemu|prune|key|cached]" >&2; exit 2 ;;
esac

. "$top/scripts/cache-dir.sh"
bpfuml_cache_dir
case $TARGET in uml | qemu) bpfuml_cache_can_build_kernels ;; esac

say() { printf '  %-7s %s\n' "$1" "$2"; }
die() { echo "bpfuml: $*" >&2; exit 1; }
[ "$V" = 1 ] && set -x

# The kernel's line of kernel-patches/versions.conf: its package, pin, suite,
# BPF modes and series.  The first line is the default kernel, whose
# artifacts also fill build/ (libbpf, bpftool, headers, build/kernel).
select_kernel() {
	local table=$top/kernel-patches/versions.conf line
	default_kernel=$(awk '!/^#/ && NF {print $1; exit}' "$table")
	KERNEL=${KERNEL:-$default_kernel}
	line=$(awk -v v="$KERNEL" '!/^#/ && $1 == v' "$table")
	[ -n "$line" ] || die "no kernel $KERNEL in kernel-patches/versions.conf (there: $(awk '!/^#/ && NF {printf "%s ", $1}' "$table"))"
	read -r _ table_package table_pin kernel_suite kernel_modes kernel_series <<<"$line"
	KERNEL_PACKAGE=${KERNEL_PACKAGE:-$table_package}
	KERNEL_VERSION=${KERNEL_VERSION:-$table_pin}
	[ -f "$top/kernel-patches/$kernel_series" ] ||
		die "kernel-patches/versions.conf names kernel-patches/$kernel_series for $KERNEL, which does not exist"
}
select_kernel
is_default_kernel() { [ "$KERNEL" = "$default_kernel" ]; }

# Run a long command quietly into LOG; on failure show the end of the log.
run_logged() {
	local log=$1; shift
	if [ "$V" = 1 ]; then "$@" 2>&1 | tee -a "$log"; return "${PIPESTATUS[0]}"; fi
	if ! "$@" >>"$log" 2>&1; then
		echo "---- last lines of $log ----" >&2
		grep -E 'error|Error|ERROR' "$log" | tail -n 15 >&2 || true
		tail -n 25 "$log" >&2
		return 1
	fi
}

git_tree() { git -C "$tree" -c user.name=bpfuml -c user.email=bpfuml@localhost "$@"; }

# ---------------------------------------------------------------------------
# Source: a git repository per source "slot", whose ref bpfuml-pristine is the
# unpatched source.  Patched trees are commits on top of it, so switching patch
# sets rewrites only the files that differ and the kernel rebuilds incrementally.

debian_mirror() {
	if [ -n "${DEBIAN_MIRROR:-}" ]; then echo "$DEBIAN_MIRROR"; return; fi
	local m
	m=$(awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
	[ -n "$m" ] || m=$(awk '/^deb / && $0 ~ /debian/ && $0 !~ /security/ {for (i=2;i<=NF;i++) if ($i ~ /^http/) {print $i; exit}}' /etc/apt/sources.list 2>/dev/null || true)
	echo "${m:-http://deb.debian.org/debian}"
}

# The security archive (the *-security suites), which debian_mirror() skips.
debian_security_mirror() {
	if [ -n "${DEBIAN_SECURITY_MIRROR:-}" ]; then echo "$DEBIAN_SECURITY_MIRROR"; return; fi
	local m
	m=$(awk '/^URIs:/ && $2 ~ /security/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
	echo "${m:-http://deb.debian.org/debian-security}"
}

suite_mirror() {
	case $kernel_suite in *-security) debian_security_mirror ;; *) debian_mirror ;; esac
}

# apt with its own sources list, state and cache under the cache dir, one per
# suite: the system's sources and package state are never read or changed.
private_apt() {
	local tool=$1; shift
	local d=$cache/apt/$kernel_suite
	"$tool" -q -o Dir::Etc::SourceList="$d/etc/sources.list" \
		-o Dir::Etc::SourceParts="$d/etc/sources.list.d" \
		-o Dir::Etc::PreferencesParts="$d/etc/preferences.d" \
		-o Dir::Etc::Preferences="$d/etc/preferences" \
		-o Dir::State="$d/state" -o Dir::State::status="$d/state/status" \
		-o Dir::Cache="$d/cache" -o APT::Sandbox::User="$(id -un)" \
		-o Debug::NoLocking=1 "$@"
}

fetch_deb() {
	local d=$cache/apt/$kernel_suite deb
	deb=$cache/debs/${KERNEL_PACKAGE}_${KERNEL_VERSION}_all.deb
	if [ -f "$deb" ]; then echo "$deb"; return; fi
	# A pinned version that has left the archive was replaced once before.
	if [ -f "$deb.replaced-by" ] && [ -f "$(cat "$deb.replaced-by")" ]; then cat "$deb.replaced-by"; return; fi
	mkdir -p "$d"/etc/sources.list.d "$d"/etc/preferences.d "$d"/state/lists/partial \
		"$d"/cache/archives/partial "$cache/debs"
	touch "$d/state/status" "$d/etc/preferences"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $(suite_mirror) $kernel_suite main" \
		>"$d/etc/sources.list"
	say FETCH "$KERNEL_PACKAGE=$KERNEL_VERSION from $kernel_suite (private apt state in $d, ~170 MB)" >&2
	private_apt apt-get update >"$d/update.log" 2>&1 ||
		die "apt-get update of the private $kernel_suite list failed (log: $d/update.log); offline? use KERNEL_DEB=/path/to/${KERNEL_PACKAGE}_*.deb"
	local version=$KERNEL_VERSION available
	available=$(private_apt apt-cache madison "$KERNEL_PACKAGE" | awk -F'|' '{gsub(/ /,"",$2); print $2}')
	[ -n "$available" ] || die "$KERNEL_PACKAGE is not in $kernel_suite; use KERNEL_DEB= or KERNEL_SRC="
	if ! grep -qxF "$KERNEL_VERSION" <<<"$available"; then
		version=$(head -n1 <<<"$available")
		echo "bpfuml: warning: $KERNEL_PACKAGE $KERNEL_VERSION is gone from $kernel_suite;" \
			"using $version (pin it in kernel-patches/versions.conf)" >&2
	fi
	(cd "$cache/debs" && private_apt apt-get download "$KERNEL_PACKAGE=$version" >"$d/download.log" 2>&1) ||
		die "downloading $KERNEL_PACKAGE=$version failed (log: $d/download.log)"
	local got=$cache/debs/${KERNEL_PACKAGE}_${version}_all.deb
	[ -f "$got" ] || die "apt-get download did not produce $got (log: $d/download.log)"
	[ "$version" = "$KERNEL_VERSION" ] || echo "$got" >"$deb.replaced-by"
	echo "$got"
}

# Import a plain directory into the slot's git repo as the pristine source.
commit_pristine() {
	local message=$1
	git_tree add -Af . >/dev/null
	if ! git_tree rev-parse -q --verify bpfuml-pristine >/dev/null ||
		[ "$(git_tree write-tree)" != "$(git_tree rev-parse 'bpfuml-pristine^{tree}')" ]; then
		git_tree commit -q --allow-empty -m "$message" --no-verify
		git_tree tag -f bpfuml-pristine >/dev/null
	fi
}

init_slot_repo() {
	mkdir -p "$tree"
	[ -d "$tree/.git" ] && return
	git init -q "$tree"
	git_tree config core.looseCompression 1
	git_tree config gc.auto 0
}

prepare_source() {
	if [ -n "${KERNEL_SRC:-}" ]; then
		local src
		src=$(cd "$KERNEL_SRC" 2>/dev/null && pwd) || die "KERNEL_SRC=$KERNEL_SRC is not a directory"
		[ -f "$src/Makefile" ] && [ -d "$src/kernel/bpf" ] || die "KERNEL_SRC=$src does not look like a kernel tree"
		slot=src-$(printf '%s' "$src" | sha256sum | cut -c1-12)
		tree=$cache/trees/$slot/linux
		init_slot_repo
		# Copy what git would track: the tree's .gitignore files keep build
		# output out.  Timestamps are kept, so edited files rebuild.
		say IMPORT "$src (rsync into the cache)"
		rsync -a --delete --exclude=/.git --filter=':- .gitignore' "$src/" "$tree/"
		commit_pristine "pristine: $src $(git -C "$src" describe --always --dirty 2>/dev/null || true)"
		source_desc="tree $src ($(git -C "$src" describe --always --dirty 2>/dev/null || echo 'not a git tree'))"
		source_id="tree $(git_tree rev-parse 'bpfuml-pristine^{tree}')"
	else
		local deb version
		if [ -n "${KERNEL_DEB:-}" ]; then
			[ -f "$KERNEL_DEB" ] || die "KERNEL_DEB=$KERNEL_DEB: no such file"
			deb=$(cd "$(dirname "$KERNEL_DEB")" && pwd)/$(basename "$KERNEL_DEB")
		else
			deb=$(fetch_deb)
		fi
		version=$(dpkg-deb -f "$deb" Version) || die "$deb is not a Debian package"
		local package
		package=$(dpkg-deb -f "$deb" Package)
		slot=deb-$package-$version
		tree=$cache/trees/$slot/linux
		if ! git -C "$tree" rev-parse -q --verify bpfuml-pristine >/dev/null 2>&1; then
			say EXTRACT "$(basename "$deb") (~30 s, once)"
			rm -rf "$tree"
			init_slot_repo
			dpkg-deb --fsys-tarfile "$deb" | tar -xO --wildcards './usr/src/linux-source-*.tar.xz' |
				tar -xJ -C "$tree" --strip-components=1
			commit_pristine "pristine: $package $version"
		fi
		source_desc="$package $version"
		source_id="deb $package $version"
	fi
	pristine=$(git_tree rev-parse 'bpfuml-pristine^{tree}')
}

# ---------------------------------------------------------------------------
# Patches: applied to a scratch index first, so a patch that fails leaves the
# work tree untouched; then the work tree is moved to the result.

series_patches() {
	local series=$top/kernel-patches/$kernel_series
	sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$series" | grep -v '^$' || true
}

show_rejected_hunks() {
	local patch=$1 index=$2 scratch files
	scratch=$(mktemp -d)
	mapfile -t files < <(git apply --numstat "$patch" 2>/dev/null | cut -f3)
	GIT_INDEX_FILE=$index git -C "$tree" checkout-index --prefix="$scratch/" -- "${files[@]}" 2>/dev/null || true
	(cd "$scratch" && git apply --reject --verbose "$patch" 2>&1 | grep -E 'Rejected|Applied|error' || true) >&2
	find "$scratch" -name '*.rej' -print0 | while IFS= read -r -d '' rej; do
		echo "---- rejected: ${rej#"$scratch"/} ----" >&2
		cat "$rej" >&2
	done
	rm -rf "$scratch"
}

apply_patches() {
	local index name patch applied=0
	index=$(mktemp)
	GIT_INDEX_FILE=$index git_tree read-tree bpfuml-pristine
	while read -r name; do
		patch=$top/kernel-patches/$name
		[ -f "$patch" ] || { rm -f "$index"; die "kernel-patches/$kernel_series lists $name, but kernel-patches/$name does not exist"; }
		if ! GIT_INDEX_FILE=$index git_tree apply --cached --whitespace=nowarn "$patch" 2>"$index.err"; then
			echo "bpfuml: kernel-patches/$name does not apply to $source_desc:" >&2
			cat "$index.err" >&2
			show_rejected_hunks "$patch" "$index"
			rm -f "$index" "$index.err"
			exit 1
		fi
		applied=$((applied + 1))
	done < <(series_patches)
	local patched commit
	patched=$(GIT_INDEX_FILE=$index git_tree write-tree)
	rm -f "$index" "$index.err"
	if [ "$(git_tree rev-parse -q --verify 'HEAD^{tree}' 2>/dev/null)" != "$patched" ]; then
		commit=$(git_tree commit-tree "$patched" -p bpfuml-pristine -m "bpfuml: $applied patch(es) from kernel-patches/$kernel_series")
		git_tree checkout -q -f --detach "$commit"
	fi
	say PATCH "$applied patch(es) from kernel-patches/$kernel_series applied"
}

# ---------------------------------------------------------------------------
# Config: defconfig + the selftests' config + uml-config/*.config (what every
# kernel carries) + uml-config/VERSION/*.config (what only that kernel
# does), merged in the order of their file names, checked.

collect_fragments() {
	local f dir=$top/uml-config
	[ "$TARGET" = qemu ] && dir=$top/uml-config/qemu-x86_64
	fragment_dirs="$(rel "$dir")/*.config"
	[ -d "$dir/$KERNEL" ] && fragment_dirs+=" + $(rel "$dir")/$KERNEL/*.config"
	mapfile -t fragments < <(
		for f in "$dir"/*.config "$dir/$KERNEL"/*.config; do
			[ -e "$f" ] && printf '%s\t%s\n' "${f##*/}" "$f"
		done | sort | cut -f2)
}

# Fragment paths relative to the repo, for messages and the manifest.
rel() { printf '%s' "${1#"$top"/}"; }

# The selftests' own fragments the kernel of TARGET starts from: config for
# both, config.vm (9p, virtio) for the QEMU guest as well.
selftest_fragments() {
	echo tools/testing/selftests/bpf/config
	[ "$TARGET" = qemu ] && echo tools/testing/selftests/bpf/config.vm
	return 0
}

configure() {
	local old=$out/.config.previous base=()
	[ -f "$out/.config" ] && cp -p "$out/.config" "$old"
	mapfile -t base < <(selftest_fragments)
	say CONFIG "ARCH=$karch $defconfig + ${base[*]} + $fragment_dirs"
	run_logged "$log" make -C "$tree" ARCH="$karch" O="$out" "$defconfig"
	run_logged "$log" "$tree/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" \
		"${base[@]/#/$tree/}" "${fragments[@]}"
	run_logged "$log" make -C "$tree" ARCH="$karch" O="$out" olddefconfig
	# An unchanged config keeps its timestamp, so make has nothing to redo.
	if [ -f "$old" ] && cmp -s "$old" "$out/.config"; then touch -r "$old" "$out/.config"; fi
	rm -f "$old"

	local labels=() strict=() f
	for f in "${base[@]}"; do labels+=("$f=$tree/$f"); done
	for f in "${fragments[@]}"; do
		labels+=("$(rel "$f")=$f")
		strict+=("$(rel "$f")")
	done
	if ! python3 "$top/scripts/check-config.py" --arch="$karch" "$tree" "$out/.config" "${strict[@]}" -- "${labels[@]}" \
		>"$out/config-report.txt"; then
		cat "$out/config-report.txt" >&2
		die "an option that $fragment_dirs asks for is not in the final .config of $KERNEL (reasons above)"
	fi
	local dropped
	dropped=$(awk '/^tools\/testing\/selftests\/bpf\/config:/ {print $2}' "$out/config-report.txt")
	[ -n "$dropped" ] && say CONFIG "$dropped option(s) of the selftests' config cannot be carried by ARCH=$karch ($out/config-report.txt)"
	return 0
}

# ---------------------------------------------------------------------------

build_all() {
	if [ -x "$out/linux" ]; then say KERNEL "rebuilding incrementally (log: $log)"
	elif is_default_kernel; then say KERNEL "building UML linux $KERNEL with BTF, then libbpf and bpftool (first build ~14 min on 2 cores; log: $log)"
	else say KERNEL "building UML linux $KERNEL with BTF (first build ~13 min on 2 cores; log: $log)"; fi
	local kv=()
	[ "$V" = 1 ] && kv=(V=1)
	run_logged "$log" make -C "$tree" ARCH=um O="$out" -j"$JOBS" "${kv[@]}" all ||
		die "kernel build failed (full log: $log)"
	# One loader for every kernel: the default kernel's libbpf and bpftool
	# (kernel-patches/design/kernel-matrix.md §5).
	is_default_kernel || return 0

	say LIBBPF "static libbpf from the same tree"
	mkdir -p "$out/libbpf"
	run_logged "$log" make -C "$tree/tools/lib/bpf" OUTPUT="$out/libbpf/" -j"$JOBS" "$out/libbpf/libbpf.a" ||
		die "libbpf build failed (full log: $log)"

	say BPFTOOL "bpftool from the same tree (~1 min the first time)"
	mkdir -p "$out/bpftool"
	run_logged "$log" make -C "$tree/tools/bpf/bpftool" OUTPUT="$out/bpftool/" -j"$JOBS" \
		VMLINUX_BTF="$out/vmlinux" CLANG="$CLANG" LLVM_STRIP="$LLVM_STRIP" SKIP_LLVM=1 SKIP_LIBBFD=1 ||
		die "bpftool build failed (full log: $log)"
}

install_artifacts() {
	local staging=$art.tmp
	rm -rf "$staging"
	mkdir -p "$staging"/{kernel,include}
	# Debug info is dropped from the booted binary (it only slows loading);
	# .BTF is an allocated section and stays.  The full vmlinux remains in
	# the build directory named in the manifest.
	strip --strip-debug -o "$staging/kernel/linux" "$out/linux"
	cp "$out/.config" "$staging/kernel/config"
	cp "$out/config-report.txt" "$staging/kernel/config-report.txt"
	if ! is_default_kernel; then
		[ -x "$BUILD_DIR/bin/bpftool" ] || die "the default kernel's bpftool ($BUILD_DIR/bin/bpftool) is missing: run make kernel first"
		"$BUILD_DIR/bin/bpftool" btf dump file "$staging/kernel/linux" format c >"$staging/include/vmlinux.h" ||
			die "generating vmlinux.h from the $KERNEL UML kernel's BTF failed"
		publish_artifacts "$staging" "UML kernel $KERNEL, vmlinux.h"
		return
	fi
	mkdir -p "$staging"/{lib,bin}
	cp "$out/bpftool/bpftool" "$staging/bin/bpftool"
	cp "$out/libbpf/libbpf.a" "$staging/lib/libbpf.a"
	run_logged "$log" make -C "$tree/tools/lib/bpf" OUTPUT="$out/libbpf/" DESTDIR="$staging" prefix= install_headers ||
		die "installing libbpf headers failed (full log: $log)"
	# The tree's BPF UAPI headers: the system's <linux/bpf.h> is older and
	# lacks e.g. BPF_MAP_TYPE_RHASH.  Only these, so that glibc's own
	# headers keep their matching <linux/*.h>.
	mkdir -p "$staging/include/linux"
	for h in bpf.h bpf_common.h btf.h if_link.h if_xdp.h netdev.h; do
		cp "$tree/tools/include/uapi/linux/$h" "$staging/include/linux/$h"
	done
	"$staging/bin/bpftool" btf dump file "$staging/kernel/linux" format c >"$staging/include/vmlinux.h" ||
		die "generating vmlinux.h from the UML kernel's BTF failed"
	publish_artifacts "$staging" "UML kernel $KERNEL, libbpf, bpftool, vmlinux.h"
}

# Write the manifest (what went into the artifacts) and publish the staging
# directory as $art: the rename makes it appear whole or not at all.
publish_artifacts() {
	local staging=$1 target=$2
	cat >"$staging/manifest" <<-EOF
	key: $key
	target: $target
	source: $source_desc
	source-tree: $pristine
	patched-tree: $(git_tree rev-parse 'HEAD^{tree}')
	patches: $(series_patches | tr '\n' ' ')
	config-fragments: $(selftest_fragments | tr '\n' ' ')$(for f in "${fragments[@]}"; do printf '%s ' "$(rel "$f")"; done)
	toolchain: $(toolchain_id | tr '\n' ';')
	tools-tree: $(git_tree rev-parse 'HEAD:tools')
	build-dir: $out
	built: $(date -u +%Y-%m-%dT%H:%M:%SZ)
	EOF
	key_inputs | sed 's/^/input: /' >>"$staging/manifest"
	rm -rf "$art"
	mv "$staging" "$art"
	touch "$art/.complete"
}

# Stable paths under build/.  Files that our own objects are compiled against
# are copied (fresh timestamps whenever the key changes, so make rebuilds what
# depends on them, even when switching back to an older cached key); the
# kernel directory is a link.
link_build_dir() {
	mkdir -p "$BUILD_DIR/kernels"
	ln -sfn "$art" "$BUILD_DIR/kernels/$KERNEL"
	if ! is_default_kernel; then
		touch "$art/.complete"
		return
	fi
	mkdir -p "$BUILD_DIR/bin" "$BUILD_DIR/include" "$BUILD_DIR/lib"
	ln -sfn "$art/kernel" "$BUILD_DIR/kernel"
	if [ "$(cat "$BUILD_DIR/.kernel-key" 2>/dev/null)" != "$key" ]; then
		rm -rf "$BUILD_DIR/include/bpf" "$BUILD_DIR/include/linux"
		cp -r "$art/include/bpf" "$art/include/linux" "$BUILD_DIR/include/"
		cp "$art/include/vmlinux.h" "$BUILD_DIR/include/vmlinux.h"
		cp "$art/lib/libbpf.a" "$BUILD_DIR/lib/libbpf.a"
		cp "$art/bin/bpftool" "$BUILD_DIR/bin/bpftool"
		cp "$art/manifest" "$BUILD_DIR/manifest"
		# The kernels the harness can boot (--kernel): harness/kernels.c.
		cp "$top/kernel-patches/versions.conf" "$BUILD_DIR/versions.conf"
		echo "$key" >"$BUILD_DIR/.kernel-key"
	fi
	touch "$art/.complete"
}

# The default kernel's UML artifacts are named by their key alone, its QEMU
# ones qemu-x86_64-KEY; another kernel's kernel-VERSION-KEY and
# qemu-x86_64-VERSION-KEY.  Each kernel and kind (uml, qemu: $1) keeps its
# own KEEP_ARTIFACTS most recently used.
artifact_name() {
	local prefix=
	[ "$1" = qemu ] && prefix=qemu-x86_64-
	if is_default_kernel; then echo "$prefix$2"
	else echo "${prefix:-kernel-}$KERNEL-$2"; fi
}

prune_artifacts() {
	local pattern hex16
	hex16=$(printf '[0-9a-f]%.0s' {1..16})
	pattern=$(artifact_name "$1" "$hex16")
	# $pattern is a glob; $cache is quoted, so its own blanks stay in one word.
	# shellcheck disable=SC2086
	"$top/scripts/prune-artifacts.sh" "$KEEP_ARTIFACTS" "$cache"/artifacts/$pattern
}

toolchain_id() {
	gcc -dumpfullversion
	ld --version | head -n1
	pahole --version
	"$CLANG" --version | head -n1
}

# What the key is made of, one line each: the source (a Debian package is
# named by its version, so the key needs no download; another tree by its
# git tree id), each patch, each config fragment and build script by
# content, and the toolchain.  The manifest keeps these lines, so that a
# refused import can say which input differs.
key_inputs() {
	local f name digest
	echo "kernel $KERNEL $kernel_modes"
	echo "source $source_id"
	[ "$TARGET" = qemu ] && echo "target qemu"
	while read -r name; do
		f=$top/kernel-patches/$name
		digest=missing
		[ ! -f "$f" ] || digest=$(sha256sum <"$f" | cut -c1-16)
		echo "patch $name $digest"
	done < <(series_patches)
	for f in "${fragments[@]}"; do echo "fragment $(rel "$f") $(sha256sum <"$f" | cut -c1-16)"; done
	toolchain_id | sed 's/^/toolchain /'
	for f in scripts/build-kernel.sh scripts/check-config.py kernel-patches/versions.conf; do
		echo "script $f $(sha256sum <"$top/$f" | cut -c1-16)"
	done
}

compute_key() { key_inputs | sha256sum | cut -c1-16; }

# The source's identity without unpacking it: the pinned package (or
# KERNEL_DEB) by name and version; a KERNEL_SRC tree by its imported git
# tree, which only prepare_source knows.
pinned_source_id() {
	local deb=$cache/debs/${KERNEL_PACKAGE}_${KERNEL_VERSION}_all.deb
	if [ -n "${KERNEL_DEB:-}" ]; then
		[ -f "$KERNEL_DEB" ] || die "KERNEL_DEB=$KERNEL_DEB: no such file"
		echo "deb $(dpkg-deb -f "$KERNEL_DEB" Package) $(dpkg-deb -f "$KERNEL_DEB" Version)"
	elif [ -f "$deb.replaced-by" ] && [ -f "$(cat "$deb.replaced-by")" ]; then
		deb=$(cat "$deb.replaced-by")
		echo "deb $(dpkg-deb -f "$deb" Package) $(dpkg-deb -f "$deb" Version)"
	else
		echo "deb $KERNEL_PACKAGE $KERNEL_VERSION"
	fi
}

# A kernel already in the cache (a UML one also from BPFUML_ARTIFACTS) is
# linked without the lock and without the source: finding its key reads no tree,
# and an artifact is published whole by a rename.  `./run.sh verify` then
# never waits for an unrelated build (nor `--backend qemu` for a UML
# one), and a CI job that
# restored the cache or was handed a `make dist` file never fetches the
# kernel source.
cached_or_imported() {
	case $TARGET in uml | qemu) ;; *) return 1 ;; esac
	[ -z "${KERNEL_SRC:-}" ] && [ "${KERNEL_REBUILD:-0}" != 1 ] || return 1
	source_id=$(pinned_source_id)
	collect_fragments
	key=$(compute_key)
	if [ "$TARGET" = qemu ]; then
		art=$cache/artifacts/$(artifact_name qemu "$key")
		[ -f "$art/.complete" ] || return 1
		link_qemu
		return 0
	fi
	art=$cache/artifacts/$(artifact_name uml "$key")
	if [ ! -f "$art/.complete" ] && [ -n "${BPFUML_ARTIFACTS:-}" ] && is_default_kernel; then
		"$top/scripts/kernel-dist.sh" import "$BPFUML_ARTIFACTS" "$key" <(key_inputs) || exit
	fi
	[ -f "$art/.complete" ] || return 1
	link_build_dir
}

main() {
	if [ "$TARGET" = cached ]; then
		TARGET=uml
		cached_or_imported || true
		return
	fi
	if [ "$TARGET" = key ]; then
		TARGET=uml
		source_id=$(pinned_source_id)
		[ -z "${KERNEL_SRC:-}" ] || die "the key of a KERNEL_SRC tree needs the tree imported: run make kernel"
		collect_fragments
		compute_key
		return
	fi
	if [ "$TARGET" != prune ] && cached_or_imported; then
		[ "$V" = 1 ] && say CACHED "$art"
		exit 0
	fi
	mkdir -p "$cache/trees" "$cache/artifacts"
	exec 9>"$cache/lock"
	if ! flock -n 9; then
		say WAIT "another bpfuml build holds $cache/lock"
		flock 9
	fi
	if [ "$TARGET" = prune ]; then
		for KERNEL in $(awk '!/^#/ && NF {print $1}' "$top/kernel-patches/versions.conf"); do
			prune_artifacts uml
			prune_artifacts qemu
		done
		return
	fi
	prepare_source
	collect_fragments
	key=$(compute_key)
	if [ "$TARGET" = qemu ]; then
		main_qemu
		return
	fi
	art=$cache/artifacts/$(artifact_name uml "$key")
	if [ -f "$art/.complete" ] && [ "${KERNEL_REBUILD:-0}" != 1 ]; then
		link_build_dir
		[ "$V" = 1 ] && say CACHED "$art"
		exit 0
	fi
	is_default_kernel || [ -x "$BUILD_DIR/bin/bpftool" ] ||
		die "kernel $KERNEL needs the default kernel's bpftool and libbpf ($BUILD_DIR/bin/bpftool): run make kernel first"
	out=$cache/trees/$slot/build
	log=$out/build.log
	karch=um defconfig=defconfig
	mkdir -p "$out"
	: >"$log"
	say SOURCE "$source_desc (cache: $cache/trees/$slot)"
	apply_patches
	configure
	build_all
	install_artifacts
	link_build_dir
	prune_artifacts uml
	say DONE "artifacts in $art, linked from $BUILD_DIR"
}

# ---------------------------------------------------------------------------
# The x86_64 reference kernel: same slot, same patched work tree, its own O=
# directory beside the UML one.  Artifacts: bzImage, config, the x86_64 BTF as
# vmlinux.h; build/qemu links to them.

build_qemu() {
	local started=$SECONDS kv=()
	[ "$V" = 1 ] && kv=(V=1)
	if [ -f "$out/arch/x86/boot/bzImage" ]; then say KERNEL "rebuilding the x86_64 bzImage incrementally (log: $log)"
	else say KERNEL "building the x86_64 bzImage with BTF and the JIT: ~20 min on 2 cores the first time, once per kernel source/patches/config (log: $log)"; fi
	run_logged "$log" make -C "$tree" ARCH=x86_64 O="$out" -j"$JOBS" "${kv[@]}" bzImage ||
		die "x86_64 kernel build failed (full log: $log)"
	say KERNEL "x86_64 bzImage built in $(((SECONDS - started) / 60)) min $(((SECONDS - started) % 60)) s"
}

install_qemu_artifacts() {
	local staging=$art.tmp bpftool=$cache/trees/$slot/build/bpftool/bpftool
	rm -rf "$staging"
	mkdir -p "$staging"
	cp "$out/arch/x86/boot/bzImage" "$staging/bzImage"
	cp "$out/.config" "$staging/config"
	cp "$out/config-report.txt" "$staging/config-report.txt"
	# x86_64's own types, for objects that must match the reference kernel.
	[ -x "$bpftool" ] || bpftool=$BUILD_DIR/bin/bpftool
	if [ -x "$bpftool" ]; then
		"$bpftool" btf dump file "$out/vmlinux" format c >"$staging/vmlinux.h" ||
			die "generating vmlinux.h from the x86_64 kernel's BTF failed"
	fi
	publish_artifacts "$staging" "x86_64 bzImage for --backend qemu"
}

# The default kernel's reference is build/qemu, another's build/kernels/VERSION-qemu.
link_qemu() {
	if is_default_kernel; then
		mkdir -p "$BUILD_DIR"
		ln -sfn "$art" "$BUILD_DIR/qemu"
	else
		mkdir -p "$BUILD_DIR/kernels"
		ln -sfn "$art" "$BUILD_DIR/kernels/$KERNEL-qemu"
	fi
}

main_qemu() {
	art=$cache/artifacts/$(artifact_name qemu "$key")
	if [ ! -f "$art/.complete" ]; then
		out=$cache/trees/$slot/build-x86_64
		log=$out/build.log
		karch=x86_64 defconfig=x86_64_defconfig
		mkdir -p "$out"
		: >"$log"
		say SOURCE "$source_desc (cache: $cache/trees/$slot)"
		apply_patches
		configure
		build_qemu
		install_qemu_artifacts
		prune_artifacts qemu
		say DONE "x86_64 artifacts in $art, linked from $BUILD_DIR"
	elif [ "$V" = 1 ]; then
		say CACHED "$art"
	fi
	link_qemu
	touch "$art/.complete"
}

main "$@"; exit $?
