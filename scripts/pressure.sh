#!/bin/bash
# make pressure: swap over NBD while flooded (tests/pressure/pressure.sh in
# the two-guest topology), on three kernels in the same invocation:
#
#   patched      the series, every NIC with its default rx_reserve
#   patched-rx0  the series, rx_reserve 0 on both of the client's NICs
#   stock        Debian's 6.1 without the series, the same configuration
#
# for each link in PRESSURE_LINKS (NIC:MTU; default e1000 at 1500 and 9000,
# virtio-net at 1500).  Each run has a deadline: a guest that stalls,
# livelocks or panics (the hung-task and soft-lockup detectors panic) is
# reported as such, and the next run starts.  Writes build/pressure/:
# per run the consoles (NAME-client.log, NAME-server.log) and the samples
# (NAME.tsv); report.md with the table; plots when gnuplot is there.
#
# Environment: PRESSURE_LINKS, PRESSURE_KERNELS (default "patched
# patched-rx0 stock"), PRESSURE_MEM (client MiB, 256), PRESSURE_HOG (MiB
# the workload writes, 384), PRESSURE_HOGS (processes, 4),
# PRESSURE_MIN_FREE_KB (the client's vm.min_free_kbytes, 512; empty for the
# kernel's own), PRESSURE_DEADLINE (s per run, 600), PRESSURE_OUT (the
# folder, build/pressure).  PRESSURE_KERNELS may also name "debug", the
# patched kernel with the debug fragment (make debug-kernel).
#
# A measurement, so it exits 0 whatever the kernels did; with
# PRESSURE_STRICT=1 (make check-debug) it is a test: a run passes when the
# workload completed with every byte verified and neither guest's console
# shows a kernel problem; it prints "N passed, N failed" and exits 1 on any
# failure.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=${PRESSURE_OUT:-$top/build/pressure}
links=${PRESSURE_LINKS:-eth0:1500 eth0:9000 eth1:1500}
kernels=${PRESSURE_KERNELS:-patched patched-rx0 stock}
mem=${PRESSURE_MEM:-256}
hog=${PRESSURE_HOG:-384}
hogs=${PRESSURE_HOGS:-4}
# With the kernel's own watermarks (about 2 MiB here) reclaim keeps free
# memory above the min watermark and no RX allocation ever fails: set
# PRESSURE_MIN_FREE_KB= (empty) for that run.  A squeezed min_free_kbytes
# lets the workload and the flood take free memory to where they do.
min_free_kb=${PRESSURE_MIN_FREE_KB-512}
min_free=${min_free_kb:+nr_min_free_kb=$min_free_kb}
deadline=${PRESSURE_DEADLINE:-600}
mkdir -p "$out"
# Memory runs out on purpose: GFP_ATOMIC failure reports are expected and
# counted in the table; any other kernel report is a problem.
export NETRESERVE_ALLOW_ALLOC_FAILURE=1

kernel_image()
{
	case "$1" in
	patched | patched-rx0) echo "$top/build/kernel/arch/x86/boot/bzImage" ;;
	debug) echo "$top/build/kernel-debug/arch/x86/boot/bzImage" ;;
	stock) echo "$top/build/kernel-stock/arch/x86/boot/bzImage" ;;
	esac
}

nic_name() { case "$1" in eth0) echo e1000 ;; eth1) echo virtio-net ;; *) echo "$1" ;; esac; }

# field LINE KEY: the value of KEY=VALUE in LINE.
field() { printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -1; }

# outcome NAME RC: what happened in a run, from the client's console.
outcome()
{
	local log=$out/$1-client.log rc=$2 result
	result=$(grep -a '^nr-result ' "$log" | tail -1)
	if grep -aq 'invoked oom-killer' "$out/$1-server.log"; then
		# The harness's own failure, not the client kernel's.
		echo "server guest ran out of memory (harness)"
	elif [ -n "$result" ]; then
		case "$(field "$result" outcome)" in
		completed) echo completed ;;
		corrupt) echo "DATA CORRUPTED" ;;
		killed-by-signal-9)
			if grep -aq 'Out of memory' "$log"; then echo "workload OOM-killed"; else echo "workload killed (SIGKILL)"; fi ;;
		*) echo "workload failed ($(field "$result" outcome))" ;;
		esac
	elif grep -aq 'blocked for more than' "$log"; then
		echo "stalled: hung task"
	elif grep -aq 'soft lockup' "$log"; then
		echo "stalled: soft lockup"
	elif grep -aq 'Possible stuck request' "$log"; then
		echo "stalled: swap I/O stuck, no result in ${deadline} s"
	elif [ "$rc" = 124 ] || grep -q 'client: timed out' "$out/$1.out"; then
		echo "stalled: no result in ${deadline} s"
	elif grep -aq 'Kernel panic' "$log"; then
		echo "panic: $(grep -a 'Kernel panic' "$log" | head -1 | sed 's/.*Kernel panic - //; s/\r//')"
	else
		echo "no result (see $1-client.log)"
	fi
}

# samples NAME: the client's nr-sample lines as a table for gnuplot.
samples()
{
	grep -a '^nr-sample ' "$out/$1-client.log" | sed 's/\r$//' | awk -v nic="$2" '
		BEGIN { print "t\tfree_pages\twmark_min\tswap_used_mib\tdone_mib\trx_packets\theld\tpeak\talloc\tdropped\tdelivered" }
		{
			delete v
			for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
			printf "%s\t%s\t%s\t%.1f\t%s\t%s", v["t"], v["free_pages"], v["wmark_min"],
				v["swap_used_kb"] / 1024, v["done_mib"], v["rx_packets"]
			n = split("held peak alloc dropped delivered", c, " ")
			for (i = 1; i <= n; i++)
				printf "\t%d", v[nic "_" c[i]]
			printf "\n"
		}'
}

total=0
for link in $links; do for k in $kernels; do total=$((total + 1)); done; done
for k in $kernels; do
	[ -e "$(kernel_image "$k")" ] || { echo "pressure: no kernel for $k ($(kernel_image "$k"))" >&2; exit 1; }
done

report=$out/report.md
{
	echo "# Pressure: swap over NBD while flooded"
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) host CPUs, QEMU TCG. Client: ${mem} MiB RAM, 2 vCPUs;"
	echo "workload: ${hog} MiB written by $hogs processes and verified, swap on NBD over the link${min_free_kb:+; vm.min_free_kbytes=$min_free_kb};"
	echo "the server floods the client's NIC (UDP to an unbound and a bound idle port, TCP SYNs)."
	echo "Deadline ${deadline} s per run. The reserve columns are the client's NBD NIC: pages set aside,"
	echo "the most buffers held at once, and set-aside pages over the pages those buffers took."
	echo
	echo "| link | kernel | outcome | console | alloc-failure reports | time (s) | verified (MiB) | swapped out (MiB) | min free pages | rx_reserve | set aside (pages) | held peak | set aside / used | reserve allocs | dropped | delivered |"
	echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
} >"$report"

n=0 passed=0 failed=0
runs=()
for link in $links; do
	nic=${link%%:*} mtu=${link##*:}
	for k in $kernels; do
		n=$((n + 1))
		name=$(nic_name "$nic")-$mtu-$k
		reserve=default
		[ "$k" = patched-rx0 ] && reserve=0
		echo "pressure: [$n/$total] $name: booting server and client (deadline ${deadline} s)"
		start=$(date +%s)
		"$top/tests/qemu/boot.sh" --topology pair --mode script \
			--script "$top/tests/pressure/pressure.sh" --kernel "$(kernel_image "$k")" \
			--mem "$mem" --server-mem 1024 --timeout "$deadline" --log "$out/$name.log" \
			--append "nr_nic=$nic nr_mtu=$mtu nr_reserve=$reserve nr_hog=$hog nr_hogs=$hogs nr_swap=$((hog + 64)) $min_free" \
			>"$out/$name.out" 2>&1
		rc=$?
		result=$(grep -a '^nr-result ' "$out/$name-client.log" | tail -1 | sed 's/\r$//')
		info=$(grep -a '^nr-info ' "$out/$name-client.log" | tail -1 | sed 's/\r$//')
		what=$(outcome "$name" "$rc")
		# boot.sh's verdict on the consoles: a BUG, WARNING, oops, KASAN,
		# lockdep, hung-task or allocation-failure report of either guest.
		console=clean
		if grep -q "the kernel reported a problem" "$out/$name.out"; then
			console="reported: $(grep -A1 'the kernel reported a problem' "$out/$name.out" |
				sed -n '2{s/\r$//;s/^\[ *[0-9.]*\] //;s/[|]/:/g;p}' | cut -c1-60)"
		fi
		if [ "$what" = completed ] && [ "$console" = clean ] && [ "$rc" = 0 ]; then
			passed=$((passed + 1))
			[ "${PRESSURE_STRICT:-0}" = 1 ] && echo "    ok: pressure $name: completed, console clean"
		else
			failed=$((failed + 1))
			[ "${PRESSURE_STRICT:-0}" = 1 ] && echo "    FAIL: pressure $name: $what; console $console; boot.sh status $rc"
		fi
		samples "$name" "$nic" >"$out/$name.tsv"
		written=$(sed -n 's/.*served \([0-9]*\) MiB written.*/\1/p' "$out/$name-server.log" | tail -1)
		verified=$(field "$result" verified)
		lowest_free=$(awk -F'\t' 'NR > 1 && ($2 < m || m == "") { m = $2 } END { print m }' "$out/$name.tsv")
		echo "pressure: [$n/$total] $name: $what after $(($(date +%s) - start)) s"
		pages=$(field "$result" "${nic}_pages") peak=$(field "$result" "${nic}_peak")
		limit=$(field "$info" reserve) ratio=
		# Pages per buffer from the estimate: its data part is limit * that.
		if [ -n "$peak" ] && [ "$peak" -gt 0 ] && [ "${limit:-0}" -gt 0 ]; then
			ratio=$(awk -v p="$pages" -v l="$limit" -v k="$peak" 'BEGIN { printf "%.2f", p / (k * int(p / l)) }')
		fi
		printf '| %s %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' \
			"$(nic_name "$nic")" "$mtu" "$k" "$what" "$console" \
			"$(grep -ac 'page allocation failure' "$out/$name-client.log")" "$(field "$result" seconds)" \
			"$(( ${verified:-0} / 1048576 ))" "${written:--}" "${lowest_free:--}" \
			"$limit" "$pages" "$peak" "$ratio" "$(field "$result" "${nic}_alloc")" \
			"$(field "$result" "${nic}_dropped")" "$(field "$result" "${nic}_delivered")" >>"$report"
		runs+=("$name")
	done
done

{
	echo
	echo "Empty cells: the stock kernel has no reserve counters; a run without a result has no time."
	echo "Consoles and samples: build/pressure/NAME-{client,server}.log, NAME.tsv."
} >>"$report"

if command -v gnuplot >/dev/null; then
	for link in $links; do
		nic=${link%%:*} mtu=${link##*:}
		prefix=$(nic_name "$nic")-$mtu
		png=$out/$prefix.png
		plots_held= plots_swap=
		for k in $kernels; do
			tsv=$out/$prefix-$k.tsv
			[ "$(wc -l <"$tsv")" -gt 1 ] || continue
			plots_held+="'$tsv' using 1:9 with lines title '$k: allocated', '$tsv' using 1:11 with lines dt 2 title '$k: delivered to memalloc sockets', '$tsv' using 1:7 with lines dt 3 title '$k: held', "
			plots_swap+="'$tsv' using 1:4 with lines title '$k swap used', '$tsv' using 1:5 with lines dt 2 title '$k MiB written+verified', "
		done
		[ -n "$plots_held" ] || continue
		gnuplot <<-PLOT
		set terminal pngcairo size 1000,700 noenhanced
		set output '$png'
		set multiplot layout 2,1 title '$prefix: swap over NBD while flooded'
		set key top left
		set xlabel 'seconds'
		set ylabel 'reserve buffers'
		plot ${plots_held%, }
		set ylabel 'MiB'
		plot ${plots_swap%, }
		unset multiplot
		PLOT
		echo "![$prefix]($prefix.png)" >>"$report"
	done
else
	echo "(gnuplot is not installed: no plots)" >>"$report"
fi

echo
cat "$report"
echo "pressure: report in $report"
if [ "${PRESSURE_STRICT:-0}" = 1 ]; then
	echo "$passed passed, $failed failed"
	[ "$failed" = 0 ]
fi
