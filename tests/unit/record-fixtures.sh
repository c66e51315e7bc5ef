#!/usr/bin/env bash
# record-fixtures.sh — re-record the verifier logs under tests/unit/fixtures/
# from the real UML 7.3 kernel, through the harness.
#
# Each example of progs/examples/ is verified (level 1, and the null-deref
# one also at level 2) and each program's log saved as
# recorded-<example>[-level2].log.  Run after a kernel change; review the diff.
# usage: tests/unit/record-fixtures.sh   (from the repo root, after make)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/tests/unit/fixtures
bpfuml=$top/build/bin/bpfuml

record() {
	local src=$1 name=$2; shift 2
	"$bpfuml" verify --json "$@" "$src" | python3 -c '
import json, sys
doc = json.load(sys.stdin)
for p in doc["programs"]:
    if p["log"]:
        sys.stdout.write(p["log"])
        break
' >"$out/$name.log" || true
	echo "recorded $name.log ($(wc -c <"$out/$name.log") bytes)"
}

for src in "$top"/progs/examples/*.bpf.c; do
	name=$(basename "$src" .bpf.c)
	# The limit example's log is ~100 MB: too large to keep.
	[ "$name" = limit_too_many_insns ] && continue
	record "$src" "recorded-$name"
done
record "$top/progs/examples/register_type_null_deref.bpf.c" recorded-register_type_null_deref-level2 --log-level 2
