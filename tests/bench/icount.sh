#!/bin/sh
# make bench's instruction count (boot.sh --icount --mode script): for each
# NIC and IP packet length, nr-icount measures the guest instructions one
# received UDP datagram costs, driver to reader, while the host floods that
# NIC (scripts/icount-bench.sh starts its sender at "nr-icount-ready").
# Each NIC is alone: the other one is down, so nothing else arrives.
. /tests/lib.sh
nics=$(boot_arg nr_icount_nics eth0,eth1 | tr , ' ')
lengths=$(boot_arg nr_icount_lengths 92,1500 | tr , ' ')
calibrate_ms=$(boot_arg nr_icount_calibrate_ms 1000)
quiet_ms=$(boot_arg nr_icount_quiet_ms 300)

for nic in $nics; do
	for other in eth0 eth1; do
		[ "$other" = "$nic" ] || ip link set "$other" down
	done
	ip addr add 10.97.0.2/24 dev "$nic"
	ip link set "$nic" up
	wait_ge 1 cat "/sys/class/net/$nic/carrier" >/dev/null ||
		echo "nr-icount-error iface=$nic no carrier"
	for len in $lengths; do
		# The host reads which NIC and length to flood from this line.
		echo "nr-icount-next iface=$nic len=$len"
		nr-icount "$nic" 9000 "$calibrate_ms" "$quiet_ms" ||
			echo "nr-icount-error iface=$nic len=$len"
		# Where datagrams went, for the log.
		grep '^Udp:' /proc/net/snmp | tr '\n' ' '
		echo
	done
	ip addr flush dev "$nic"
	ip link set "$nic" down
done
