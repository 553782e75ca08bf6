#!/bin/bash
# make soak DURATION=S: the pressure scenario on the patched kernel for S
# seconds (tests/pressure/pressure.sh with nr_soak): swap over NBD on e1000
# while flooded from the host (scripts/flooded-pair.sh, SOAK_RATE packets/s,
# 100000), the workload run again and again, and link flaps, MTU and
# rx_reserve changes at random on the client's NICs.  Passes when no guest
# hung or complained, every run's data verified, nothing is held at the
# end, the global reserve is exactly the NBD NIC's share again, and
# min_free_kbytes is back to its base.  Ends with "N passed, N failed".
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
duration=${1:-600}
out=$top/build/soak
mkdir -p "$out"
export NETRESERVE_ALLOW_ALLOC_FAILURE=1	# see boot.sh
passed=0 failed=0

check() {
	if [ "$2" = 0 ]; then
		passed=$((passed + 1)); echo "    ok: soak: $1"
	else
		failed=$((failed + 1)); echo "    FAIL: soak: $1"
	fi
}
field() { printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -1; }

echo "soak: ${duration} s of pressure, flood, link flaps and rx_reserve/MTU changes (patched kernel, e1000)"
"$top/scripts/flooded-pair.sh" eth0 1500 "${SOAK_RATE:-100000}" "$out/soak.flood" -- \
	--mode script --script "$top/tests/pressure/pressure.sh" \
	--mem 256 --server-mem 1024 --timeout $((duration + 900)) --log "$out/soak.log" \
	--append "nr_nic=eth0 nr_mtu=1500 nr_hog=384 nr_hogs=4 nr_swap=448 nr_soak=$duration" \
	> >(grep --line-buffered -E 'nr-soak-run|boot.sh|flood:|flooded-pair' | sed -u 's/^/soak: /') 2>&1
rc=$?
log=$out/soak-client.log
line=$(grep -a '^nr-soak ' "$log" | tail -1 | sed 's/\r$//')
echo "soak: ${line:-no result}"

check "the guests finished and their consoles are clean (boot.sh status $rc; $(grep -ac 'page allocation failure' "$out/soak-client.log" 2>/dev/null) GFP_ATOMIC failure reports, not counted)" "$rc"
[ -n "$line" ]
check "the client reported within the deadline (no hang)" $?
runs=$(field "$line" runs) bad=$(field "$line" bad_runs)
[ "${runs:-0}" -gt 0 ] && [ "${bad:-1}" = 0 ]
check "$runs workload runs, $bad with an error or a differing byte ($(field "$line" verified) bytes verified)" $?
[ "$(field "$line" eth0_held)" = 0 ] && [ "$(field "$line" eth1_held)" = 0 ]
check "nothing held at the end (e1000 $(field "$line" eth0_held), virtio-net $(field "$line" eth1_held)) after $(field "$line" actions) random changes" $?
[ -n "$line" ] && [ "$(field "$line" memalloc_reserve_kb)" = "$(field "$line" nic_pages_kb)" ]
check "memalloc_reserve_kbytes back to the NBD NIC's share ($(field "$line" memalloc_reserve_kb) kB)" $?
[ -n "$line" ] && [ "$(field "$line" min_free_kb)" = "$(field "$line" min_free_kb_before)" ]
check "min_free_kbytes back to its base ($(field "$line" min_free_kb) kB)" $?
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
