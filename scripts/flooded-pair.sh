#!/bin/bash
# flooded-pair.sh NIC MTU RATE FLOODLOG -- BOOT_ARGS...
#
# Boots the pair topology (tests/qemu/boot.sh --topology pair BOOT_ARGS...)
# and floods the client's NIC from the host while the guest asks for it:
# when the client prints "nr-flood-go", nr-hostflood starts sending frames
# to the loopback UDP port QEMU takes that NIC's frames on (127.0.0.1 only,
# nowhere else); on "nr-flood-stop", or when the guests end, it stops.
# RATE is the offered packets per second (0: no flood).  At MTU 9000 half
# the rate is jumbo frames (UDP to the idle socket and lone fragments of
# 8000 bytes), half the small mix.  At MTU 1500, FLOOD_MIX and FLOOD_LEN
# (env) choose the kinds of frames and their IP length (nr-hostflood -m,
# -l; default all four kinds, small).  The flooder's per-second counts go to
# FLOODLOG.
#
# A progress watchdog ends a stalled run instead of waiting out the
# deadline: when the client's samples ("nr-sample", one a second) show no
# workload progress and no swap I/O for STALL_END seconds (env, 150), or
# stop coming, both guests are stopped and "flooded-pair: stalled" is
# printed.  The exit status is boot.sh's.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
nic=$1 mtu=$2 rate=$3 floodlog=$4
shift 4
[ "${1:-}" = -- ] && shift
flooder=$top/build/host/nr-hostflood
ports=$(mktemp)
trap 'rm -f "$ports"' EXIT

# The client's MACs (boot.sh) and the flood's virtual source.
case "$nic" in
eth0) mac=52:54:00:12:02:01 ;;
eth1) mac=52:54:00:12:02:02 ;;
*) echo "flooded-pair: unknown NIC $nic" >&2; exit 2 ;;
esac
# The NBD link is 10.99.0.0/24; a NIC flooded on its own is 10.98.0.0/24
# (FLOOD_NET=10.98.0), as tests/pressure/pressure.sh sets it up.
net=${FLOOD_NET:-10.99.0}
flood_args=(-d "$mac" -s 52:54:00:12:03:01 -D "$net.2" -S "$net.3" -t 3600)

: >"$floodlog"
pids=()
stop_flood()
{
	[ "${#pids[@]}" -gt 0 ] || return 0
	kill -TERM "${pids[@]}" 2>/dev/null
	wait "${pids[@]}" 2>/dev/null
	pids=()
}

# client_port: the loopback UDP port QEMU takes the client NIC's frames on.
client_port() { sed -n "s/^client_$nic=//p" "$ports"; }

start_flood()
{
	local port
	port=$(client_port)
	[ -n "$port" ] || { echo "flooded-pair: no port for $nic" >&2; return; }
	if [ "$mtu" -gt 1500 ]; then
		"$flooder" -p "$port" "${flood_args[@]}" -r $((rate / 2)) -o "$floodlog.small" &
		pids+=($!)
		"$flooder" -p "$port" "${flood_args[@]}" -r $((rate / 2)) -m udp-idle,frag \
			-l $((mtu - 1000)) -o "$floodlog.jumbo" &
		pids+=($!)
	else
		"$flooder" -p "$port" "${flood_args[@]}" -r "$rate" \
			${FLOOD_MIX:+-m "$FLOOD_MIX"} ${FLOOD_LEN:+-l "$FLOOD_LEN"} -o "$floodlog.small" &
		pids+=($!)
	fi
	echo "flood: $rate packets/s offered to the client's $nic (127.0.0.1:$port)"
}

stall_end=${STALL_END:-150}
# progress LINE: what moves while the client makes progress.
progress() { printf '%s\n' "$1" | grep -o -E '(done_mib|pswpin|pswpout)=[0-9]*' | tr '\n' ' '; }

reader()
{
	local line status last= since=$SECONDS watching=0
	while :; do
		IFS= read -r -t 5 line
		status=$?
		if [ "$status" != 0 ]; then
			# Over 128: no line for 5 s.  Else EOF: the guests ended.
			[ "$status" -gt 128 ] || break
			line=
		fi
		if [ "$watching" = 1 ] && [ $((SECONDS - since)) -ge "$stall_end" ]; then
			echo "flooded-pair: stalled: no progress for $stall_end s; stopping the guests"
			stop_flood
			# Both QEMUs name that port: the client listens on it, the
			# server sends to it.
			pkill -f "127\\.0\\.0\\.1:$(client_port)([, ]|$)" 2>/dev/null
			watching=0
		fi
		[ -n "$line" ] || continue
		printf '%s\n' "$line"
		case "$line" in
		*"[client] nr-sample "*)
			watching=1
			p=$(progress "$line")
			[ "$p" != "$last" ] && { last=$p; since=$SECONDS; } ;;
		esac
		case "$line" in
		*"[client] nr-flood-go"*) [ "$rate" -gt 0 ] && start_flood ;;
		*"[client] nr-flood-stop"*) stop_flood; watching=0 ;;
		esac
	done
	stop_flood
}

NETRESERVE_PORTS_FILE=$ports "$top/tests/qemu/boot.sh" --topology pair "$@" 2>&1 | reader
rc=${PIPESTATUS[0]}
# One file, the sum of the flooders' seconds, for the report.
cat "$floodlog".small "$floodlog".jumbo 2>/dev/null | awk '
	/^t=/ { split($1, t, "="); split($2, o, "="); n[t[2]] += o[2] }
	/^total/ { split($2, o, "="); total += o[2] }
	END { for (s in n) printf "t=%d offered=%d\n", s, n[s]; printf "total offered=%d\n", total }' |
	sort -t= -k2,2n >"$floodlog"
rm -f "$floodlog".small "$floodlog".jumbo
exit "$rc"
