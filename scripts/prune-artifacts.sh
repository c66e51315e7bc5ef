#!/usr/bin/env bash
# prune-artifacts.sh — keep the KEEP most recently used cached artifacts.
#
#   scripts/prune-artifacts.sh KEEP DIR...
#
# Each DIR is one artifact directory; it is complete when DIR/.complete
# exists, and its builder touches that file on every use.  Of the complete
# ones, all but the KEEP with the newest .complete are removed; incomplete
# ones (a build under way) are left alone.  Paths travel NUL-separated and
# quoted, never word-split: a cache directory such as "/home/a b/.cache"
# must lose only its own old artifacts.
set -euo pipefail

keep=${1:?usage: prune-artifacts.sh KEEP DIR...}
shift
case $keep in
'' | *[!0-9]*) echo "prune-artifacts.sh: KEEP must be a number, not '$keep'" >&2; exit 2 ;;
esac

complete=()
for d in "$@"; do
	if [ -f "$d/.complete" ]; then complete+=("$d/.complete"); fi
done
[ "${#complete[@]}" -gt "$keep" ] || exit 0

# Newest first ("SECONDS.FRACTION PATH"), then all after the first KEEP.
find "${complete[@]}" -maxdepth 0 -printf '%T@ %p\0' | sort -z -r -n | tail -z -n +$((keep + 1)) |
	while IFS= read -r -d '' entry; do
		file=${entry#* }
		rm -rf -- "${file%/.complete}"
	done
