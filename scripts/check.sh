#!/bin/bash
# check.sh NAME=COMMAND...: run each suite, keep going after a failure, add
# up the "N passed, N failed" line each one ends with, and end with the total.
# A suite whose NAME ends in '&' starts at once in the background (its own
# QEMU boot, say, beside the main one: much of a guest run is spent asleep);
# its output is shown, and counted, after the others.
set -uo pipefail
total_passed=0 total_failed=0 red=()
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# count NAME RC OUTPUT_FILE: add the suite's closing line to the totals.
count() {
	local name=$1 rc=$2 out=$3 line p f
	line=$(grep -aE '^[0-9]+ passed, [0-9]+ failed' "$out" | tail -1)
	p=$(echo "$line" | sed -n 's/^\([0-9]*\) passed.*/\1/p')
	f=$(echo "$line" | sed -n 's/^[0-9]* passed, \([0-9]*\) failed.*/\1/p')
	total_passed=$((total_passed + ${p:-0}))
	total_failed=$((total_failed + ${f:-0}))
	if [ "$rc" != 0 ]; then
		red+=("$name")
		# A suite that died before counting still counts as a failure.
		[ "${f:-0}" = 0 ] && total_failed=$((total_failed + 1))
	fi
}

background=()
for suite in "$@"; do
	name=${suite%%=*} cmd=${suite#*=}
	case "$name" in
	*'&')
		name=${name%'&'}
		echo "##### $name (in the background): $cmd"
		(bash -c "$cmd" >"$tmp/$name.out" 2>&1; echo $? >"$tmp/$name.rc") &
		background+=("$name")
		;;
	esac
done

for suite in "$@"; do
	name=${suite%%=*} cmd=${suite#*=}
	case "$name" in *'&') continue ;; esac
	echo "##### $name: $cmd"
	bash -c "$cmd" 2>&1 | tee "$tmp/$name.out"
	count "$name" "${PIPESTATUS[0]}" "$tmp/$name.out"
done

wait
for name in "${background[@]}"; do
	echo "##### $name (ran in the background)"
	cat "$tmp/$name.out"
	count "$name" "$(cat "$tmp/$name.rc" 2>/dev/null || echo 1)" "$tmp/$name.out"
done

echo "#####"
[ "${#red[@]}" -gt 0 ] && echo "check: failed suites: ${red[*]}"
echo "$total_passed passed, $total_failed failed"
[ "${#red[@]}" = 0 ]
