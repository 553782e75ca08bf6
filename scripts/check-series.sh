#!/bin/bash
# check-series.sh: what netdev's patchwork checks before a maintainer looks.
# 1. scripts/checkpatch.pl --strict on every patch of the series;
# 2. apply the patches one by one on the pristine source, in a worktree of
#    its own, and build after each, twice: the test kernel (the feature on,
#    with its debug hooks and KUnit) and the same kernel with
#    CONFIG_NET_RX_RESERVE=n; name the first that fails.  Each configuration
#    keeps its own output folder, so the rebuilds are incremental (and
#    ccache shares what both compile alike).
# CHECK_SERIES_CONFIGS="off" (or "on") builds in one configuration only:
# a patch that changes a header every file includes rebuilds most of the
# kernel, and on 2 cores both configurations take about two hours.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
tree=$top/build/linux
work=$top/build/series-check
out_on=$top/build/kernel-series
out_off=$top/build/kernel-series-off
fragments_on=("$top"/tests/config/{base,network,test}.config)
fragments_off=("$top"/tests/config/{base,network,feature-off}.config)
mapfile -t patches < <(grep -v -e '^#' -e '^[[:space:]]*$' "$top/series")

echo "check-series: checkpatch --strict on ${#patches[@]} patches"
bad=0
for p in "${patches[@]}"; do
	if "$tree/scripts/checkpatch.pl" --strict --quiet --no-tree \
		--ignore FILE_PATH_CHANGES "$top/$p" >"$top/build/checkpatch.out" 2>&1 \
		&& [ ! -s "$top/build/checkpatch.out" ]; then
		echo "    ok: checkpatch: $p"
	else
		echo "    FAIL: checkpatch: $p"
		sed 's/^/      /' "$top/build/checkpatch.out"
		bad=$((bad + 1))
	fi
done

echo "check-series: building after each patch in $work"
git -C "$tree" worktree remove -f "$work" >/dev/null 2>&1 || rm -rf "$work"
git -C "$tree" worktree prune
git -C "$tree" worktree add -q -f --detach "$work" pristine
built=0
first_bad=
for p in "${patches[@]}"; do
	if ! git -C "$work" am -q --committer-date-is-author-date "$top/$p"; then
		echo "    FAIL: build: $p does not apply"
		first_bad=$p
		break
	fi
	ok=1
	for conf in ${CHECK_SERIES_CONFIGS:-on off}; do
		if [ $conf = on ]; then
			out=$out_on fragments=("${fragments_on[@]}")
		else
			out=$out_off fragments=("${fragments_off[@]}")
		fi
		if ALLOW_UNKNOWN=1 "$top/scripts/build-kernel.sh" "$work" "$out" "${fragments[@]}" >"$out.log" 2>&1; then
			echo "    ok: build (feature $conf): $p"
		else
			echo "    FAIL: build (feature $conf): $p"
			grep -E 'error|Error' "$out.log" | head -10 | sed 's/^/      /'
			ok=0
		fi
	done
	if [ $ok = 1 ]; then
		built=$((built + 1))
	else
		first_bad=$p
		break
	fi
done
git -C "$tree" worktree remove -f "$work" >/dev/null 2>&1

passed=$(( ${#patches[@]} - bad + built ))
failed=$(( bad + (${#patches[@]} - built) ))
[ -n "$first_bad" ] && echo "check-series: the first patch that does not build is $first_bad"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
