#!/bin/bash
# make bench: the RX fast path with plenty of memory, patched against stock
# 6.1 in the same run.  BENCH_REPS (default 5) repetitions, alternating the
# kernels, of tests/bench/bench.sh in one guest: small-UDP packets per second
# and TCP throughput into e1000 and into virtio-net.  Writes build/bench/:
# results.tsv (every measurement), report.md (medians and the ratio
# patched/stock) and bench.png.  Under TCG only the ratios mean anything.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=${BENCH_OUT:-$top/build/bench}
reps=${BENCH_REPS:-5}
seconds=${BENCH_SECONDS:-5}
mkdir -p "$out"
declare -A image=(
	[patched]=$top/build/kernel/arch/x86/boot/bzImage
	[stock]=$top/build/kernel-stock/arch/x86/boot/bzImage
)

results=$out/results.tsv
# BENCH_REUSE=1: no boots, only the report again from the last results.tsv.
if [ "${BENCH_REUSE:-0}" = 1 ]; then
	[ -s "$results" ] || { echo "bench: no $results to reuse" >&2; exit 1; }
	reps=$(awk -F'\t' 'NR > 1 && $1 > r { r = $1 } END { print r + 0 }' "$results")
else
	printf 'rep\tkernel\tnic\ttest\tvalue\n' >"$results"
fi
for rep in $(seq "$reps"); do
	[ "${BENCH_REUSE:-0}" = 1 ] && break
	# Alternate which kernel goes first, so drift on the host hits both.
	order="patched stock"
	[ $((rep % 2)) = 0 ] && order="stock patched"
	for k in $order; do
		echo "bench: repetition $rep/$reps, $k kernel"
		"$top/tests/qemu/boot.sh" --mode script --script "$top/tests/bench/bench.sh" \
			--kernel "${image[$k]}" --timeout 600 --append "nr_bench_seconds=$seconds" \
			--log "$out/$k-$rep.log" >"$out/$k-$rep.out" 2>&1 ||
			echo "bench: the $k boot failed (see $out/$k-$rep.out)"
		grep -a '^nr-bench ' "$out/$k-$rep.log" | sed 's/\r$//' |
			awk -v r="$rep" -v k="$k" '{
				for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
				if (v["value"] != "") printf "%s\t%s\t%s\t%s\t%s\n", r, k, v["nic"], v["test"], v["value"]
			}' | tee -a "$results" | sed 's/^/bench:   /'
	done
done

report=$out/report.md
medians=$out/medians.tsv
# Median of each (kernel, nic, test), then the ratio.
awk -F'\t' 'NR > 1 { key = $3 "\t" $4; v[key, $2] = v[key, $2] " " $5; keys[key] = 1 }
	function median(list,    a, n, i, j, t) {
		n = split(list, a, " ")
		for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
		if (n == 0) return ""
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	# (max - min) / median: how far one repetition moves from the next.
	function spread(list,    a, n, i, lo, hi) {
		n = split(list, a, " ")
		if (n == 0) return "-"
		lo = hi = a[1] + 0
		for (i = 2; i <= n; i++) { if (a[i] + 0 < lo) lo = a[i] + 0; if (a[i] + 0 > hi) hi = a[i] + 0 }
		return sprintf("%.0f%%", 100 * (hi - lo) / median(list))
	}
	END {
		for (key in keys) {
			p = median(v[key, "patched"]); s = median(v[key, "stock"])
			printf "%s\t%s\t%s\t%s\t%s\t%s\n", key, p, s, (s > 0 && p != "") ? sprintf("%.3f", p / s) : "-",
				spread(v[key, "patched"]), spread(v[key, "stock"])
		}
	}' "$results" | sort >"$medians"

{
	echo "# RX fast path: patched against stock 6.1"
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) host CPUs, QEMU TCG, $reps repetitions of ${seconds} s"
	echo "per test, kernels alternating. Plenty of memory: the reserve is never used. Under TCG"
	echo "the absolute numbers are the emulator's; only the ratios mean anything."
	echo
	echo "| into | test | patched (median) | stock (median) | patched / stock | spread patched | spread stock |"
	echo "| --- | --- | --- | --- | --- | --- | --- |"
	awk -F'\t' '{ printf "| %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7 }' "$medians"
	echo
	echo "Spread: (largest - smallest) / median over the repetitions of one kernel. A ratio"
	echo "whose distance from 1 is well inside the spread is not a measured difference."
	echo
	echo "Every measurement: results.tsv."
} >"$report"

if command -v gnuplot >/dev/null; then
	gnuplot <<-PLOT
	set terminal pngcairo size 900,500 noenhanced
	set output '$out/bench.png'
	set title 'RX fast path, patched / stock 6.1 (median of $reps, TCG)'
	set style data histograms
	set style fill solid 0.6
	set yrange [0:1.2]
	set bmargin 4
	set ylabel 'patched / stock'
	set grid ytics
	set datafile separator '\t'
	plot '$medians' using 5:xtic(sprintf("%s\n%s", strcol(1), strcol(2))) title 'ratio', 1 with lines dt 2 title 'parity'
	PLOT
	echo "![bench](bench.png)" >>"$report"
fi
cat "$report"
echo "bench: report in $report"
