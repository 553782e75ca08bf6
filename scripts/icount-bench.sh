#!/bin/bash
# icount-bench.sh KERNEL_NAME BZIMAGE REP RESULTS LOG
#
# One boot of make bench's instruction count: boots BZIMAGE with
# boot.sh --icount (one vCPU whose clock counts instructions) running
# tests/bench/icount.sh, and floods the NIC the guest names whenever it
# prints "nr-icount-ready": nr-hostflood sends UDP datagrams of the length
# the guest asked for ("nr-icount-next iface=... len=...") to the loopback
# port QEMU takes that NIC's frames on (127.0.0.1 only, nowhere else), at
# ICOUNT_RATE (default 100000) a second for ICOUNT_FLOOD_S (default 3)
# seconds, more than the guest can take.  Appends one line per result to
# RESULTS: rep, kernel, nic, ip length, packets, delivered, instructions
# per packet, soak share.  ICOUNT_APPEND: more kernel command line for
# tests/bench/icount.sh (nr_icount_nics, nr_icount_lengths).
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
name=$1 image=$2 rep=$3 results=$4 log=$5
rate=${ICOUNT_RATE:-100000}
flood_s=${ICOUNT_FLOOD_S:-3}
flooder=$top/build/host/nr-hostflood
ports=$(mktemp)
trap 'rm -f "$ports"' EXIT

declare -A mac=([eth0]=52:54:00:12:00:01 [eth1]=52:54:00:12:00:02)
declare -A nic_name=([eth0]=e1000 [eth1]=virtio-net)

reader()
{
	local line iface= len= port
	while IFS= read -r line; do
		printf '%s\n' "$line"
		case "$line" in
		"nr-icount-next "*)
			iface=$(printf '%s\n' "$line" | sed -n 's/.*iface=\([^ ]*\).*/\1/p')
			len=$(printf '%s\n' "$line" | sed -n 's/.*len=\([0-9]*\).*/\1/p') ;;
		"nr-icount-ready "*)
			port=$(sed -n "s/^guest_$iface=//p" "$ports")
			"$flooder" -p "$port" -d "${mac[$iface]}" -s 52:54:00:12:03:01 \
				-D 10.97.0.2 -S 10.97.0.3 -P 9000 -m udp-idle -l "$len" \
				-r "$rate" -t "$flood_s" -o /dev/null &
			;;
		"nr-icount iface="*)
			printf '%s\n' "$line" | awk -v r="$rep" -v k="$name" -v n="${nic_name[$iface]}" -v l="$len" '{
				for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
				printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r, k, n, l, v["packets"], v["delivered"], v["per_packet"], v["soak_share"]
			}' >>"$results" ;;
		esac
	done
	wait
}

NETRESERVE_PORTS_FILE=$ports "$top/tests/qemu/boot.sh" --icount --mode script \
	--script "$top/tests/bench/icount.sh" --kernel "$image" --timeout 900 \
	--log "$log" ${ICOUNT_APPEND:+--append "$ICOUNT_APPEND"} 2>&1 | reader
exit "${PIPESTATUS[0]}"
