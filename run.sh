#!/usr/bin/env bash
# run.sh — bpfuml's entry: build what is missing (quietly when nothing is),
# then run build/bin/bpfuml with the given arguments.
#   ./run.sh verify prog.bpf.o      ./run.sh help
set -euo pipefail
top=$(cd "$(dirname "$0")" && pwd)

# Build output goes to stderr so that `--json` keeps stdout to itself.
if ! make -C "$top" --no-print-directory -s all >&2; then
	echo "run.sh: the build failed (above); fix it, or run 'make V=1' for details" >&2
	exit 3
fi
# kselftest needs the kernel's BPF selftests built for UML (~30 min once).
if [ "${1:-}" = kselftest ] && ! make -C "$top" --no-print-directory -s kselftest-build >&2; then
	echo "run.sh: building the BPF selftests failed (above); run 'make kselftest-build V=1'" >&2
	exit 3
fi
# --backend qemu needs the x86_64 reference kernel: built here on first use
# (make qemu-kernel says how long), a cache hit afterwards.
prev=
for a in "$@"; do
	if [ "$a" = --backend=qemu ] || { [ "$prev" = --backend ] && [ "$a" = qemu ]; }; then
		if ! make -C "$top" --no-print-directory -s qemu-kernel >&2; then
			echo "run.sh: building the x86_64 reference kernel failed (above); run 'make qemu-kernel V=1'" >&2
			exit 3
		fi
		break
	fi
	prev=$a
done
exec "$top/build/bin/bpfuml" "$@"
