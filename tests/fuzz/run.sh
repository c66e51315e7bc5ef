#!/usr/bin/env bash
# run.sh — `make fuzz`: each libFuzzer target for a fixed time, one at a time.
# usage: tests/fuzz/run.sh BUILD_DIR SECONDS NAME...
#
# Target NAME is BUILD_DIR/fuzz/fuzz_NAME.  Its corpus grows in
# BUILD_DIR/fuzz/corpus/NAME (kept between runs), seeded read-only from
# BUILD_DIR/fuzz/seeds/NAME; a crash, leak or hang is written to
# BUILD_DIR/fuzz/crashes/NAME/.  One line per target gives executions,
# coverage (libFuzzer's cov: and ft:), findings and slow units; the full output is in
# BUILD_DIR/fuzz/NAME.log.  Exit 1 if any target found something.
set -uo pipefail
build=$1 secs=$2
shift 2
found=0
for name in "$@"; do
	bin=$build/fuzz/fuzz_$name
	corpus=$build/fuzz/corpus/$name crashes=$build/fuzz/crashes/$name
	log=$build/fuzz/$name.log
	mkdir -p "$corpus" "$crashes"
	# Findings: crash-, leak-, timeout- and oom- files; slow-unit- files
	# (a unit over 10 s, easily a starved machine) are counted apart.
	findings() { find "$crashes" -type f ! -name 'slow-unit-*' | wc -l; }
	slow() { find "$crashes" -type f -name 'slow-unit-*' | wc -l; }
	before=$(findings) slow_before=$(slow)
	echo "  FUZZ    $name for $secs s (log: $log)"
	# -timeout: one input running 30 s is a hang worth keeping.
	"$bin" -max_total_time="$secs" -timeout=30 -print_final_stats=1 \
		-artifact_prefix="$crashes/" "$corpus" "$build/fuzz/seeds/$name" >"$log" 2>&1
	rc=$?
	after=$(findings) slow_after=$(slow)
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -n 1)
	printf '  %-8s %s executions, %s, corpus %s files, %d finding(s) new, %d slow unit(s) (rc %d)\n' \
		"$name" "${execs:-?}" "${cov:-cov: ? ft: ?}" "$(find "$corpus" -type f | wc -l)" \
		$((after - before)) $((slow_after - slow_before)) "$rc"
	if [ "$rc" != 0 ] || [ "$after" != "$before" ]; then
		found=1
		grep -m 3 -E 'ERROR|runtime error|SUMMARY' "$log" | sed 's/^/           /'
		ls -t "$crashes" | head -n 3 | sed "s|^|           $crashes/|"
	fi
done
exit $found
