#!/bin/bash
# check.sh NAME=COMMAND...: run each suite, keep going after a failure, add
# up the "N passed, N failed" line each one ends with, and end with the total.
set -uo pipefail
total_passed=0 total_failed=0 red=()
for suite in "$@"; do
	name=${suite%%=*} cmd=${suite#*=}
	echo "##### $name: $cmd"
	out=$(mktemp)
	bash -c "$cmd" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	line=$(grep -aE '^[0-9]+ passed, [0-9]+ failed' "$out" | tail -1)
	rm -f "$out"
	p=$(echo "$line" | sed -n 's/^\([0-9]*\) passed.*/\1/p')
	f=$(echo "$line" | sed -n 's/^[0-9]* passed, \([0-9]*\) failed.*/\1/p')
	total_passed=$((total_passed + ${p:-0}))
	total_failed=$((total_failed + ${f:-0}))
	if [ "$rc" != 0 ]; then
		red+=("$name")
		# A suite that died before counting still counts as a failure.
		[ "${f:-0}" = 0 ] && total_failed=$((total_failed + 1))
	fi
done
echo "#####"
[ "${#red[@]}" -gt 0 ] && echo "check: failed suites: ${red[*]}"
echo "$total_passed passed, $total_failed failed"
[ "${#red[@]}" = 0 ]
