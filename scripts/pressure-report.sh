#!/bin/bash
# pressure-report.sh OUT MEM HOG HOGS RATE DEADLINE [MIN_FREE_KB [CLIENTS]]: report.md
# from OUT/runs.tsv (written by scripts/pressure.sh): the summary per link,
# kernel and flood (outcomes counted, medians), every run, and a plot per
# link of the workload's progress over time, stock against patched.
set -uo pipefail

out=$1 mem=$2 hog=$3 hogs=$4 rate=$5 deadline=$6 min_free_kb=${7:-} clients=${8:-nr-nbd}
runs=$out/runs.tsv
report=$out/report.md

{
	echo "# Pressure: swap over NBD while the NBD link is flooded from the host"
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) host CPUs ($(sed -n 's/^model name\t: //p' /proc/cpuinfo | head -1)), QEMU TCG."
	watermarks="the kernel's own watermarks"
	[ -n "$min_free_kb" ] && watermarks="vm.min_free_kbytes=$min_free_kb"
	echo "Client: ${mem} MiB RAM, 2 vCPUs, $watermarks;"
	echo "workload: ${hog} MiB written by $hogs processes and verified, swap over the link to a second guest:"
	echo "NBD from Debian's nbd-server, or NVMe/TCP from the kernel's target (clients: $clients; a link named"
	echo "LINK-CLIENT is a client other than nr-nbd)."
	echo "Flood: ${rate} packets/s offered from the host into the client's NBD NIC (UDP to a bound socket that never"
	echo "reads, UDP to closed ports, TCP SYNs, lone first fragments; at MTU 9000 half of it 8000-byte frames)."
	echo "Deadline ${deadline} s per run. A run is *stalled* when neither the workload nor swap I/O moved for 30 s."
	echo
	echo "## Summary"
	echo
	echo "| link | kernel | flood | runs | completed | stalled | other | stalls began at (s) | median time (s) | min-max (s) | time / unflooded | median offered (pkt/s) | median received (pkt/s) | swap out (MiB, median) | reserve peak (max) | reserve allocs (median) | dropped (median) | delivered (median) | CPU in interrupts (%, median) | CPU idle (%, median) |"
	echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
	awk -F'\t' '
	# The median of a list of numbers (insertion sort: mawk has no asort).
	function median(list,   a, n, i, j, x) {
		n = split(list, a, " ")
		if (!n) return ""
		for (i = 2; i <= n; i++) {
			x = a[i] + 0
			for (j = i - 1; j >= 1 && a[j] + 0 > x; j--)
				a[j + 1] = a[j]
			a[j + 1] = x
		}
		return a[int((n + 1) / 2)]
	}
	# "min-max" of a list of numbers, or "" for none.
	function range(list,   a, n, i, lo, hi) {
		n = split(list, a, " ")
		if (!n) return ""
		lo = hi = a[1] + 0
		for (i = 2; i <= n; i++) {
			if (a[i] + 0 < lo) lo = a[i] + 0
			if (a[i] + 0 > hi) hi = a[i] + 0
		}
		return lo "-" hi
	}
	NR == 1 { next }
	{
		k = $1 SUBSEP $2 SUBSEP $3
		if (!(k in runs)) order[++nk] = k
		runs[k]++
		if ($5 == "completed") { done[k]++; t[k] = t[k] " " $6 }
		else if ($5 ~ /^stalled/) { stalled[k]++; began[k] = began[k] (began[k] == "" ? "" : ", ") $14 }
		else other[k]++
		off[k] = off[k] " " $10; rx[k] = rx[k] " " $11; sw[k] = sw[k] " " $8
		if ($17 != "" && $17 + 0 > peak[k]) peak[k] = $17 + 0
		if ($18 != "") al[k] = al[k] " " $18
		if ($20 != "") dr[k] = dr[k] " " $20
		if ($21 != "") de[k] = de[k] " " $21
		hasres[k] = hasres[k] || $15 != ""
		if ($23 ~ /^[0-9]+$/) { irq[k] = irq[k] " " $23; idle[k] = idle[k] " " $24 }
	}
	END {
		for (i = 1; i <= nk; i++) {
			k = order[i]
			split(k, f, SUBSEP)
			mt = median(t[k])
			ref = median(t[f[1] SUBSEP f[2] SUBSEP "off"])
			ratio = (f[3] == "on" && mt != "" && ref != "" && ref > 0) ? sprintf("%.2f", mt / ref) : ""
			printf "| %s | %s | %s | %d | %d | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
				f[1], f[2], f[3], runs[k], done[k], stalled[k], other[k], began[k], mt, range(t[k]), ratio,
				median(off[k]), median(rx[k]), median(sw[k]),
				hasres[k] ? peak[k] + 0 : "", median(al[k]), median(dr[k]), median(de[k]),
				median(irq[k]), median(idle[k])
		}
	}' "$runs"
	echo
	echo "## Every run"
	echo
	echo "| link | kernel | flood | rep | outcome | time (s) | verified (MiB) | swap out / in (MiB) | offered (pkt/s) | received (pkt/s) | lost on the host | alloc-failure reports | console | rx_reserve | set aside (pages) | peak | allocs | refused | dropped | delivered | CPU in interrupts (%) | CPU idle (%) |"
	echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
	awk -F'\t' 'NR > 1 { printf "| %s | %s | %s | %s | %s | %s | %s | %s / %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
		$1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $25, $12, $13, $15, $16, $17, $18, $19, $20, $21, $23, $24 }' "$runs"
	echo
	echo "Empty reserve cells: stock has no reserve counters, and a run without a result has no final counters."
	echo "received: the median of the client NIC's rx_packets per second over the run's samples."
	echo "lost on the host: UDP datagrams the host dropped for a full receive buffer during the run (RcvbufErrors): frames the"
	echo "link lost because QEMU had stopped reading while a guest NIC had no free RX buffer (empty for older runs)."
	echo "CPU: the client's CPU time (both vCPUs) from the first sample to the last, in hard and soft interrupts (where the flood's receive work runs) and idle or waiting for I/O."
	echo "Consoles, samples and flood counts: NAME-{client,server}.log, NAME.tsv, NAME.flood beside this report."
} >"$report"

if command -v gnuplot >/dev/null; then
	for link in $(awk -F'\t' 'NR > 1 { print $1 }' "$runs" | sort -u); do
		png=$out/$link.png
		plots=
		while IFS=$'\t' read -r k name; do
			tsv=$out/$name.tsv
			[ "$(wc -l <"$tsv" 2>/dev/null || echo 0)" -gt 1 ] || continue
			plots+="'$tsv' using 1:5 with lines lw 2 title '$k: MiB written + verified', "
		done < <(awk -F'\t' -v l="$link" 'NR > 1 && $1 == l && $3 == "on" && $4 == 1 { print $2 "\t" $22 }' "$runs")
		[ -n "$plots" ] || continue
		gnuplot <<-PLOT
		set terminal pngcairo size 1000,500 noenhanced
		set output '$png'
		set title '$link: workload progress while the NBD link is flooded (first repetition)'
		set key top left
		set xlabel 'seconds since swap came on'
		set ylabel 'MiB (written, then verified)'
		plot ${plots%, }
		PLOT
		echo "![$link]($link.png)" >>"$report"
	done
else
	echo "(gnuplot is not installed: no plots)" >>"$report"
fi
echo
cat "$report"
echo "pressure: report in $report"
