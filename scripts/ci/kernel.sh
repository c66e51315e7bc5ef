#!/usr/bin/env bash
# scripts/ci/kernel.sh DIST [selftests] — the kernel step: use the kernel
# dist DIST (restored from a CI cache) when it is this checkout's, else
# build the kernel (and the selftests, when asked) and write DIST for the
# cache to save.  Says source=imported or source=built (stdout, and
# $GITHUB_OUTPUT when set).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
dist=${1:?usage: kernel.sh DIST [selftests]}
selftests=${2:-}
[ -z "$selftests" ] || [ "$selftests" = selftests ] || { echo "kernel.sh: the second argument is 'selftests' or nothing" >&2; exit 2; }
dist=$(realpath -m "$dist")

# DIST is used when it is a dist of this checkout's kernel, with the
# selftests when they are needed; otherwise it is stale and rebuilt.
usable() {
	"$top/scripts/kernel-dist.sh" check "$dist" "$(make -s -C "$top" --no-print-directory kernel-key)" \
		${selftests:+selftests}
}

targets=(all)
[ -z "$selftests" ] || targets+=(kselftest-build)
if usable; then
	source=imported
	BPFUML_ARTIFACTS=$dist make -s -C "$top" --no-print-directory "${targets[@]}"
else
	source=built
	[ ! -f "$dist" ] || echo "kernel.sh: $dist is of another kernel (or lacks the selftests); building" >&2
	make -s -C "$top" --no-print-directory "${targets[@]}"
	make -s -C "$top" --no-print-directory dist DIST="$dist"
fi
echo "source=$source"
[ -z "${GITHUB_OUTPUT:-}" ] || echo "source=$source" >>"$GITHUB_OUTPUT"
