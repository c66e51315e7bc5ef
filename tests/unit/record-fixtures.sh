#!/usr/bin/env bash
# record-fixtures.sh — re-record the verifier logs and the guest output
# (selftest runners, consoles) under tests/unit/fixtures/ from the real UML
# 7.3 kernel, through the harness.
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

# The fixtures of test_parsers.c: what the selftest runners, a guest's console
# and a crashing test_progs print, recorded from real guests.
selftests=$top/build/selftests/bpf
in_guest() {	# in_guest OUT SHELL-COMMAND: run it in a guest, in the selftests' directory
	local out=$1; shift
	"$bpfuml" exec --timeout 600 -- /bin/sh -c "cd $selftests && $1" >"$out/$2" 2>&1 || true
	echo "recorded $2 ($(wc -c <"$out/$2") bytes)"
}
# Tests that pass, have subtests, skip a subtest and fail (on UML: arena
# atomics need a JIT, d_path and pkcs7 lack kernel pieces).
in_guest "$out" './test_progs -t atomics,tc_edt,btf_dump,ksyms_module,verify_pkcs7_sig,d_path,bpf_nf,xdp_bonding' \
	recorded-test_progs.out
# "Did not run the program" notes, and a failure with its explanation.
in_guest "$out" './test_verifier 100 145; ./test_verifier 450 470' recorded-test_verifier.out
# test_progs killed by SIGSEGV mid-run: its crash handler's lines.
in_guest "$out" '{ ./test_progs -t atomics,btf_dump,xdp_adjust_tail,bpf_loop & sleep 0.3; kill -SEGV $!; wait; }' \
	recorded-test_progs-crash.out

console() {	# console NAME [VERIFY-OPTION...]: a verify's console
	local name=$1 dir; shift
	dir=$("$bpfuml" verify --keep "$@" "$top/build/tests/progs/accepted.bpf.o" 2>&1 >/dev/null |
		sed -n "s/^bpfuml: run directory kept: //p" || true)
	cp "$dir/console.log" "$out/$name"
	rm -rf "$dir"
	echo "recorded $name ($(wc -c <"$out/$name") bytes)"
}
console recorded-console-verify.log
# The whole boot said (loglevel=8): not one line of it is trouble.
BPFUML_KERNEL_ARGS=loglevel=8 console recorded-console-verbose.log
console recorded-console-panic.log --test-fault panic
