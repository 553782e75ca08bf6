# virtio-net through the RX reserve, in whichever buffer mode QEMU's device
# puts the driver (mergeable by default; small with mrg_rxbuf=off, booted
# with nr_virtio_mode=small; big with mrg_rxbuf=off,host_mtu=9000, booted
# with nr_virtio_mode=big): the default share, the global reserve through
# up/down and MTU changes, the reserve path driven with the debugfs hook,
# and one NIC without a share next to one with.
# timeout: 900
. /tests/lib.sh

# stat NAME [DEV]: a counter of a device's reserve, from debugfs.
stat() { reserve_stat "${2:-eth1}" "$1"; }

# The buffer mode from the device's feature bits (bit 15 is MRG_RXBUF;
# 7, 8 and 10 are GUEST_TSO4, GUEST_TSO6 and GUEST_UFO; 3 is MTU, the
# device's MTU being the most the driver allows) as the driver picks it:
# without mergeable buffers, guest GSO or a device MTU above 1500 means big
# mode, chains of pages.
features=/sys/class/net/eth1/device/features
max_mtu=$(ip -d link show dev eth1 | sed -n 's/.* maxmtu \([0-9]*\).*/\1/p')
mtu=1500
if [ "$(cut -c16 $features)" = 1 ]; then
	mode=mergeable pages_per_buf=1
elif [ "$(cut -c8,9,11 $features)" != 000 ]; then
	mode=big pages_per_buf=18	# MAX_SKB_FRAGS + 1
elif [ "$(cut -c4 $features)" = 1 ] && [ "$max_mtu" -gt 1500 ]; then
	mode=big pages_per_buf=$((1 + (max_mtu + 4095) / 4096)) mtu=$max_mtu
else
	mode=small pages_per_buf=1
fi
# Datagrams of one frame each at that MTU: in big mode they span the pages
# of a chain.
dgram=$((mtu - 100))
# The ring size the tests resize from and back to.
ring=$(ethtool -g eth1 | awk '/^Current/ { c = 1 } c && /^RX:/ { print $2; exit }')
# 1000 cycles, unless the boot asks for fewer: make check's main boot does
# 100 and its small-mode boot, running beside it, the 1000.
cycles=$(boot_arg nr_updown_cycles 1000)

test_mode()
{
	want=$(boot_arg nr_virtio_mode mergeable)
	expect_eq "virtio-net buffer mode" "$mode" "$want"
	log_test "virtio-net runs with $want receive buffers ($pages_per_buf pages each)"
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
	# The shares are set aside while a memalloc socket exists.
	memalloc_hold
	check_err $?
	base=$(reserve_kb)
	ip link set dev eth1 up
	pages=$(ip_json eth1 pages)
	# The pages of 50 buffers, and the packet metadata.
	data=$((50 * pages_per_buf))
	[ -n "$pages" ] && [ "$pages" -gt $data ] && [ "$pages" -lt $((data + 20)) ] ||
		{ echo "    $pages pages for 50 buffers of $pages_per_buf"; ret=1; }
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
	# Up to 1500 a packet takes one buffer in every mode, so the reserve
	# must not move.
	mtu_cycles eth1 1280 1500 20
	check_err $?
	expect_eq "after MTU changes" "$(reserve_kb)" "$up"
	expect_eq "buffers at 1500" "$(ip_json eth1 buffers)" 50
	what="MTU 1280/1500 changes leave virtio-net's part unchanged"
	# rx_reserve counts packets (v2): in mergeable mode a 9000-byte packet,
	# 12 bytes of virtio header and 18 of Ethernet and VLAN header, spans
	# 3 reserve buffers of a page less skb_shared_info (3776 bytes).
	if [ "$mode" = mergeable ]; then
		ip link set dev eth1 mtu 9000
		check_err $?
		p9000=$(ip_json eth1 pages)
		expect_eq "share at 9000 (packets)" "$(ip_json eth1 share)" 50
		expect_eq "buffers at 9000" "$(ip_json eth1 buffers)" 150
		[ -n "$p9000" ] && [ "$p9000" -gt 150 ] && [ "$p9000" -lt $((150 + 60)) ]
		check_err $?
		expect_eq "global reserve at 9000" "$(reserve_kb)" $((base + p9000 * 4))
		ip link set dev eth1 mtu 1500
		expect_eq "global reserve back at 1500" "$(reserve_kb)" "$up"
		expect_eq "buffers back at 1500" "$(ip_json eth1 buffers)" 50
		what="$what; at MTU 9000 50 packets are 150 mergeable buffers ($p9000 pages), and back"
	fi
	ip link set dev eth1 down
	expect_eq "down" "$(reserve_kb)" "$base"
	memalloc_release
	check_err $?
	log_test "$what"
}

# Send COUNT UDP datagrams of $dgram bytes from the peer namespace (e1000)
# to the root namespace (virtio-net) on PORT.
send_udp() { ip netns exec peer nr-xfer send udp 192.0.2.2 "$1" $(($2 * dgram)) $dgram; }

# The link pair at this mode's MTU, carrying only the tests' datagrams (no
# neighbour discovery, no IPv6 chatter), one frame each however big (no IP
# fragments to count), and virtio-net with a share of 8.
quiet_link_pair()
{
	setup_link_pair || { echo "    link setup failed"; return 1; }
	sysctl -qw net.ipv6.conf.eth1.disable_ipv6=1
	ip neigh replace 192.0.2.1 lladdr 52:54:00:12:00:01 dev eth1 nud permanent
	ip -n peer neigh replace 192.0.2.2 lladdr 52:54:00:12:00:02 dev eth0 nud permanent
	ip -n peer link set dev eth0 mtu "$mtu"
	ip link set dev eth1 mtu "$mtu"
	ip link set dev eth1 rx_reserve 8
	# e1000 resets for a new MTU: its link is back after its watchdog
	# runs (what the tests' fixed sleeps used to cover).
	wait_pair_carrier
}

# restore_link_pair: normal allocations again and the ring back at its size
# (the resize frees the reserve buffers still posted: all must have been
# credited), then the default share and MTU, and the pair undone.
restore_link_pair()
{
	echo 0 >$(rx_dbg eth1)/force
	ethtool -G eth1 rx "$ring"
	check_err $?
	expect_eq "held after the resize back to $ring" "$(stat held)" 0
	ip link set dev eth1 down
	ip link set dev eth1 rx_reserve 50
	teardown_link_pair
	sysctl -qw net.ipv6.conf.eth1.disable_ipv6=0
	ip -n peer link set dev eth0 mtu 1500 2>/dev/null
}

test_reserve_path()
{
	quiet_link_pair || { ret=1; log_test "reserve path"; return; }

	nr-memalloc recv 6000 20 20 mark >/tmp/memalloc.out &
	memalloc_pid=$!
	nr-xfer recv udp 6001 $((20 * dgram)) 10 >/tmp/plain.out &
	plain_pid=$!
	wait_bound "" udp 6000 && wait_bound "" udp 6001
	check_err $?

	# Every normal RX allocation of eth1 fails from now on.  virtio-net
	# keeps its posted buffers across down/up, so refill the ring by
	# resizing it: the old buffers go, the new ones come from the reserve.
	echo 1 >$(rx_dbg eth1)/force
	ethtool -G eth1 rx 16
	check_err $?
	wait_counter eth1 held 8
	expect_eq "held after refilling a ring of 16 with a share of 8" "$(stat held)" 8
	alloc0=$(stat alloc) dropped0=$(stat dropped) delivered0=$(stat delivered) refused0=$(stat refused)
	[ "$alloc0" -ge 1 ] || { echo "    the ring was not refilled from the reserve"; ret=1; }

	send_udp 6001 20
	wait_counter eth1 dropped $((dropped0 + 20))
	expect_alive $plain_pid "the ordinary receiver"
	sleep 0.5	# and nothing beyond
	dropped1=$(stat dropped)
	expect_eq "packets dropped for an ordinary socket" $((dropped1 - dropped0)) 20
	send_udp 6000 20
	expect_reserve_outcome eth1 $memalloc_pid $plain_pid "$delivered0" "$dropped1" 20 8 "$refused0"

	restore_link_pair
	log_test "reserve path ($mode, $dgram-byte frames): bound 8, 20 dropped for an ordinary socket, 20 delivered to a memalloc one, a ring resize credits the rest"
}

# The sum of one of virtio-net's per-queue counters (rx_queue_N_NAME).
queue_stat() { ethtool -S eth1 | awk -v k="_$1:" 'index($1, k) && $1 ~ /^rx_queue_/ { n += $2 } END { print n + 0 }'; }

# XDP on reserve buffers: whatever the program decides, each buffer leaves
# the accounting exactly once, and the driver reads a buffer's charge
# before it hands the page on (XDP_TX, XDP_REDIRECT), as the page may be
# freed by then.  The buffers posted before the program came have no XDP
# headroom, so the first packets go through the copy (xdp_linearize_page())
# and the original page is put before the verdict's accounting.
test_xdp_reserve_path()
{
	quiet_link_pair || { ret=1; log_test "XDP on reserve buffers"; return; }
	if [ "$mode" = big ]; then
		# virtio-net in 6.1 has no multi-buffer XDP: no program at 9000.
		nr-xdp eth1 drop 2>/dev/null
		check_fail $?
		restore_link_pair
		log_test "XDP: big mode at MTU $mtu refuses a program, so no XDP path sees its reserve chains"
		return
	fi
	# The reserve is only for while a memalloc socket exists.
	memalloc_hold
	check_err $?
	echo 1 >$(rx_dbg eth1)/force
	ethtool -G eth1 rx 16
	check_err $?
	wait_counter eth1 held 8
	expect_eq "held after refilling a ring of 16 with a share of 8" "$(stat held)" 8
	for action in drop tx redirect pass; do
		nr-xdp eth1 "$action"
		check_err $?
		xdp0=$(queue_stat xdp_packets) alloc0=$(stat alloc) dropped0=$(stat dropped)
		send_udp 6001 20
		wait_ge $((xdp0 + 20)) queue_stat xdp_packets
		wait_counter eth1 alloc $((alloc0 + 20))
		sleep 0.5	# and nothing beyond
		expect_eq "XDP $action: frames the program saw" $(($(queue_stat xdp_packets) - xdp0)) 20
		expect_eq "XDP $action: buffers refilled from the reserve" $(($(stat alloc) - alloc0)) 20
		expect_eq "XDP $action: held, the ring full again" "$(stat held)" 8
		# Passed up, they reach no memalloc socket: dropped, and counted.
		want_dropped=0
		[ "$action" = pass ] && want_dropped=20
		expect_eq "XDP $action: counted as dropped" $(($(stat dropped) - dropped0)) "$want_dropped"
	done
	expect_eq "frames XDP_TX sent" "$(queue_stat xdp_tx)" 20
	expect_eq "frames XDP_REDIRECT sent" "$(queue_stat xdp_redirects)" 20
	nr-xdp eth1 off
	check_err $?
	restore_link_pair
	memalloc_release
	check_err $?
	log_test "XDP on reserve buffers ($mode): drop, tx, redirect and pass, 20 frames each, each buffer credited once"
}

test_one_nic_without_share()
{
	# A memalloc socket exists, so both NICs would use the reserve.  (It
	# used to be a receiver that gave up after 6 s, which on a debug
	# kernel was before the checks: "kill: No such process" at the end.)
	memalloc_hold 6010
	check_err $?
	ip link set dev eth0 rx_reserve 0
	echo 1 >$(rx_dbg eth0)/force
	echo 1 >$(rx_dbg eth1)/force
	e1000_alloc0=$(stat alloc eth0) virtio_alloc0=$(stat alloc)
	ip link set dev eth0 up
	ip link set dev eth1 up
	ethtool -G eth1 rx 64	# refill virtio-net's ring (see test_reserve_path)
	wait_counter eth1 alloc $((virtio_alloc0 + 1))
	sleep 0.5	# and e1000's refill, which must take nothing
	expect_eq "eth0 pages with rx_reserve 0" "$(ip_json eth0 pages)" 0
	[ "$(ip_json eth1 pages)" -gt 0 ] || { echo "    eth1 adds no pages"; ret=1; }
	expect_eq "eth0 allocations from the reserve" $(($(stat alloc eth0) - e1000_alloc0)) 0
	[ $(($(stat alloc) - virtio_alloc0)) -gt 0 ] || { echo "    eth1 took nothing from the reserve"; ret=1; }
	echo 0 >$(rx_dbg eth0)/force
	echo 0 >$(rx_dbg eth1)/force
	ethtool -G eth1 rx "$ring"
	ip link set dev eth0 down
	ip link set dev eth1 down
	expect_eq "held after down and a resize" "$(stat held eth0) $(stat held)" "0 0"
	ip link set dev eth0 rx_reserve 50
	memalloc_release
	check_err $?
	log_test "rx_reserve 0 on e1000: it takes nothing from the reserve while virtio-net does"
}

# Traffic into virtio-net still works after the conversion, TCP and UDP,
# IPv4 and IPv6, in this buffer mode and at its MTU (traffic.sh covers the
# default boot): nr-xfer checks every byte against its pattern (UDP may lose
# datagrams, never corrupt them).
test_throughput()
{
	setup_link_pair || { echo "    link setup failed"; ret=1; log_test "throughput"; return; }
	ip -n peer link set dev eth0 mtu "$mtu"
	ip link set dev eth1 mtu "$mtu"
	ip netns exec peer ping -c 2 -W 2 -s "$dgram" 192.0.2.2 >/dev/null
	check_err $?
	for proto in tcp udp; do
		for dst in 192.0.2.2 2001:db8::2; do
			nr-xfer recv $proto 7000 262144 20 >/tmp/xfer.out &
			rx=$!
			sleep 0.5
			ip netns exec peer nr-xfer send $proto $dst 7000 262144 $dgram
			check_err $?
			wait $rx || { echo "    $proto to $dst: $(cat /tmp/xfer.out)"; ret=1; }
		done
	done
	ip -n peer link set dev eth0 mtu 1500
	teardown_link_pair
	log_test "TCP and UDP, IPv4 and IPv6, into virtio-net ($mode, MTU $mtu), and $dgram-byte pings (a frame each): the data arrives intact"
}

# Unregister with reserve buffers in the ring and in flight: remove the
# virtio-net PCI device while its ring holds reserve buffers and a memalloc
# socket still has reserve-backed packets queued.  No warning (the harness
# fails the run on one), the device's pages leave the global reserve, and
# the packets read afterwards are credited to the gone device's state.  A
# PCI rescan brings the NIC back with the default share.
test_unregister()
{
	memalloc_hold
	check_err $?
	base=$(reserve_kb)
	pci=$(basename "$(dirname "$(readlink -f /sys/class/net/eth1/device)")")
	quiet_link_pair || { ret=1; log_test "unregister"; return; }

	# The receiver lets 5 datagrams queue until it is told to read them.
	nr-memalloc recv 6000 5 30 mark 120 >/tmp/memalloc.out &
	receiver=$!
	wait_bound "" udp 6000
	check_err $?
	echo 1 >$(rx_dbg eth1)/force
	ethtool -G eth1 rx 16	# refill the ring from the reserve
	wait_counter eth1 held 8
	rx0=$(rx_packets eth1)
	send_udp 6000 5
	wait_rx_packets eth1 "" $((rx0 + 5))
	sleep 0.5	# for the refill attempt that must find nothing
	# 5 buffers in the socket's queue, 3 still posted, none to refill with.
	expect_eq "held before the removal" "$(stat held)" 8
	if [ "$mode" = big ]; then
		# A queued datagram's memory is the pages of its chain that it
		# fills and an sk_buff, nothing beside them: the chain's first
		# page keeps room for skb_shared_info and is the head.  (Before,
		# the packet got a head of its own, a 1 KiB kmalloc() the
		# share did not count, beside the pages.)  The frame: 16 bytes of
		# padded virtio header, Ethernet, IPv4 and UDP headers and the
		# datagram, then 320 bytes of skb_shared_info in the first page.
		pages=$(( (16 + 14 + 20 + 8 + dgram + 320 + 4095) / 4096 ))
		per=$(( $(udp_queue "" 6000 | cut -d' ' -f1) / 5 ))
		[ "$per" -ge $((pages * 4096)) ] && [ "$per" -lt $((pages * 4096 + 512)) ] ||
			{ echo "    a queued $dgram-byte datagram takes $per bytes, want its $pages pages and an sk_buff"; ret=1; }
	fi
	others=$(( $(reserve_kb) - $(stat pages) * 4 ))

	dbg=$(rx_dbg eth1)
	echo 1 >"/sys/bus/pci/devices/$pci/remove"
	check_err $?
	[ ! -e "$dbg" ]
	check_err $?
	expect_eq "memalloc_reserve_kbytes after the removal" "$(reserve_kb)" "$others"
	read_now $receiver
	wait $receiver
	expect_eq "read after the device was gone" "$(sed -n 's/^received //p' /tmp/memalloc.out)" 5
	log_test "PCI removal of virtio-net ($mode) with reserve buffers in the ring and in flight"

	ip -n peer link set dev eth0 mtu 1500
	ip netns del peer
	ip link set eth0 down
	pci_rescan virtio_net eth1
	ip -d link show dev eth1 | grep -q "rx_reserve 50 "
	check_err $?
	expect_eq "memalloc_reserve_kbytes after the rescan" "$(reserve_kb)" "$base"
	memalloc_release
	check_err $?
	sysctl -qw net.ipv6.conf.eth1.disable_ipv6=0
	log_test "a PCI rescan brings virtio-net back with the default share"
}

test_mode
test_default
test_global_reserve_follows
test_reserve_path
test_xdp_reserve_path
test_one_nic_without_share
test_throughput
test_unregister	# last: the device is a new one afterwards
exit $test_failed
