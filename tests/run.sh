#!/usr/bin/env bash
# run.sh — run bpfuml's tests and print one summary line.
# usage: tests/run.sh BUILD_DIR
set -uo pipefail

build=${1:-build}
passed=0 failed=0
run_test() {
	local name=$1; shift
	echo "--- $name"
	if "$@"; then passed=$((passed + 1)); echo "ok   $name"
	else failed=$((failed + 1)); echo "FAIL $name"; fi
}

run_test smoke/rhash-syscall-prog tests/smoke/run.sh "$build"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
