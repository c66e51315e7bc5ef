#!/usr/bin/env bash
# run.sh — boot the built UML with a guest program as init and check its verdict.
# usage: tests/smoke/run.sh BUILD_DIR [GUEST OBJECT [GUEST_ARGS...]]
#   GUEST      a guest program built into BUILD_DIR/tests (default rhash_smoke)
#   OBJECT     its BPF object, relative to BUILD_DIR/tests (default GUEST.bpf.o)
#   GUEST_ARGS more arguments for the guest, after OBJECT and RESULT_DIR
# The guest's result lines are printed prefixed "smoke: "; exit 0 when there
# is a PASS line and no FAIL line.  SMOKE_CONSOLE=FILE keeps UML's console log
# there (the caller scans it for kernel warnings); SMOKE_KERNEL_ARGS adds
# kernel parameters after the fixed ones (e.g. loglevel=5: "quiet" alone
# keeps WARN()'s KERN_WARNING lines off the console).
set -euo pipefail

build=$(cd "${1:-build}" && pwd)
name=${2:-rhash_smoke}
linux=$build/kernel/linux
guest=$build/tests/$name
object=$build/tests/${3:-$name.bpf.o}
shift $(( $# < 3 ? $# : 3 ))
objname=$(basename "$object")
for f in "$linux" "$guest" "$object"; do
	[ -e "$f" ] || { echo "smoke: $f is missing; run make first" >&2; exit 2; }
done

# /dev/shm: UML's memory file lives in TMPDIR and wants tmpfs.
shm=/dev/shm; [ -d "$shm" ] && [ -w "$shm" ] || shm=${TMPDIR:-/tmp}
run=$(mktemp -d "$shm/bpfuml-smoke.XXXXXX")
umid=bpfuml-smoke-$$
cleanup() {
	# A UML that is still alive is killed with its whole process group.
	[ -n "${uml_pid:-}" ] && kill -KILL -- "-$uml_pid" 2>/dev/null || true
	[ -n "${SMOKE_CONSOLE:-}" ] && [ -e "$run/console.log" ] && cp "$run/console.log" "$SMOKE_CONSOLE"
	rm -rf "$run"
}
trap cleanup EXIT

cp "$object" "$run/$objname"

# UML keeps its memory file in TMPDIR and its instance dir in uml_dir.
start=$(date +%s%N)
setsid env TMPDIR="$run" "$linux" mem=128M umid="$umid" uml_dir="$run" \
	root=/dev/root rootfstype=hostfs rootflags=/ ro \
	con=null con0=null,fd:1 quiet lpj=20000000 \
	${SMOKE_KERNEL_ARGS:-} init="$guest" -- "$objname" "$run" "$@" </dev/null >"$run/console.log" 2>&1 &
uml_pid=$!
# The watchdog kills the whole UML session if it outlives SMOKE_TIMEOUT s (60).
( trap 'kill "$nap" 2>/dev/null; exit 0' TERM
  sleep ${SMOKE_TIMEOUT:-60} & nap=$!; wait "$nap"; kill -KILL -- "-$uml_pid" 2>/dev/null ) &
watchdog=$!
wait "$uml_pid" || true
if ! kill "$watchdog" 2>/dev/null; then
	echo "smoke: UML did not power off within ${SMOKE_TIMEOUT:-60} s; killed" >&2
	tail -n 30 "$run/console.log" >&2
	exit 1
fi
uml_pid=
ms=$(( ($(date +%s%N) - start) / 1000000 ))

if [ ! -s "$run/result" ]; then
	echo "smoke: the guest wrote no result; console:" >&2
	tail -n 30 "$run/console.log" >&2
	exit 1
fi
sed 's/^/smoke: /' "$run/result"
if grep -q '^PASS' "$run/result" && ! grep -q '^FAIL' "$run/result"; then
	echo "smoke: UML booted, ran and powered off in $ms ms"
	exit 0
fi
sed 's/^/  console: /' "$run/console.log" | tail -n 30 >&2
exit 1
