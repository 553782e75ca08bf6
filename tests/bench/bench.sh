#!/bin/sh
# The RX fast-path benchmark, run in one guest (boot.sh --mode script): with
# plenty of memory, small UDP datagrams per second and TCP throughput into
# each NIC (e1000 in the peer namespace, virtio-net in the root one), SECONDS
# each.  Prints one "nr-bench nic=... test=... value=..." line per result.
. /tests/lib.sh
seconds=$(boot_arg nr_bench_seconds 5)

setup_link_pair || exit 1
ip neigh replace 192.0.2.1 lladdr 52:54:00:12:00:01 dev eth1 nud permanent
ip -n peer neigh replace 192.0.2.2 lladdr 52:54:00:12:00:02 dev eth0 nud permanent

# measure NIC PROTO SIZE UNIT: receive on NIC's side, send from the other.
measure()
{
	nic=$1 proto=$2 size=$3
	if [ "$nic" = e1000 ]; then
		rx="ip netns exec peer" tx= dst=192.0.2.1
	else
		rx= tx="ip netns exec peer" dst=192.0.2.2
	fi
	$rx nr-rate recv "$proto" 7100 "$seconds" >/tmp/rate.out &
	receiver=$!
	sleep 0.5
	$tx nr-rate send "$proto" $dst 7100 $((seconds + 2)) "$size"
	wait $receiver || { echo "nr-bench nic=$nic test=$proto$size error"; return; }
	awk -v n="$nic" -v p="$proto" -v s="$size" '{
		packets = $2; bytes = $4; t = $6
		if (p == "udp")
			printf "nr-bench nic=%s test=udp%d_pps value=%.0f\n", n, s, packets / t
		else
			printf "nr-bench nic=%s test=tcp_mbps value=%.1f\n", n, bytes * 8 / t / 1e6
	}' /tmp/rate.out
}

for nic in e1000 virtio-net; do
	measure $nic udp 64
	measure $nic tcp 65000
done
teardown_link_pair
