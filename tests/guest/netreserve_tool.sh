# The netreserve tool against the patched kernel: show (text and JSON, in
# agreement with ip), set with the kernel's extack messages and exit codes,
# and marking a running block-client-like program's sockets SO_MEMALLOC
# through pidfd_getfd, over TCP and UDP, IPv4 and IPv6, across the
# e1000/virtio-net link.
. /tests/lib.sh

MEMALLOC_SOCKS=/sys/kernel/debug/rx_reserve/memalloc_socks
CAP=/proc/sys/net/core/rx_reserve_max_kbytes

# expect_exit DESC WANT_RC WANT_TEXT CMD...: CMD exits WANT_RC, says WANT_TEXT
# on one line of stderr.
expect_exit()
{
	desc=$1 want_rc=$2 want=$3
	shift 3
	out=$("$@" 2>&1 >/dev/null)
	rc=$?
	expect_eq "$desc: exit status" "$rc" "$want_rc"
	if ! printf '%s' "$out" | grep -qF -- "$want"; then
		echo "    $desc: said '$out', want '$want'"
		ret=1
	fi
	if [ "$(printf '%s\n' "$out" | wc -l)" != 1 ]; then
		echo "    $desc: want a one-line error, got: $out"
		ret=1
	fi
}

# ip's value of FIELD (rx_reserve or a counter) for DEV from its JSON.
ip_json_field()
{
	ip -s -d -j link show dev "$1" | nr-json |
		sed -n "s/^\[0\]\.\(rx_reserve_stats\.\)\{0,1\}$2=//p"
}

test_show()
{
	out=$(netreserve show)
	check_err $?
	# 50 packets at MTU 1500: e1000 (eth0) 50 buffers and the one it
	# holds back from the hardware, virtio-net (eth1) 50.
	for row in "eth0 51" "eth1 50"; do
		set -- $row
		printf '%s\n' "$out" | grep -qE "^$1 +50 +50 +$2 +[0-9]+ +0 " ||
			{ echo "    no $1 row with rx_reserve 50, share 50, buffers $2, held 0: $out"; ret=1; }
	done
	printf '%s\n' "$out" | grep -q '^lo ' && { echo "    lo listed"; ret=1; }
	printf '%s\n' "$out" | grep -qE '^total +[0-9]+ ' || { echo "    no total line"; ret=1; }
	user=$(cat /proc/sys/vm/min_free_kbytes)
	net=$(cat /proc/sys/vm/memalloc_reserve_kbytes)
	printf '%s\n' "$out" | grep -qF \
		"min_free_kbytes: $((user + net)) kB = user $user kB + network $net kB; cap on the network's part $(cat $CAP) kB" ||
		{ echo "    global line wrong: $out"; ret=1; }
	log_test "show: every supported device, a total and the global reserve"

	# eth0's share is set aside while it is up and a memalloc socket exists.
	memalloc_hold
	check_err $?
	ip link set dev eth0 up
	netreserve -j show >/tmp/nr.json
	check_err $?
	nr-json </tmp/nr.json >/tmp/nr.flat
	check_err $?
	i=0
	while name=$(sed -n "s/^\.devices\[$i\]\.ifname=//p" /tmp/nr.flat) && [ -n "$name" ]; do
		for field in rx_reserve pages held peak alloc refused dropped delivered share buffers; do
			mine=$(sed -n "s/^\.devices\[$i\]\.\(rx_reserve_stats\.\)\{0,1\}$field=//p" /tmp/nr.flat)
			expect_eq "$name $field: netreserve vs ip" "$mine" "$(ip_json_field "$name" $field)"
		done
		i=$((i + 1))
	done
	[ $i -ge 1 ] || { echo "    no device in the JSON"; ret=1; }
	i=$(sed -n 's/^\.devices\[\([0-9]*\)\]\.ifname=eth0$/\1/p' /tmp/nr.flat)
	pages=$(sed -n "s/^\.devices\[$i\]\.rx_reserve_stats\.pages=//p" /tmp/nr.flat)
	[ "${pages:-0}" -gt 0 ] || { echo "    eth0 up but adds no pages: ${pages:-none}"; ret=1; }
	expect_eq "network part" "$(sed -n 's/^\.global\.memalloc_reserve_kbytes=//p' /tmp/nr.flat)" \
		"$(cat /proc/sys/vm/memalloc_reserve_kbytes)"
	ip link set dev eth0 down
	memalloc_release
	check_err $?
	log_test "show -j is valid JSON and agrees with ip -s -d -j link show"

	expect_exit "show on a missing device" 3 "no such device: nosuch0" netreserve show nosuch0
	expect_exit "show on lo" 4 "lo does not support an RX reserve" netreserve show lo
	expect_exit "unknown option" 2 "unknown option -x" netreserve -x show
	expect_exit "unknown command" 2 "bad command line: 'frobnicate ...'" netreserve frobnicate
	log_test "show: a missing device, one without support and a bad command line get their own exit codes"
}

test_set()
{
	netreserve set eth0 20
	check_err $?
	expect_eq "rx_reserve after set" "$(ip_json_field eth0 rx_reserve)" 20
	netreserve set eth0 50
	check_err $?
	expect_eq "rx_reserve after set back" "$(ip_json_field eth0 rx_reserve)" 50
	log_test "set: the value reads back through ip"

	expect_exit "not a number" 2 "invalid rx_reserve 'many'" netreserve set eth0 many
	expect_exit "negative" 2 "invalid rx_reserve '-1'" netreserve set eth0 -1
	expect_exit "missing device" 3 "no such device: nosuch0" netreserve set nosuch0 5
	expect_exit "lo" 4 "Device does not support an RX reserve" netreserve set lo 5
	expect_exit "above the maximum" 10 "out of range" netreserve set eth0 4097
	# rtnetlink itself refuses the caller first (no capability over the
	# initial network namespace), before the reserve's own check and message.
	expect_exit "unprivileged" 5 "cannot set rx_reserve of eth0: Operation not permitted" \
		unshare -Ur /usr/local/bin/netreserve set eth0 7
	expect_eq "rx_reserve after the refusals" "$(ip_json_field eth0 rx_reserve)" 50
	log_test "set: bad input gets the kernel's message, its exit code, and changes nothing"

	orig=$(cat $CAP)
	ip link set dev eth0 up
	echo 8 >$CAP
	expect_exit "past the global cap" 10 "would exceed net.core.rx_reserve_max_kbytes" \
		netreserve set eth0 4000
	echo "$orig" >$CAP
	expect_eq "rx_reserve after the cap refusal" "$(ip_json_field eth0 rx_reserve)" 50
	ip link set dev eth0 down
	log_test "set: a share past the global cap is refused with its own exit code"
}

# start_client connect PROTO ADDR PORT | socketpair stream|dgram: a
# block-client-like program connected across the link, or holding a Unix
# socketpair; sets CLIENT, SOCK and FILE.
start_client()
{
	rm -f /tmp/client.out
	nr-client "$@" >/tmp/client.out 2>&1 &
	CLIENT=$!
	for _ in $(seq 50); do
		grep -q '^ready' /tmp/client.out && break
		sleep 0.1
	done
	set -- $(cat /tmp/client.out)
	SOCK=$5 FILE=$7
	[ "$1" = ready ] || { echo "    client did not start: $*"; ret=1; }
}

# The client's own view of its socket: getsockopt(SO_MEMALLOC).
client_memalloc()
{
	n=$(grep -c '^memalloc' /tmp/client.out)
	kill -USR1 "$CLIENT"
	for _ in $(seq 50); do
		[ "$(grep -c '^memalloc' /tmp/client.out)" -gt "$n" ] && break
		sleep 0.1
	done
	sed -n 's/^memalloc //p' /tmp/client.out | tail -1
}

stop_client()
{
	kill "$CLIENT"
	wait "$CLIENT" 2>/dev/null
}

# mark_twice_and_unmark WHAT: mark the client's SOCK, read the mark back in
# the client, mark it again, clear it; memalloc_socks counts it once, then
# is back to $base.
mark_twice_and_unmark()
{
	out=$(netreserve mark "$CLIENT" "$SOCK")
	check_err $?
	expect_eq "$1: mark says" "$out" "marked fd $SOCK of process $CLIENT"
	expect_eq "$1: marked" "$(client_memalloc)" 1
	expect_eq "$1: memalloc sockets after mark" "$(cat $MEMALLOC_SOCKS)" $((base + 1))
	netreserve mark "$CLIENT" "$SOCK" >/dev/null
	check_err $?
	expect_eq "$1: memalloc sockets after a second mark" "$(cat $MEMALLOC_SOCKS)" $((base + 1))

	netreserve unmark "$CLIENT" "$SOCK" >/dev/null
	check_err $?
	expect_eq "$1: unmarked" "$(client_memalloc)" 0
	expect_eq "$1: memalloc sockets after unmark" "$(cat $MEMALLOC_SOCKS)" "$base"
}

test_mark_one()
{
	proto=$1 addr=$2 port=$3
	base=$(cat $MEMALLOC_SOCKS)
	start_client connect "$proto" "$addr" "$port"
	expect_eq "$proto $addr: before" "$(client_memalloc)" 0
	mark_twice_and_unmark "$proto $addr"

	out=$(netreserve mark --all "$CLIENT")
	check_err $?
	expect_eq "$proto $addr: --all marks the socket, not /dev/null" "$out" \
		"marked fd $SOCK of process $CLIENT"
	expect_eq "$proto $addr: marked by --all" "$(client_memalloc)" 1
	stop_client
	expect_eq "$proto $addr: memalloc sockets after close" "$(cat $MEMALLOC_SOCKS)" "$base"
	log_test "mark: $proto to $addr, read back by the client, exact count through close"
}

test_mark()
{
	setup_link_pair || { ret=1; log_test "link pair"; return; }
	ip netns exec peer nr-client listen tcp 192.0.2.1 7001 >/dev/null &
	l1=$!
	ip netns exec peer nr-client listen tcp 2001:db8::1 7002 >/dev/null &
	l2=$!
	ip netns exec peer nr-client listen udp 192.0.2.1 7003 >/dev/null &
	l3=$!
	ip netns exec peer nr-client listen udp 2001:db8::1 7004 >/dev/null &
	l4=$!
	sleep 0.5

	test_mark_one tcp 192.0.2.1 7001
	test_mark_one tcp 2001:db8::1 7002
	test_mark_one udp 192.0.2.1 7003
	test_mark_one udp 2001:db8::1 7004

	# Bad callers and targets: each has its own message and exit code.
	start_client connect tcp 192.0.2.1 7001
	base=$(cat $MEMALLOC_SOCKS)
	expect_exit "unprivileged" 5 "Operation not permitted" \
		unshare -Ur /usr/local/bin/netreserve mark "$CLIENT" "$SOCK"
	expect_eq "unprivileged: still unmarked" "$(client_memalloc)" 0
	expect_eq "unprivileged: memalloc sockets" "$(cat $MEMALLOC_SOCKS)" "$base"
	expect_exit "malformed pid" 2 "invalid pid '12x'" netreserve mark 12x "$SOCK"
	expect_exit "malformed fd" 2 "invalid fd 'x'" netreserve mark "$CLIENT" x
	# pid_max is 4194304 at most: this pid is free in a guest this young.
	expect_exit "no such process" 6 "no such process: 4194000" netreserve mark 4194000 3
	expect_exit "no such fd" 8 "process $CLIENT has no fd 999" netreserve mark "$CLIENT" 999
	expect_exit "not a socket" 7 "fd $FILE of process $CLIENT is not a socket" \
		netreserve mark "$CLIENT" "$FILE"
	stop_client
	# A process that has exited but is not reaped: its parent never waits.
	sh -c 'sleep 0.2 & echo $! >/tmp/zombie; exec sleep 30' &
	parent=$!
	sleep 1
	zombie=$(cat /tmp/zombie)
	expect_exit "exited process" 11 "process $zombie has exited" netreserve mark "$zombie" 0
	kill "$parent"
	wait "$parent" 2>/dev/null
	log_test "mark: EPERM, bad pid, bad fd, a non-socket and an exited process each fail their own way"

	kill $l1 $l2 $l3 $l4
	wait $l1 $l2 $l3 $l4 2>/dev/null
	teardown_link_pair
}

# A user-space NBD client's end of its socketpair with the kernel: a Unix
# stream socket is marked like a TCP one (patch 0040), a datagram one is
# not a socket SO_MEMALLOC takes.
test_mark_unix()
{
	base=$(cat $MEMALLOC_SOCKS)
	start_client socketpair stream
	expect_eq "unix stream: before" "$(client_memalloc)" 0
	mark_twice_and_unmark "unix stream"
	# Both ends of the pair (socketpair() takes the two lowest free fds),
	# not /dev/null.
	out=$(netreserve mark --all "$CLIENT")
	check_err $?
	expect_eq "unix stream: --all marks both ends" "$out" \
		"$(printf 'marked fd %d of process %d\nmarked fd %d of process %d' \
			"$SOCK" "$CLIENT" $((SOCK + 1)) "$CLIENT")"
	expect_eq "unix stream: marked by --all" "$(client_memalloc)" 1
	expect_eq "unix stream: memalloc sockets after --all" "$(cat $MEMALLOC_SOCKS)" $((base + 2))
	stop_client
	expect_eq "unix stream: memalloc sockets after close" "$(cat $MEMALLOC_SOCKS)" "$base"

	start_client socketpair dgram
	expect_exit "unix dgram" 7 "fd $SOCK of process $CLIENT is not a TCP, UDP or Unix stream socket" \
		netreserve mark "$CLIENT" "$SOCK"
	expect_exit "unix dgram, --all" 7 "process $CLIENT has no TCP, UDP or Unix stream socket" \
		netreserve mark --all "$CLIENT"
	expect_eq "unix dgram: unmarked" "$(client_memalloc)" 0
	expect_eq "unix dgram: memalloc sockets" "$(cat $MEMALLOC_SOCKS)" "$base"
	stop_client
	log_test "mark: a Unix stream socketpair (both ends with --all, exact count through close); a datagram one refused"
}

test_show
test_set
test_mark
test_mark_unix
exit $test_failed
