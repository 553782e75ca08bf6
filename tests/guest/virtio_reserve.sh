# virtio-net through the RX reserve, in whichever buffer mode QEMU's device
# puts the driver (mergeable by default; small with mrg_rxbuf=off, booted
# with nr_virtio_mode=small): the default share, the global reserve through
# up/down and MTU changes, the reserve path driven with the debugfs hook,
# and one NIC without a share next to one with.
# timeout: 900
. /tests/lib.sh

dbg=/sys/kernel/debug/rx_reserve/eth1
# stat NAME [DEV]: a counter of a device's reserve, from debugfs.
stat() { reserve_stat "${2:-eth1}" "$1"; }

# The buffer mode from the device's feature bits: bit 15 is MRG_RXBUF.
mode=mergeable
[ "$(cut -c16 /sys/class/net/eth1/device/features)" = 1 ] || mode=small
# The ring size the tests resize from and back to.
ring=$(ethtool -g eth1 | awk '/^Current/ { c = 1 } c && /^RX:/ { print $2; exit }')
# 1000 cycles, unless the boot asks for fewer: make check's main boot does
# 100 and its small-mode boot, running beside it, the 1000.
cycles=$(sed -n 's/.*nr_updown_cycles=\([0-9]*\).*/\1/p' /proc/cmdline)
cycles=${cycles:-1000}

test_mode()
{
	want=mergeable
	grep -q nr_virtio_mode=small /proc/cmdline && want=small
	expect_eq "virtio-net buffer mode" "$mode" "$want"
	log_test "virtio-net runs with $want receive buffers"
}

test_default()
{
	ip -d link show dev eth1 | grep -q "rx_reserve 50 "
	check_err $?
	for n in 0 1 4096 50; do
		ip link set dev eth1 rx_reserve $n
		check_err $?
		expect_eq "rx_reserve" "$(ip -d link show dev eth1 | sed -n 's/.* rx_reserve \([0-9]*\) .*/\1/p')" "$n"
	done
	log_test "virtio-net ($mode) starts with rx_reserve 50 and reads back what is set"
}

test_global_reserve_follows()
{
	base=$(reserve_kb)
	ip link set dev eth1 up
	pages=$(ip_pages eth1)
	# A page per buffer, and the packet metadata.
	[ -n "$pages" ] && [ "$pages" -gt 50 ] && [ "$pages" -lt 70 ]
	check_err $?
	expect_eq "memalloc_reserve_kbytes when up" "$(reserve_kb)" $((base + pages * 4))
	ip link set dev eth1 down
	expect_eq "memalloc_reserve_kbytes when down" "$(reserve_kb)" "$base"
	log_test "up adds the reported pages ($pages) to the global reserve, down takes them back"

	updown_cycles eth1 "$cycles"
	check_err $?
	expect_eq "after the up/down cycles" "$(reserve_kb)" "$base"
	log_test "$cycles up/down cycles leave the global reserve where it was"

	ip link set dev eth1 up
	up=$(reserve_kb)
	# Without VIRTIO_NET_F_MTU the device allows up to 1500; the layout
	# does not depend on the MTU, so the reserve must not move.
	mtu_cycles eth1 1280 1500 20
	check_err $?
	expect_eq "after MTU changes" "$(reserve_kb)" "$up"
	ip link set dev eth1 down
	expect_eq "down" "$(reserve_kb)" "$base"
	log_test "MTU changes leave virtio-net's part unchanged (one page per buffer at any MTU)"
}

# Send COUNT UDP datagrams of 1400 bytes from the peer namespace (e1000) to
# the root namespace (virtio-net) on PORT.
send_udp() { ip netns exec peer nr-xfer send udp 192.0.2.2 "$1" $(($2 * 1400)); }

test_reserve_path()
{
	setup_link_pair || { echo "    link setup failed"; ret=1; log_test "reserve path"; return; }
	# Only our datagrams: no neighbour discovery, no IPv6 chatter.
	sysctl -qw net.ipv6.conf.eth1.disable_ipv6=1
	ip neigh replace 192.0.2.1 lladdr 52:54:00:12:00:01 dev eth1 nud permanent
	ip -n peer neigh replace 192.0.2.2 lladdr 52:54:00:12:00:02 dev eth0 nud permanent
	ip link set dev eth1 rx_reserve 8

	nr-memalloc recv 6000 20 20 mark >/tmp/memalloc.out &
	memalloc_pid=$!
	nr-xfer recv udp 6001 28000 10 >/tmp/plain.out &
	plain_pid=$!
	sleep 1

	# Every normal RX allocation of eth1 fails from now on.  virtio-net
	# keeps its posted buffers across down/up, so refill the ring by
	# resizing it: the old buffers go, the new ones come from the reserve.
	echo 1 >$dbg/force
	ethtool -G eth1 rx 16
	check_err $?
	sleep 2
	expect_eq "held after refilling a ring of 16 with a share of 8" "$(stat held)" 8
	alloc0=$(stat alloc) dropped0=$(stat dropped) delivered0=$(stat delivered)
	[ "$alloc0" -ge 1 ] || { echo "    the ring was not refilled from the reserve"; ret=1; }

	send_udp 6001 20
	wait_counter eth1 dropped $((dropped0 + 20))
	sleep 0.5	# and nothing beyond
	dropped1=$(stat dropped)
	expect_eq "packets dropped for an ordinary socket" $((dropped1 - dropped0)) 20
	send_udp 6000 20
	expect_reserve_outcome eth1 $memalloc_pid $plain_pid "$delivered0" "$dropped1" 20 8

	# The reserve buffers still posted are freed by the resize: all credited.
	echo 0 >$dbg/force
	ethtool -G eth1 rx "$ring"
	check_err $?
	expect_eq "held after the resize back to $ring" "$(stat held)" 0
	ip link set dev eth1 down
	ip link set dev eth1 rx_reserve 50
	teardown_link_pair
	sysctl -qw net.ipv6.conf.eth1.disable_ipv6=0
	log_test "reserve path ($mode): bound 8, 20 dropped for an ordinary socket, 20 delivered to a memalloc one, a ring resize credits the rest"
}

test_one_nic_without_share()
{
	# A memalloc socket exists, so both NICs would use the reserve.
	nr-memalloc recv 6010 1 6 mark >/dev/null &
	holder=$!
	sleep 0.5
	ip link set dev eth0 rx_reserve 0
	echo 1 >/sys/kernel/debug/rx_reserve/eth0/force
	echo 1 >$dbg/force
	e1000_alloc0=$(stat alloc eth0) virtio_alloc0=$(stat alloc)
	ip link set dev eth0 up
	ip link set dev eth1 up
	ethtool -G eth1 rx 64	# refill virtio-net's ring (see test_reserve_path)
	sleep 1
	expect_eq "eth0 pages with rx_reserve 0" "$(ip_pages eth0)" 0
	[ "$(ip_pages eth1)" -gt 0 ] || { echo "    eth1 adds no pages"; ret=1; }
	expect_eq "eth0 allocations from the reserve" $(($(stat alloc eth0) - e1000_alloc0)) 0
	[ $(($(stat alloc) - virtio_alloc0)) -gt 0 ] || { echo "    eth1 took nothing from the reserve"; ret=1; }
	echo 0 >/sys/kernel/debug/rx_reserve/eth0/force
	echo 0 >$dbg/force
	ethtool -G eth1 rx "$ring"
	ip link set dev eth0 down
	ip link set dev eth1 down
	expect_eq "held after down and a resize" "$(stat held eth0) $(stat held)" "0 0"
	ip link set dev eth0 rx_reserve 50
	kill $holder
	wait $holder 2>/dev/null
	log_test "rx_reserve 0 on e1000: it takes nothing from the reserve while virtio-net does"
}

# Traffic into virtio-net still works after the conversion, TCP and UDP,
# IPv4 and IPv6, in this buffer mode (traffic.sh covers the default boot):
# nr-xfer checks every byte against its pattern (UDP may lose datagrams, never
# corrupt them).
test_throughput()
{
	setup_link_pair || { echo "    link setup failed"; ret=1; log_test "throughput"; return; }
	for proto in tcp udp; do
		for dst in 192.0.2.2 2001:db8::2; do
			nr-xfer recv $proto 7000 262144 20 >/tmp/xfer.out &
			rx=$!
			sleep 0.5
			ip netns exec peer nr-xfer send $proto $dst 7000 262144
			check_err $?
			wait $rx || { echo "    $proto to $dst: $(cat /tmp/xfer.out)"; ret=1; }
		done
	done
	teardown_link_pair
	log_test "TCP and UDP, IPv4 and IPv6, into virtio-net ($mode): the data arrives intact"
}

test_mode
test_default
test_global_reserve_follows
test_reserve_path
test_one_nic_without_share
test_throughput
exit $test_failed
