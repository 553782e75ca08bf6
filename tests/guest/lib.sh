# Helpers shared by the guest tests, in the style of
# tools/testing/selftests/net/rtnetlink.sh: a test function records failed
# checks with check_err/check_fail and ends with log_test.
# The NICs: eth0 is the e1000, eth1 the virtio-net (see /init).

ret=0
test_failed=0

check_err()
{
	if [ "$ret" -eq 0 ]; then
		ret=$1
	fi
}

check_fail()
{
	if [ "$1" -eq 0 ]; then
		ret=1
	fi
}

log_test()
{
	if [ "$ret" -ne 0 ]; then
		echo "    FAIL: $1"
		test_failed=1
	else
		echo "    ok: $1"
	fi
	ret=0
}

# expect_eq WHAT GOT WANT
expect_eq()
{
	if [ "$2" != "$3" ]; then
		echo "    $1: got '$2', want '$3'"
		ret=1
	fi
}

# Put eth0 (e1000) in a namespace "peer" facing eth1 (virtio-net) in the root
# namespace, addressed from the documentation ranges, so traffic between the
# two crosses both drivers' RX paths inside the guest and nowhere else.
setup_link_pair()
{
	ip netns add peer || return 1
	ip link set eth0 netns peer || return 1
	ip -n peer link set lo up
	ip -n peer addr add 192.0.2.1/24 dev eth0
	ip -n peer addr add 2001:db8::1/64 dev eth0 nodad
	ip -n peer link set eth0 up
	ip addr add 192.0.2.2/24 dev eth1
	ip addr add 2001:db8::2/64 dev eth1 nodad
	ip link set eth1 up
	# Wait for carrier on both ends.
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		if ip -n peer link show eth0 | grep -q LOWER_UP && ip link show eth1 | grep -q LOWER_UP; then
			return 0
		fi
		sleep 0.5
	done
	echo "    link did not come up"
	return 1
}

teardown_link_pair()
{
	ip netns exec peer ip link set eth0 netns 1 2>/dev/null
	ip netns del peer 2>/dev/null
	ip addr flush dev eth1 2>/dev/null
	ip link set eth1 down 2>/dev/null
	ip link set eth0 down 2>/dev/null
}

# expect_reserve_outcome STATS MEMALLOC_PID PLAIN_PID DELIVERED0 DROPPED1 COUNT BOUND
# After COUNT datagrams were sent to the memalloc receiver (nr-memalloc,
# output in /tmp/memalloc.out) with the reserve path forced: it got them all,
# the delivered counter in the debugfs STATS file moved by exactly COUNT from
# DELIVERED0 and the dropped one not from DROPPED1, the ordinary receiver
# (nr-xfer, /tmp/plain.out) got nothing, the peak stayed within BOUND, and
# the share was used up at least once.
expect_reserve_outcome()
{
	stats=$1 count=$6 bound=$7
	wait "$2"
	wait "$3"
	counter() { awk -v k="$1" '$1 == k { print $2 }' "$stats"; }
	expect_eq "received by the memalloc socket" "$(sed -n 's/^received //p' /tmp/memalloc.out)" "$count"
	expect_eq "delivered counter" $(($(counter delivered) - $4)) "$count"
	expect_eq "dropped counter after the memalloc traffic" "$(counter dropped)" "$5"
	grep -q "^received 0 bytes" /tmp/plain.out ||
		{ echo "    ordinary socket got: $(cat /tmp/plain.out)"; ret=1; }
	peak=$(counter peak)
	[ "$peak" -ge 1 ] && [ "$peak" -le "$bound" ] || { echo "    peak $peak, bound $bound"; ret=1; }
	[ "$(counter refused)" -gt 0 ] || { echo "    the share was never used up"; ret=1; }
}

# wait_counter STATS NAME WANT: wait (up to 20 s) until the counter NAME in
# the debugfs STATS file reaches WANT, since a slow guest (TCG on a busy
# host) may still be receiving; the caller then asserts the exact value.
wait_counter()
{
	for _ in $(seq 100); do
		[ "$(awk -v k="$2" '$1 == k { print $2 }' "$1")" -ge "$3" ] && return 0
		sleep 0.2
	done
	return 1
}
