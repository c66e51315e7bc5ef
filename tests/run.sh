#!/usr/bin/env bash
# run.sh — `make test`: bpfuml's tests, ending with one "N passed, N failed" line.
# usage: tests/run.sh BUILD_DIR
set -uo pipefail
exec python3 "$(dirname "$0")/run_tests.py" "${1:-build}"
