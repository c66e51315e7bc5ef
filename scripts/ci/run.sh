#!/usr/bin/env bash
# scripts/ci/run.sh OUT COMMAND [ARG...] — the Action's run step: run a
# bpfuml command with every output a CI shows, into the directory OUT:
#   verify ARG...         annotations on stdout (--format github), OUT/verify.sarif,
#                         OUT/junit.xml
#   kselftest ARG...      OUT/kselftest.json (--json), OUT/junit.xml; ARG
#                         such as --shard 2/4 --baseline FILE
#   kselftest-merge PART.json...   the same, for the joined parts
#   test                  make test, its output in OUT/test.log
#   build                 make all kselftest-build (a matrix's first job: its
#                         kernel dist, with the selftests, is what the others restore)
# The Markdown summary goes to $GITHUB_STEP_SUMMARY when set, else
# OUT/summary.md.  Exits with the command's exit code (bpfuml's: 0 all
# good, 1 a program rejected or a test lost, 2 usage, 3 infrastructure),
# and says exit-code=N in $GITHUB_OUTPUT when set.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -ge 2 ] || { echo "usage: scripts/ci/run.sh OUT COMMAND [ARG...]" >&2; exit 2; }
out=$1 command=$2
shift 2
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
summary=${GITHUB_STEP_SUMMARY:-$out/summary.md}

case $command in
verify)
	"$top/run.sh" verify --format github --sarif "$out/verify.sarif" --junit "$out/junit.xml" \
		--summary "$summary" "$@"
	code=$? ;;
kselftest | kselftest-merge)
	"$top/run.sh" "$command" --json --junit "$out/junit.xml" --summary "$summary" "$@" >"$out/kselftest.json"
	code=$? ;;
test)
	make -C "$top" --no-print-directory test 2>&1 | tee "$out/test.log"
	code=$? ;;
build)
	make -s -C "$top" --no-print-directory all kselftest-build
	code=$? ;;
*)
	echo "scripts/ci/run.sh: COMMAND is verify, kselftest, kselftest-merge, test or build, not '$command'" >&2
	code=2 ;;
esac
[ -z "${GITHUB_OUTPUT:-}" ] || echo "exit-code=$code" >>"$GITHUB_OUTPUT"
exit "$code"
