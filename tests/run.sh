#!/usr/bin/env bash
# run.sh — `make test`: bpfuml's tests, ending with one "N passed, N failed" line.
# usage: tests/run.sh BUILD_DIR
# The --backend qemu tests run when build/qemu/bzImage exists; with
# BPFUML_QEMU_TESTS=1 its kernel is built first (make qemu-kernel, ~20 min once).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
if [ "${BPFUML_QEMU_TESTS:-}" = 1 ]; then
	make -C "$top" --no-print-directory qemu-kernel || exit 1
fi
exec python3 "$top/tests/run_tests.py" "${1:-build}"
