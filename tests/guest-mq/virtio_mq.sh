# virtio-net with 4 queue pairs (boot.sh --topology tap-mq): the RX reserve
# share is split over the active RX queues, so that neither the order in
# which the rings are refilled nor a flood on three queues can leave every
# reserve buffer posted to rings a memalloc socket's flow does not use.
# The tap steers each frame the host sends to RX queue (destination port
# % 4): 200 datagrams a second to port 7003, queue 3, from the start of
# the boot (make check's --tap-send); the flood (--tap-flood) to queues 0-2
# only, from "nr-tap-flood-go" to "nr-tap-flood-stop" on the console.
# timeout: 300
. /tests/lib.sh

dev=eth1
memalloc_port=7003
queues=4

# queue_packets N: packets RX queue N has received.
queue_packets() { ethtool -S $dev | awk -v k="rx_queue_$1_packets:" '$1 == k { print $2 }'; }

# queue_part N FIELD: FIELD (held or buffers) of RX queue N's part of the
# share, from the debugfs hook.
queue_part()
{
	awk -v q="rx-$1" -v f="$2" '$1 == q { for (i = 2; i < NF; i += 2) if ($i == f) print $(i + 1) }' \
		"$(rx_dbg $dev)/queues" 2>/dev/null
}

# expect_parts: each queue holds at most its part, the parts are 13, 13,
# 12 and 12 (50 packets of one mergeable buffer each) and add up to the
# device's share.
expect_parts()
{
	total=0
	for q in 0 1 2 3; do
		part=$(queue_part $q buffers) held=$(queue_part $q held)
		total=$((total + ${part:-0}))
		[ -n "$held" ] && [ "$held" -le "${part:-0}" ] ||
			{ echo "    queue $q holds ${held:-?} buffers of its part ${part:-?}"; ret=1; }
	done
	expect_eq "queue parts of the share" \
		"$(queue_part 0 buffers) $(queue_part 1 buffers) $(queue_part 2 buffers) $(queue_part 3 buffers)" \
		"13 13 12 12"
	expect_eq "the parts add up to the share" "$total" "$(reserve_stat $dev buffers)"
}

# memalloc_receives N: a memalloc socket on queue 3's port receives N
# datagrams, each in a reserve buffer, before 10 s pass without one;
# prints how long it took.
memalloc_receives()
{
	delivered0=$(reserve_stat $dev delivered)
	start=$(date +%s)
	nr-memalloc recv $memalloc_port "$1" 10 mark >/tmp/mq-memalloc.out
	seconds=$(($(date +%s) - start))
	received=$(sed -n 's/^received \([0-9]*\)$/\1/p' /tmp/mq-memalloc.out)
	delivered=$(($(reserve_stat $dev delivered) - delivered0))
	echo "    the memalloc socket received ${received:-nothing} in $seconds s; reserve-backed packets delivered $delivered"
	expect_eq "datagrams the memalloc socket received" "$received" "$1"
	[ "$delivered" -ge "$1" ] ||
		{ echo "    $delivered reserve-backed packets delivered, want at least $1"; ret=1; }
}

setup()
{
	ethtool -L $dev combined $queues
	check_err $?
	expect_eq "active RX queues" "$(ls -d /sys/class/net/$dev/queues/rx-* | wc -l)" $queues
	ip addr add 192.0.2.2/24 dev $dev
	ip link set dev $dev up
	check_err $?
	# The share is set aside while a memalloc socket exists.
	memalloc_hold
	check_err $?
	# Every normal RX allocation fails from now on; resizing the rings
	# frees their buffers and refills them from the reserve, queue 0
	# first.
	echo 1 >"$(rx_dbg $dev)/force"
	ethtool -G $dev rx 64
	check_err $?
	log_test "virtio-net with $queues queue pairs, every RX buffer from the reserve"
}

test_refill_order()
{
	memalloc_receives 400
	expect_parts
	log_test "refilled in queue order, the rings of queues 0-2 hold no more than their parts: queue 3 receives for a memalloc socket"
}

test_flood_on_other_queues()
{
	echo nr-tap-flood-go >/dev/console
	b0=$(queue_packets 0) b1=$(queue_packets 1) b2=$(queue_packets 2)
	wait_ge $((b0 + 1000)) queue_packets 0 ||
		{ echo "    the flood did not come"; ret=1; }
	b3=$(queue_packets 3)
	memalloc_receives 1000
	got0=$(($(queue_packets 0) - b0)) got1=$(($(queue_packets 1) - b1))
	got2=$(($(queue_packets 2) - b2)) got3=$(($(queue_packets 3) - b3))
	echo "nr-tap-flood-stop" >/dev/console
	echo "    RX queues 0-3 received $got0 $got1 $got2 $got3 packets"
	q=0
	for got in $got0 $got1 $got2; do
		[ "$got" -ge 1000 ] || { echo "    the flood reached queue $q $got times"; ret=1; }
		q=$((q + 1))
	done
	# Nothing but the memalloc port's datagrams on queue 3: at most 200 a
	# second (some before the socket was bound, some after it was done),
	# and the 1000 the tap queues (its txqueuelen) while the queue has no
	# buffer.  A quarter of the flood would be thousands a second.
	[ "$got3" -le $((200 * (seconds + 2) + 1000)) ] ||
		{ echo "    queue 3 received $got3 packets in $seconds s: the flood is not kept off it"; ret=1; }
	expect_parts
	log_test "a flood on queues 0-2 leaves queue 3 its part: 1000 datagrams for a memalloc socket on it"
}

test_after_flood()
{
	# The flood's last buffers went back to rings 0-2, which now sit idle.
	sleep 1
	memalloc_receives 400
	expect_parts
	log_test "after the flood, the idle rings of queues 0-2 hold no more than their parts: queue 3 still receives"
}

setup
test_refill_order
test_flood_on_other_queues
test_after_flood
echo 0 >"$(rx_dbg $dev)/force"
memalloc_release
exit $test_failed
