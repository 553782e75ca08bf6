#!/bin/bash
# make pressure: swap over the network while the NBD link is flooded from
# the host, on three kernels in the same invocation:
#
#   patched      the series, every NIC with its default rx_reserve
#   patched-rx0  the series, rx_reserve 0 on both of the client's NICs
#   stock        Debian's 6.1 without the series, the same configuration
#
# Two guests (tests/pressure/pressure.sh in the pair topology): the server
# exports swap with Debian's nbd-server; the client (PRESSURE_MEM MiB, the
# kernel's own watermarks) swaps on it through the kernel's NBD driver while
# nr-hog writes PRESSURE_HOG MiB and verifies every byte.  The host floods
# the client's NBD NIC at PRESSURE_RATE packets/s (20000; scripts/flooded-pair.sh,
# 127.0.0.1 only): UDP to a bound socket that never reads, UDP to closed
# ports, TCP SYNs, lone first fragments; jumbo frames as well at MTU 9000.
#
# Links (PRESSURE_LINKS): NIC:MTU[:big], eth0 the e1000, eth1 the
# virtio-net (":big": its big-packet mode, mrg_rxbuf=off).  The flood goes
# into the NBD NIC itself, or with PRESSURE_FLOOD_NIC=other into the
# client's other NIC (the per-device bound: one device's flood must not
# eat what the block device's NIC and sender need).  Each link and
# kernel runs PRESSURE_REPS times (1) with the flood, and once per
# PRESSURE_FLOODS entry "off" without it (the reference time).
#
# Every run ends in one outcome, from the client's samples and console:
#   completed  the workload finished, every byte verified
#   stalled    no workload progress and no swap I/O for 30 s (the time it
#              began is given; scripts/flooded-pair.sh stops a run after
#              STALL_END s of that, and the hung-task panic may end it first)
#   crawled    still progressing when the deadline came
#   OOM, panic, corrupted, failed
#
# Writes PRESSURE_OUT (build/pressure): per run the consoles, the samples
# (NAME.tsv) and the flood's counts (NAME.flood); runs.tsv, one line a run;
# report.md with a table per run, a summary per link and kernel, and plots.
#
# PRESSURE_IMAGE: another bzImage for the patched kernels (to compare two
# states of the series, e.g. a bisection).
# Other settings: PRESSURE_KERNELS ("patched patched-rx0 stock"; "debug" is
# the patched kernel with the debug fragment), PRESSURE_HOG (MiB, twice
# PRESSURE_MEM plus 32), PRESSURE_HOGS (processes, 4), PRESSURE_MIN_FREE_KB
# (empty: the kernel's own), PRESSURE_DEADLINE (s per run, 600),
# PRESSURE_FORCE=1 (patched kernels: every normal RX allocation of the NBD
# NIC fails through the debugfs test hook, so that all of NBD's replies
# come through the reserve; make check uses it, as natural memory pressure
# reaches the reserve in some runs and not in others).
#
# A measurement: exits 0 whatever the kernels did.  With PRESSURE_STRICT=1
# (make check, make check-debug) it is a test of the patched kernel: a run
# passes only when it completed with every byte verified, a clean console,
# swap really written and read back, the flood received at no less than
# PRESSURE_MIN_RX packets/s (median), and the reserve used (allocations >
# 0); it prints "N passed, N failed" and exits 1 on any failure.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=${PRESSURE_OUT:-$top/build/pressure}
links=${PRESSURE_LINKS:-eth0:1500 eth0:9000 eth1:1500 eth1:9000:big}
kernels=${PRESSURE_KERNELS:-patched patched-rx0 stock}
floods=${PRESSURE_FLOODS:-on off}
reps=${PRESSURE_REPS:-1}
mem=${PRESSURE_MEM:-160}
hog=${PRESSURE_HOG:-$((2 * mem + 32))}
hogs=${PRESSURE_HOGS:-4}
# 20000 packets/s offered is what this 2-core TCG rig can carry: the client
# NIC receives all of it (about 20000/s) beside the NBD traffic.  At 100000
# and more the host's CPUs are the bottleneck and the client's reception
# collapses to a few hundred packets a second on every kernel (README).
rate=${PRESSURE_RATE:-20000}
min_rx=${PRESSURE_MIN_RX:-5000}
min_free_kb=${PRESSURE_MIN_FREE_KB-}
min_free=${min_free_kb:+nr_min_free_kb=$min_free_kb}
deadline=${PRESSURE_DEADLINE:-600}
force=
[ "${PRESSURE_FORCE:-0}" = 1 ] && force=nr_force=1
strict=${PRESSURE_STRICT:-0}
# PRESSURE_CLIENTS (or PRESSURE_CLIENT): who attaches the client's block
# device, one or more of: nr-nbd (the
# project's, ioctls), nbd-client (Debian's, netlink mode; its initramfs
# carries it), relay or relay-nomark (a user-space client, nr-nbd relay,
# that forwards the kernel's NBD traffic over TCP and marks its TCP socket
# and its end of the socketpair SO_MEMALLOC itself, or leaves them
# unmarked; relay-extmark: unmarked, then marked from outside with
# netreserve mark --all), or nvme (NVMe/TCP instead of NBD: the kernel's target in the
# server guest, the kernel's host driver in the client, swap on
# /dev/nvme0n1).  Runs with another client than nr-nbd are named
# ...-CLIENT-..., and their link in the table is LINK-CLIENT.
# PRESSURE_NVME_OUTAGE=S (nvme): 10 s after the client connected, the
# server takes the subsystem off its port for S seconds, so that the
# client reconnects while it is out of memory (runs named ...-nvme-outage-...).
nvme_outage=${PRESSURE_NVME_OUTAGE:-0}
# PRESSURE_WRITEBACK=1: no swap; the workload maps the block device
# shared, so that what goes over the link is the writeback of dirty page
# cache and its reading back (runs named ...-writeback-...).
writeback=${PRESSURE_WRITEBACK:-0}
clients=${PRESSURE_CLIENTS:-${PRESSURE_CLIENT:-nr-nbd}}
for client in $clients; do
	case "$client" in
	nr-nbd | nbd-client | relay | relay-nomark | relay-extmark | nvme) ;;
	*) echo "pressure: unknown client $client (nr-nbd, nbd-client, relay, relay-nomark, relay-extmark, nvme)" >&2; exit 2 ;;
	esac
done
mkdir -p "$out"
# Memory runs out on purpose: GFP_ATOMIC failure reports are expected and
# counted in the table; any other kernel report is a problem.
export NETRESERVE_ALLOW_ALLOC_FAILURE=1

[ -x "$top/build/host/nr-hostflood" ] || { echo "pressure: build/host/nr-hostflood is missing (make host-progs)" >&2; exit 1; }

kernel_image()
{
	case "$1" in
	patched | patched-rx0) echo "${PRESSURE_IMAGE:-$top/build/kernel/arch/x86/boot/bzImage}" ;;
	debug) echo "$top/build/kernel-debug/arch/x86/boot/bzImage" ;;
	stock) echo "$top/build/kernel-stock/arch/x86/boot/bzImage" ;;
	esac
}

link_name()
{
	local nic=${1%%:*} rest=${1#*:}
	local mtu=${rest%%:*} mode=
	[ "$rest" != "$mtu" ] && mode=-${rest#*:}
	case "$nic" in eth0) echo "e1000-$mtu$mode" ;; eth1) echo "virtio-net-$mtu$mode" ;; *) echo "$nic-$mtu$mode" ;; esac
}

# host_udp_drops: the host's UDP datagrams dropped for a full receive
# buffer (RcvbufErrors), all sockets.  While a run goes, QEMU's link sockets
# are where that happens: a guest NIC with no free RX buffer makes QEMU
# stop reading its socket, and the link loses frames, the server's among
# them, before the guest sees them.
host_udp_drops() { awk '$1 == "Udp:" { if (h) { print $i; exit } for (i = 2; i <= NF; i++) if ($i == "RcvbufErrors") break; h = 1 }' /proc/net/snmp; }

# field LINE KEY: the value of KEY=VALUE in LINE.
field() { printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -1; }

# samples NAME NIC: the client's nr-sample lines as a table.
samples()
{
	grep -a '^nr-sample ' "$out/$1-client.log" | sed 's/\r$//' | awk -v nic="$2" '
		BEGIN { print "t\tfree_pages\twmark_min\tswap_used_mib\tdone_mib\trx_packets\tpswpin\tpswpout\theld\tpeak\talloc\trefused\tdropped\tdelivered\tcpu_total\tcpu_idle\tcpu_iowait\tcpu_irq" }
		{
			delete v
			for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
			printf "%s\t%s\t%s\t%.1f\t%d\t%s\t%d\t%d", v["t"], v["free_pages"], v["wmark_min"],
				v["swap_used_kb"] / 1024, v["done_mib"], v["rx_packets"], v["pswpin"], v["pswpout"]
			n = split("held peak alloc refused dropped delivered", c, " ")
			for (i = 1; i <= n; i++)
				printf "\t%d", v[nic "_" c[i]]
			printf "\t%d\t%d\t%d\t%d\n", v["cpu_total"], v["cpu_idle"], v["cpu_iowait"], v["cpu_irq"]
		}'
}

# last_progress TSV: "T_LAST_PROGRESS T_LAST_SAMPLE" - when done_mib or
# swap I/O last moved, and the last sample.
last_progress()
{
	awk -F'\t' 'NR > 1 {
		key = $5 " " $7 " " $8
		if (key != prev) { lp = $1; prev = key }
		last = $1
	} END { print (lp == "" ? 0 : lp), (last == "" ? 0 : last) }' "$1"
}

# median_rx TSV: the median of the received packets per second while the
# workload ran (rx_packets differences between samples).
median_rx()
{
	awk -F'\t' 'NR > 2 && $1 > pt { print int(($6 - prx) / ($1 - pt)) } NR > 1 { pt = $1; prx = $6 }' "$1" |
		sort -n | awk '{ r[++n] = $1 } END { print n ? r[int((n + 1) / 2)] : 0 }'
}

# cpu_share TSV: "IRQ% IDLE%": the share of the client's CPU time spent in
# hard and soft interrupts (the flood's receive work, and the NBD link's)
# and idle or waiting for I/O, from the first sample to the last.
cpu_share()
{
	awk -F'\t' 'NR == 2 { t0 = $15; i0 = $16 + $17; q0 = $18 }
		NR > 1 { t = $15; i = $16 + $17; q = $18 }
		END { if (t > t0) printf "%d %d\n", 100 * (q - q0) / (t - t0), 100 * (i - i0) / (t - t0); else print "- -" }' "$1"
}

# outcome NAME RC TSV: one word, and a detail.
outcome()
{
	local log=$out/$1-client.log rc=$2 tsv=$3 result lp last
	result=$(grep -a '^nr-result ' "$log" | tail -1 | sed 's/\r$//')
	read -r lp last < <(last_progress "$tsv")
	if grep -aq 'invoked oom-killer' "$out/$1-server.log" 2>/dev/null; then
		echo "harness server guest out of memory"
	elif [ -n "$result" ]; then
		case "$(field "$result" outcome)" in
		completed) echo "completed" ;;
		corrupt) echo "corrupted $(field "$result" differ) bytes differ" ;;
		killed-by-signal-9)
			if grep -aq 'Out of memory' "$log"; then echo "OOM workload killed"; else echo "failed SIGKILL"; fi ;;
		*) echo "failed $(field "$result" outcome)" ;;
		esac
	elif [ $((last - lp)) -ge 30 ] || grep -q 'flooded-pair: stalled' "$out/$1.out"; then
		local why=
		grep -aq 'blocked for more than' "$log" &&
			why="; hung task: $(grep -a -m1 'blocked for more than' "$log" | sed 's/\r$//; s/.*INFO: task \([^ ]*\).*/\1/')"
		echo "stalled since t=$lp s (last sample t=$last s$why)"
	elif grep -aq 'Out of memory' "$log"; then
		echo "OOM"
	elif grep -aq 'Kernel panic' "$log"; then
		echo "panic $(grep -a 'Kernel panic' "$log" | head -1 | sed 's/.*Kernel panic - //; s/\r//' | cut -c1-60)"
	elif [ "$rc" = 124 ]; then
		echo "crawled (progress until t=$lp s, deadline ${deadline} s)"
	else
		echo "failed no result (see $1-client.log)"
	fi
}

total=0
for client in $clients; do for link in $links; do for k in $kernels; do for f in $floods; do
	if [ "$f" = on ]; then total=$((total + reps)); else total=$((total + 1)); fi
done; done; done; done
for k in $kernels; do
	[ -e "$(kernel_image "$k")" ] || { echo "pressure: no kernel for $k ($(kernel_image "$k"))" >&2; exit 1; }
done

runs_tsv=$out/runs.tsv
printf 'link\tkernel\tflood\trep\toutcome\tseconds\tverified_mib\tswapout_mib\tswapin_mib\toffered_pps\trx_pps\talloc_failure_reports\tconsole\tstall_since\trx_reserve\tpages\tpeak\talloc\trefused\tdropped\tdelivered\tname\tirq_pct\tidle_pct\thost_udp_drops\n' >"$runs_tsv"

n=0 passed=0 failed=0
for client in $clients; do
client_args=() client_tag=-$client
[ "$client" = nr-nbd ] && client_tag=
[ "$client" = nvme ] && [ "$nvme_outage" != 0 ] && client_tag=-nvme-outage
[ "$writeback" = 1 ] && client_tag=$client_tag-writeback
[ "$client" = nbd-client ] &&
	client_args=(--initrd "$top/build/initramfs-nbd-client.cpio" --server-initrd "$top/build/initramfs-server.cpio")
for link in $links; do
	nic=${link%%:*} rest=${link#*:}
	mtu=${rest%%:*} virtio=
	[ "$rest" != "$mtu" ] && [ "${rest#*:}" = big ] && virtio="--virtio mrg_rxbuf=off,host_mtu=9000"
	flood_nic=$nic flood_net=10.99.0
	if [ "${PRESSURE_FLOOD_NIC:-same}" = other ]; then
		flood_nic=eth1 flood_net=10.98.0
		[ "$nic" = eth1 ] && flood_nic=eth0
	fi
	for k in $kernels; do
		for f in $floods; do
			count=$reps
			[ "$f" = off ] && count=1
			for rep in $(seq "$count"); do
				n=$((n + 1))
				name=$(link_name "$link")$([ "$flood_nic" != "$nic" ] && echo "-flood-$flood_nic")$client_tag-$k-flood$f-$rep
				reserve=default flood_rate=$rate
				[ "$k" = patched-rx0 ] && reserve=0
				[ "$f" = off ] && flood_rate=0
				echo "pressure: [$n/$total] $name: booting server and client (deadline ${deadline} s)"
				start=$(date +%s) udp_drops_before=$(host_udp_drops)
				# shellcheck disable=SC2086
				FLOOD_NET=$flood_net "$top/scripts/flooded-pair.sh" "$flood_nic" "$mtu" "$flood_rate" "$out/$name.flood" -- \
					--mode script --script "$top/tests/pressure/pressure.sh" --kernel "$(kernel_image "$k")" \
					--mem "$mem" --server-mem 1024 --timeout "$deadline" --log "$out/$name.log" $virtio \
					"${client_args[@]}" \
					--append "nr_client=$client nr_nic=$nic nr_mtu=$mtu nr_reserve=$reserve nr_hog=$hog nr_hogs=$hogs nr_swap=$((hog + 64)) nr_flood=$([ "$f" = on ] && echo 1 || echo 0) nr_flood_nic=$flood_nic nr_nvme_outage=$nvme_outage nr_writeback=$writeback $min_free $force" \
					>"$out/$name.out" 2>&1
				rc=$?
				link_lost=$(( $(host_udp_drops) - udp_drops_before ))
				samples "$name" "$nic" >"$out/$name.tsv"
				result=$(grep -a '^nr-result ' "$out/$name-client.log" | tail -1 | sed 's/\r$//')
				info=$(grep -a '^nr-info ' "$out/$name-client.log" | tail -1 | sed 's/\r$//')
				what=$(outcome "$name" "$rc" "$out/$name.tsv")
				console=clean
				if grep -q "the kernel reported a problem" "$out/$name.out"; then
					console="reported: $(grep -A1 'the kernel reported a problem' "$out/$name.out" |
						sed -n '2{s/\r$//;s/^\[ *[0-9.]*\] //;s/[|]/:/g;s/\t/ /g;p}' | cut -c1-60)"
				fi
				offered=$(awk -F'[= ]' '/^total offered=/ { t = $3 } /^t=/ { s++ } END { if (s) print int(t / s); else print 0 }' "$out/$name.flood" 2>/dev/null)
				rx=$(median_rx "$out/$name.tsv")
				pages_out=$(field "$result" pswpout) pages_in=$(field "$result" pswpin)
				swapout=$(( ${pages_out:-0} * 4 / 1024 ))
				swapin=$(( ${pages_in:-0} * 4 / 1024 ))
				if [ -z "$result" ]; then
					# No result line: the last sample's counters.
					swapout=$(awk -F'\t' 'END { print int($8 * 4 / 1024) }' "$out/$name.tsv")
					swapin=$(awk -F'\t' 'END { print int($7 * 4 / 1024) }' "$out/$name.tsv")
				fi
				stall=
				case "$what" in stalled*) stall=$(echo "$what" | sed 's/^stalled since t=\([0-9]*\) s.*/\1/') ;; esac
				verified=$(field "$result" verified)
				verified=$(( ${verified:-0} / 1048576 ))
				read -r irq_pct idle_pct < <(cpu_share "$out/$name.tsv")
				printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
					"$(link_name "$link")$client_tag" "$k" "$f" "$rep" "$what" "$(field "$result" seconds)" \
					"$verified" "$swapout" "$swapin" "${offered:-0}" "$rx" \
					"$(grep -ac 'page allocation failure' "$out/$name-client.log")" "$console" "$stall" \
					"$(field "$info" reserve)" "$(field "$result" "${nic}_pages")" "$(field "$result" "${nic}_peak")" \
					"$(field "$result" "${nic}_alloc")" "$(field "$result" "${nic}_refused")" \
					"$(field "$result" "${nic}_dropped")" "$(field "$result" "${nic}_delivered")" "$name" \
					"$irq_pct" "$idle_pct" "$link_lost" >>"$runs_tsv"
				echo "pressure: [$n/$total] $name: $what after $(($(date +%s) - start)) s; swap out/in $swapout/$swapin MiB; flood offered $offered/s, received $rx/s (median), $link_lost frames lost on the host; client CPU in interrupts $irq_pct%, idle $idle_pct%"
				if [ "$strict" = 1 ]; then
					why=
					[ "$what" = completed ] || why+=" outcome: $what;"
					[ "$console" = clean ] && [ "$rc" = 0 ] || why+=" console: $console, boot status $rc;"
					[ "$verified" -ge "$hog" ] || why+=" verified $verified of $hog MiB;"
					[ "$swapout" -gt 0 ] && [ "$swapin" -gt 0 ] || why+=" swap out/in $swapout/$swapin MiB;"
					# The outage really happened, while swap was in use,
					# and the controller came back.
					if [ "$client_tag" = -nvme-outage ]; then
						grep -aq '^nr-outage ends' "$out/$name-server.log" || why+=" the server took no outage;"
						grep -aq 'nvme nvme0: Successfully reconnected' "$out/$name-client.log" ||
							why+=" the controller did not reconnect;"
					fi
					if [ "$f" = on ]; then
						[ "$rx" -ge "$min_rx" ] || why+=" flood received at $rx/s, below $min_rx/s;"
						if [ "$k" = patched ] || [ "$k" = debug ]; then
							[ "$(field "$result" "${nic}_alloc")" -gt 0 ] 2>/dev/null || why+=" the reserve was never used;"
							# The timeline needs the sampler's reserve counters too.
							grep -aq "^nr-sample .* ${nic}_alloc=" "$out/$name-client.log" ||
								why+=" the samples carry no reserve counters;"
						fi
					fi
					if [ -z "$why" ]; then
						passed=$((passed + 1))
						echo "    ok: pressure $name: completed in $(field "$result" seconds) s, $verified MiB verified, swap out/in $swapout/$swapin MiB, flood received at $rx/s, reserve allocations $(field "$result" "${nic}_alloc")"
					else
						failed=$((failed + 1))
						echo "    FAIL: pressure $name:$why"
					fi
				fi
			done
		done
	done
done
done

"$top/scripts/pressure-report.sh" "$out" "$mem" "$hog" "$hogs" "$rate" "$deadline" "$min_free_kb" "$clients"
if [ "$strict" = 1 ]; then
	echo "$passed passed, $failed failed"
	[ "$failed" = 0 ]
fi
