# Traffic crosses the e1000 <-> virtio-net link in both directions, over IPv4
# and IPv6, ICMP, UDP and TCP, so both drivers' RX paths receive real packets.
. /tests/lib.sh

setup_link_pair || { echo "    FAIL: link setup"; exit 1; }

test_ping()
{
	ping -c 3 -W 2 192.0.2.1 >/dev/null
	check_err $?
	ip netns exec peer ping -c 3 -W 2 192.0.2.2 >/dev/null
	check_err $?
	log_test "ICMP over IPv4, both directions"

	ping -6 -c 3 -W 2 2001:db8::1 >/dev/null
	check_err $?
	ip netns exec peer ping -6 -c 3 -W 2 2001:db8::2 >/dev/null
	check_err $?
	log_test "ICMPv6, both directions"
}

# transfer PROTO ADDR PEER_ADDR DESC: send a known pattern from the root
# namespace (eth1, virtio-net) to a receiver in "peer" (eth0, e1000), and one
# back, and check that it arrived intact.
test_transfer()
{
	proto=$1 addr=$2 peer_addr=$3 desc=$4
	bytes=262144

	e1000_before=$(rx_packets eth0 peer)
	ip netns exec peer nr-xfer recv "$proto" 5001 $bytes >/tmp/recv.out &
	sleep 0.5
	nr-xfer send "$proto" "$addr" 5001 $bytes
	check_err $?
	wait $!
	check_err $?
	e1000_after=$(rx_packets eth0 peer)
	cat /tmp/recv.out
	[ "$e1000_after" -gt "$e1000_before" ] || { echo "    e1000 rx_packets did not move"; ret=1; }
	log_test "$desc to e1000"

	virtio_before=$(rx_packets eth1)
	nr-xfer recv "$proto" 5002 $bytes >/tmp/recv.out &
	sleep 0.5
	ip netns exec peer nr-xfer send "$proto" "$peer_addr" 5002 $bytes
	check_err $?
	wait $!
	check_err $?
	virtio_after=$(rx_packets eth1)
	cat /tmp/recv.out
	[ "$virtio_after" -gt "$virtio_before" ] || { echo "    virtio rx_packets did not move"; ret=1; }
	log_test "$desc to virtio-net"
}

test_ping
test_transfer tcp 192.0.2.1 192.0.2.2 "TCP over IPv4"
test_transfer tcp 2001:db8::1 2001:db8::2 "TCP over IPv6"
test_transfer udp 192.0.2.1 192.0.2.2 "UDP over IPv4"
test_transfer udp 2001:db8::1 2001:db8::2 "UDP over IPv6"
teardown_link_pair
exit $test_failed
