#!/usr/bin/env bash
# run.sh — bpfuml's entry: build what is missing (quietly when nothing is),
# then run build/bin/bpfuml with the given arguments.
#   ./run.sh verify prog.bpf.o      ./run.sh help
set -euo pipefail
# One fork for the directory (no dirname): the check below is counted in
# milliseconds, and each fork and exec costs about one.
case $0 in */*) top=$(cd "${0%/*}" && pwd) ;; *) top=$(pwd) ;; esac
stamp=$top/build/.run-stamp

# The toolchain's binaries, looked up in PATH with builtins (no `type -P`
# in a command substitution: a fork).
toolchain=
IFS=: read -ra dirs <<<"$PATH"
for tool in gcc clang-19; do
	for d in "${dirs[@]}"; do
		if [ -x "${d:-.}/$tool" ]; then toolchain+=" ${d:-.}/$tool"; break; fi
	done
done

# What `make all` is made from, one line per file (path, size, mtime; the
# toolchain's binaries through their links), and the variables the Makefile
# reads.  When it equals the stamp of the last successful make and the
# outputs exist, nothing needs building and make (~1.5 s with its kernel and
# package checks) is not run at all.  One find and builtins: a check costs
# milliseconds.
inputs() {
	find -H "$top/Makefile" "$top/harness" "$top/scripts" "$top/kernel-patches" "$top/uml-config" \
		"$top/progs" "$top/tests/progs" "$top/tests/smoke" "$top/tests/rhash" "$top/tests/unit" \
		"$top/tests/fuzz" "$top/tests/kselftest/DENYLIST.uml" $toolchain \
		-printf '%p %s %T@\n' 2>/dev/null
	printf '%s\n' "KERNEL_PACKAGE=${KERNEL_PACKAGE-}" "KERNEL_VERSION=${KERNEL_VERSION-}" \
		"KERNEL_SRC=${KERNEL_SRC-}" "KERNEL_DEB=${KERNEL_DEB-}" "BPFUML_CACHE=${BPFUML_CACHE-}" \
		"BPFUML_ARTIFACTS=${BPFUML_ARTIFACTS-}" "BPFUML_KERNEL=${BPFUML_KERNEL-}" "KERNEL=${KERNEL-}" \
		"CC=${CC-}" "CFLAGS=${CFLAGS-}" "CLANG=${CLANG-}" "V=${V-}"
}
fresh() {
	local now before=
	[ -x "$top/build/bin/bpfuml" ] && [ -x "$top/build/bin/bpfuml-agent" ] &&
		[ -e "$top/build/kernel/linux" ] && [ -f "$stamp" ] || return 1
	now=$(inputs)
	IFS= read -r -d '' before <"$stamp" || true
	[ "$now" = "${before%$'\n'}" ]
}

if ! fresh; then
	# The stamp is of the inputs as make saw them: taken before it runs.
	id=$(inputs)
	# Build output goes to stderr so that `--json` keeps stdout to itself.
	if ! make -C "$top" --no-print-directory -s all >&2; then
		echo "run.sh: the build failed (above); fix it, or run 'make V=1' for details" >&2
		exit 3
	fi
	printf '%s\n' "$id" >"$stamp"
fi
# kselftest needs the kernel's BPF selftests built for UML (~4 min once).
if [ "${1:-}" = kselftest ] && ! make -C "$top" --no-print-directory -s kselftest-build >&2; then
	echo "run.sh: building the BPF selftests failed (above); run 'make kselftest-build V=1'" >&2
	exit 3
fi
# --kernel V, --kernels V,W|all (kernels of kernel-patches/versions.conf)
# and --backend qemu (the x86_64 reference kernel) are built here on first
# use (make says how long), a cache hit afterwards.
prev= kernel=${BPFUML_KERNEL-} kernels= qemu=
for a in "$@"; do
	[ "$a" = -- ] && break
	case $prev/$a in
	*/--kernel=*) kernel=${a#--kernel=} ;;
	--kernel/*) kernel=$a ;;
	*/--kernels=*) kernels=${a#--kernels=} ;;
	--kernels/*) kernels=$a ;;
	*/--backend=qemu | --backend/qemu) qemu=1 ;;
	esac
	prev=$a
done
# Each one versions.conf has and build/kernels/ lacks: the harness explains
# any other.
while read -r v _; do
	case $v in '' | '#'*) continue ;; esac
	case ",$kernel,$kernels," in *",$v,"* | *,all,*) ;; *) continue ;; esac
	[ -e "$top/build/kernels/$v/kernel/linux" ] && continue
	if ! make -C "$top" --no-print-directory -s kernel KERNEL="$v" >&2; then
		echo "run.sh: building kernel $v failed (above); run 'make kernel KERNEL=$v V=1'" >&2
		exit 3
	fi
done <"$top/kernel-patches/versions.conf"
if [ -n "$qemu" ] && ! make -C "$top" --no-print-directory -s qemu-kernel ${kernel:+KERNEL="$kernel"} >&2; then
	echo "run.sh: building the x86_64 reference kernel failed (above); run 'make qemu-kernel${kernel:+ KERNEL=$kernel} V=1'" >&2
	exit 3
fi
exec "$top/build/bin/bpfuml" "$@"
