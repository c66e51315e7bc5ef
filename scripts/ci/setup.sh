#!/usr/bin/env bash
# scripts/ci/setup.sh COMMAND — the Action's first step (and any CI's):
# install the Debian packages bpfuml needs, then say what the kernel step
# will need, as KEY=VALUE lines on stdout and in $GITHUB_OUTPUT when set:
#   key=        the cache key of the kernel dist for this checkout (its
#               kernel key, and the selftests' script when COMMAND runs them)
#   selftests=  yes when COMMAND runs or builds the kernel's selftests
#               (kselftest, test, build)
#   dist=       where the kernel dist file goes ($RUNNER_TEMP or build/)
# Runs on Debian bookworm (a runner's `container: debian:bookworm`); as a
# user other than root, packages are installed with `sudo -n`.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
command=${1:-}
case $command in
verify | kselftest-merge) selftests=no ;;
kselftest | test | build) selftests=yes ;;
*) echo "setup.sh: COMMAND is verify, kselftest, kselftest-merge, test or build, not '$command'" >&2; exit 2 ;;
esac

if [ "$(id -u)" = 0 ]; then
	"$top/scripts/deps.sh"
elif ! "$top/scripts/deps.sh" 2>/dev/null; then
	sudo -n "$top/scripts/deps.sh" ||
		{ echo "setup.sh: installing packages needs root; run as root or allow sudo -n" >&2; exit 2; }
fi

key=$(make -s -C "$top" --no-print-directory kernel-key)
if [ "$selftests" = yes ]; then
	key+=-selftests-$(sha256sum <"$top/scripts/build-selftests.sh" | cut -c1-12)
fi
dist=${RUNNER_TEMP:-$top/build}/bpfuml-kernel.tar.gz
for line in "key=bpfuml-kernel-$key" "selftests=$selftests" "dist=$dist"; do
	echo "$line"
	[ -z "${GITHUB_OUTPUT:-}" ] || echo "$line" >>"$GITHUB_OUTPUT"
done
