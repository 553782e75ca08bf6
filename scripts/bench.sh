#!/bin/bash
# make bench: the RX fast path with plenty of memory, patched against stock
# 6.1 in the same run, both built as users build them (tests/config/
# bench.config: the feature on, its debug and test hooks off; make
# bench-kernels).  BENCH_REPS (default 5) repetitions of each part, the
# kernels alternating:
#
# 1. Instructions per received packet (scripts/icount-bench.sh): under
#    QEMU's -icount the guest clock counts instructions, so a busy or idle
#    host changes how many packets arrive but not what each costs.  UDP
#    datagrams from the host into e1000 and virtio-net, 92 and 1500 bytes
#    of IP.  build/bench/icount.tsv.
# 2. Throughput (tests/bench/bench.sh, one guest, SECONDS per test): small
#    UDP packets per second and TCP into each NIC.  TCG wall-clock numbers,
#    noisy (5-30% between repetitions): kept as a second table.
#    build/bench/results.tsv.
#
# report.md has both tables (medians, ratio patched/stock, spreads) and
# bench.png the instruction ratios.  BENCH_REUSE=1 only writes the report
# again from the last tsv files.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=${BENCH_OUT:-$top/build/bench}
reps=${BENCH_REPS:-5}
seconds=${BENCH_SECONDS:-5}
mkdir -p "$out"
declare -A image=(
	[patched]=$top/build/kernel-bench/arch/x86/boot/bzImage
	[stock]=$top/build/kernel-stock-bench/arch/x86/boot/bzImage
)

icount=$out/icount.tsv
if [ "${BENCH_REUSE:-0}" != 1 ]; then
	printf 'rep\tkernel\tnic\tip_len\tpackets\tdelivered\tinsn_per_packet\tsoak_share\n' >"$icount"
	for rep in $(seq "$reps"); do
		order="patched stock"
		[ $((rep % 2)) = 0 ] && order="stock patched"
		for k in $order; do
			echo "bench: instructions, repetition $rep/$reps, $k kernel"
			"$top/scripts/icount-bench.sh" "$k" "${image[$k]}" "$rep" "$icount" \
				"$out/icount-$k-$rep.log" >"$out/icount-$k-$rep.out" 2>&1 ||
				echo "bench: the $k boot failed (see $out/icount-$k-$rep.out)"
			awk -F'\t' -v r="$rep" -v k="$k" '$1 == r && $2 == k {
				printf "bench:   %s %s bytes: %s instructions a packet (%s packets)\n", $3, $4, $7, $5 }' "$icount"
		done
	done
fi

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
# summarize FILE KEY1 KEY2 VALUE: per (KEY1, KEY2) columns of FILE, the
# median of VALUE for each kernel, the ratio patched/stock of the medians,
# each kernel's spread ((max - min) / median) and the range of the ratios
# of repetition n's patched to repetition n's stock (booted one after the
# other).  Sorted lines: key1 key2 patched stock ratio spread_p spread_s
# ratio_lo ratio_hi.
summarize()
{
	awk -F'\t' -v k1="$2" -v k2="$3" -v vc="$4" '
	NR > 1 && $vc != "" {
		key = $k1 "\t" $k2; keys[key] = 1
		v[key, $2] = v[key, $2] " " $vc; by_rep[key, $2, $1] = $vc; reps[$1] = 1
	}
	function median(list,    a, n, i, j, t) {
		n = split(list, a, " ")
		for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
		if (n == 0) return ""
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	function spread(list,    a, n, i, lo, hi) {
		n = split(list, a, " ")
		if (n == 0) return "-"
		lo = hi = a[1] + 0
		for (i = 2; i <= n; i++) { if (a[i] + 0 < lo) lo = a[i] + 0; if (a[i] + 0 > hi) hi = a[i] + 0 }
		return sprintf("%.1f%%", 100 * (hi - lo) / median(list))
	}
	END {
		for (key in keys) {
			p = median(v[key, "patched"]); s = median(v[key, "stock"])
			lo = ""; hi = ""
			for (r in reps) {
				if (by_rep[key, "patched", r] == "" || by_rep[key, "stock", r] + 0 == 0) continue
				q = by_rep[key, "patched", r] / by_rep[key, "stock", r]
				if (lo == "" || q < lo) lo = q
				if (hi == "" || q > hi) hi = q
			}
			printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", key, p, s,
				(s > 0 && p != "") ? sprintf("%.4f", p / s) : "-",
				spread(v[key, "patched"]), spread(v[key, "stock"]),
				lo == "" ? "-" : sprintf("%.4f-%.4f", lo, hi)
		}
	}' "$1" | sort -k1,1 -k2,2n
}

icount_medians=$out/icount-medians.tsv
medians=$out/medians.tsv
summarize "$icount" 3 4 7 >"$icount_medians"
summarize "$results" 3 4 5 >"$medians"
icount_reps=$(awk -F'\t' 'NR > 1 && $1 > r { r = $1 } END { print r + 0 }' "$icount")

{
	echo "# RX fast path: patched against stock 6.1"
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) host CPUs. Both kernels built as users build"
	echo "them: tinyconfig + base, network and bench fragments (the feature on, no debug or"
	echo "test hooks; stock ignores the feature's options). Plenty of memory: the reserve is"
	echo "never used."
	echo
	echo "## Instructions per received packet (QEMU -icount)"
	echo
	echo "$icount_reps repetitions, kernels alternating. One vCPU under -icount shift=0: the"
	echo "guest's clock advances one nanosecond per instruction it executes, so the host's"
	echo "load changes how many packets arrive, not what each costs. The host sends UDP"
	echo "datagrams of the given IP length into one NIC (the other is down) faster than the"
	echo "guest takes them; nr-icount reads every one from a bound socket and subtracts what"
	echo "an idle-priority soak would have run had no packet come. So a packet's"
	echo "instructions are the driver's (IRQ, NAPI, refill), the stack's and the reader's"
	echo "recvmmsg."
	echo
	echo "| into | IP bytes | patched (median) | stock (median) | patched / stock | spread patched | spread stock | per-repetition ratios |"
	echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
	awk -F'\t' '{ printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7, $8 }' "$icount_medians"
	echo
	echo "Spread: (largest - smallest) / median over one kernel's repetitions. Per-repetition"
	echo "ratios: repetition n's patched over repetition n's stock, smallest to largest."
	echo "Every measurement: icount.tsv."
	echo
	echo "## Throughput (TCG wall clock, noisy)"
	echo
	echo "$reps repetitions of ${seconds} s per test, kernels alternating, two SMP vCPUs under"
	echo "multi-threaded TCG. The host's load moves these by 5 to 30% between repetitions;"
	echo "only a ratio far outside the spread would mean anything."
	echo
	echo "| into | test | patched (median) | stock (median) | patched / stock | spread patched | spread stock | per-repetition ratios |"
	echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
	awk -F'\t' '{ printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7, $8 }' "$medians"
	echo
	echo "Every measurement: results.tsv."
} >"$report"

if command -v gnuplot >/dev/null && [ -s "$icount_medians" ]; then
	gnuplot <<-PLOT
	set terminal pngcairo size 900,500 noenhanced
	set output '$out/bench.png'
	set title 'Instructions per received packet, patched / stock 6.1 (median of $icount_reps, QEMU icount)'
	set style data histograms
	set style fill solid 0.6
	set yrange [0.9:1.1]
	set bmargin 4
	set ylabel 'patched / stock'
	set grid ytics
	set datafile separator '\t'
	plot '$icount_medians' using 5:xtic(sprintf("%s\n%s bytes", strcol(1), strcol(2))) title 'ratio', 1 with lines dt 2 title 'parity'
	PLOT
	echo "![bench](bench.png)" >>"$report"
fi
cat "$report"
echo "bench: report in $report"
