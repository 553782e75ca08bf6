# virtio-net's big mode (booted with mrg_rxbuf=off and host_mtu=9000, and
# nr_virtio_mode=big): a buffer chains several pages, and the driver leaves
# this mode out of the RX reserve on purpose (see rx-reserve.rst).  It
# reports no rx_reserve, refuses one clearly, adds nothing to the global
# reserve, and still receives jumbo frames.
. /tests/lib.sh

test_big_mode_has_no_reserve()
{
	grep -q nr_virtio_mode=big /proc/cmdline || { echo "    not booted in big mode"; ret=1; }
	expect_eq "MRG_RXBUF feature bit" "$(cut -c16 /sys/class/net/eth1/device/features)" 0
	expect_eq "max MTU" "$(ip -d -j link show dev eth1 | grep -o '"max_mtu":[0-9]*')" '"max_mtu":9000'
	ip -d link show dev eth1 | grep -q rx_reserve && { echo "    eth1 reports rx_reserve"; ret=1; }
	out=$(ip link set dev eth1 rx_reserve 10 2>&1)
	check_fail $?
	printf '%s' "$out" | grep -qF "Device does not support an RX reserve" ||
		{ echo "    said: $out"; ret=1; }
	base=$(cat /proc/sys/vm/memalloc_reserve_kbytes)
	ip link set dev eth1 up && ip link set dev eth1 down
	expect_eq "global reserve after up/down" "$(cat /proc/sys/vm/memalloc_reserve_kbytes)" "$base"
	log_test "big mode: no rx_reserve, a share refused (EOPNOTSUPP), nothing added to the global reserve"
}

test_big_mode_traffic()
{
	setup_link_pair || { ret=1; log_test "big mode traffic"; return; }
	ip -n peer link set dev eth0 mtu 9000
	ip link set dev eth1 mtu 9000
	nr-xfer recv tcp 7000 262144 20 >/tmp/xfer.out &
	rx=$!
	sleep 0.5
	ip netns exec peer nr-xfer send tcp 192.0.2.2 7000 262144
	check_err $?
	wait $rx || { echo "    $(cat /tmp/xfer.out)"; ret=1; }
	ip netns exec peer ping -c 2 -W 2 -s 8000 192.0.2.2 >/dev/null
	check_err $?
	teardown_link_pair
	log_test "big mode: TCP and 8000-byte pings (one frame each at MTU 9000) still arrive"
}

test_big_mode_has_no_reserve
test_big_mode_traffic
exit $test_failed
