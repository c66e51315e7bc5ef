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
exec "$top/build/bin/bpfuml" "$@"
