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

# expect_eq WHAT GOT WANT: GOT is WANT.  An empty WANT is a mistake in the
# test (a value that could not be read on both sides is not a match), so it
# fails too.
expect_eq()
{
	if [ -z "$3" ]; then
		echo "    $1: nothing to compare with (got '$2')"
		ret=1
	elif [ "$2" != "$3" ]; then
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
	wait_pair_carrier
}

# wait_pair_carrier: wait (up to 10 s) until both ends of the pair have had
# carrier for 1 s without a break.  Right after e1000's down and up, what
# the stack shows can still be the state from before the down until the
# link watch catches up (a bridge port went to forwarding at once, was
# disabled 0.3 s later, and forwarded again only when e1000's watchdog
# found the link 2 s after that); datagrams sent in that gap were dropped.
wait_pair_carrier()
{
	local stable=0
	for _ in $(seq 100); do
		if [ "$(ip netns exec peer cat /sys/class/net/eth0/carrier 2>/dev/null)" = 1 ] &&
		   [ "$(cat /sys/class/net/eth1/carrier 2>/dev/null)" = 1 ]; then
			stable=$((stable + 1))
			[ $stable -ge 10 ] && return 0
		else
			stable=0
		fi
		sleep 0.1
	done
	echo "    link did not come up (and stay up for 1 s)"
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

# rx_dbg DEV [NETNS]: the debugfs folder of DEV's RX reserve, named after
# the inode of DEV's network namespace and its ifindex (names and ifindexes
# repeat across namespaces); its file "name" holds DEV's name.  Without
# NETNS: the only folder of that name, or if there are several, DEV in the
# root namespace or else in "peer".  No process is started in the common
# case: the suites call this in their polling loops.
rx_dbg()
{
	local ino
	set -- "$1" "$2" $(rx_dbg_named "$1" '*')
	if [ -z "$2" ] && [ $# = 3 ]; then
		echo "$3"
		return 0
	fi
	if [ -n "$2" ]; then
		ino=$(command stat -L -c %i "/var/run/netns/$2")
	elif [ -e "/sys/class/net/$1" ]; then
		ino=$(command stat -L -c %i /proc/self/ns/net)
	else
		ino=$(command stat -L -c %i /var/run/netns/peer)
	fi
	set -- "$1" "$2" $(rx_dbg_named "$1" "$ino")
	[ $# -ge 3 ] && { echo "$3"; return 0; }
	echo "rx_dbg: no RX reserve folder for $1${2:+ in $2}" >&2
	return 1
}

# rx_dbg_named DEV INODE: the folders of namespace INODE ('*': any) whose
# name file holds DEV.
rx_dbg_named()
{
	local dir name
	for dir in /sys/kernel/debug/rx_reserve/$2-*; do
		read -r name <"$dir/name" 2>/dev/null && [ "$name" = "$1" ] && echo "$dir"
	done
	return 0
}

# reserve_stat DEV NAME: counter NAME of DEV's RX reserve, from the debugfs
# hook (DEV as rx_dbg finds it).
reserve_stat()
{
	awk -v k="$2" '$1 == k { print $2 }' "$(rx_dbg "$1")/stats"
}

# What devices that are up add to the global reserve, in kB (while a
# memalloc socket exists; 0 otherwise).
reserve_kb() { cat /proc/sys/vm/memalloc_reserve_kbytes; }

# How many sockets are marked SOCK_MEMALLOC now (the debugfs hook).
memalloc_socks() { cat /sys/kernel/debug/rx_reserve/memalloc_socks; }

# wait_memalloc_socks TEST N: wait (up to 5 s) until the count of memalloc
# sockets passes [ COUNT TEST N ] (TEST: -gt, -le, ...).
wait_memalloc_socks()
{
	for _ in $(seq 50); do
		[ "$(memalloc_socks)" "$1" "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

# memalloc_hold [PORT]: keep one more memalloc socket open (a UDP socket on
# PORT, 6999 by default), as a block device's would be, until
# memalloc_release: the up devices' shares are set aside only while one
# exists.  Waits until the kernel counts it.
memalloc_hold()
{
	memalloc_hold_base=$(memalloc_socks)
	nr-memalloc recv "${1:-6999}" 1 3600 mark >/dev/null &
	memalloc_hold_pid=$!
	wait_memalloc_socks -gt "$memalloc_hold_base" ||
		{ echo "    the memalloc socket did not appear"; return 1; }
}

memalloc_release()
{
	kill "$memalloc_hold_pid" 2>/dev/null
	wait "$memalloc_hold_pid" 2>/dev/null
	wait_memalloc_socks -le "$memalloc_hold_base" ||
		{ echo "    the memalloc socket did not go"; return 1; }
}

# rx_packets DEV [NS]: the device's received-packet counter.
rx_packets()
{
	if [ -n "$2" ]; then
		ip netns exec "$2" cat "/sys/class/net/$1/statistics/rx_packets"
	else
		cat "/sys/class/net/$1/statistics/rx_packets"
	fi
}

# udp_queue NS PORT: "BYTES DROPS" of the UDP socket bound to PORT in
# namespace NS ("" for the root namespace; an IPv6 socket, as
# nr-memalloc's): the memory its receive queue holds and the datagrams it
# dropped.
udp_queue()
{
	set -- $(${1:+ip netns exec "$1"} cat /proc/net/udp6 |
		awk -v p="$(printf ':%04X' "$2")" '$2 ~ p "$" { split($5, q, ":"); print q[2], $NF; exit }')
	[ -n "$1" ] && echo "$((0x$1)) $2"
}

# expect_udp_queued NS PORT MORE_THAN: the UDP socket bound to PORT in
# namespace NS holds more than MORE_THAN bytes in its receive queue and has
# dropped no datagram.
expect_udp_queued()
{
	set -- "$1" "$2" "$3" $(udp_queue "$1" "$2")
	[ "${4:-0}" -gt "$3" ] || { echo "    receive queue in $1 holds ${4:-nothing}"; ret=1; }
	expect_eq "datagrams the socket dropped" "$5" 0
}

# sockets_on NS PROTO PORT: how many sockets in namespace NS ("" for the
# root namespace) are bound to PORT (PROTO udp or tcp, IPv4 and IPv6).
sockets_on()
{
	${1:+ip netns exec "$1"} cat "/proc/net/$2" "/proc/net/${2}6" 2>/dev/null |
		awk -v p="$(printf ':%04X' "$3")" '$2 ~ p "$" { n++ } END { print n + 0 }'
}

# wait_bound NS PROTO PORT: wait (up to 20 s) until a socket in NS is bound
# to PORT: a receiver started in the background is ready for traffic.  (A
# fixed "sleep 1" was the guess before; a debug kernel can be slower.)
wait_bound()
{
	wait_ge 1 sockets_on "$@" ||
		{ echo "    nothing bound to $2 port $3 in ${1:-the root namespace}"; return 1; }
}

# read_now PID: tell a receiver started as "nr-memalloc recv ... mark
# DELAY_S" to stop letting datagrams queue and read them.
read_now() { kill -USR1 "$1"; }

# wait_rx_packets DEV NS WANT: wait until DEV in NS has received WANT
# packets in all.
wait_rx_packets() { wait_ge "$3" rx_packets "$1" "$2"; }

# ip_json DEV FIELD: a number from DEV's reserve counters in ip -s -d -j.
ip_json() { ip -s -d -j link show dev "$1" | grep -o "\"$2\":[0-9]*" | cut -d: -f2; }


# pci_rescan DRIVER NAME: rescan the PCI bus after a device was removed,
# and give the NIC DRIVER brings back its usual NAME.
pci_rescan()
{
	echo 1 >/sys/bus/pci/rescan
	sleep 2
	for dev in /sys/class/net/*; do
		drv=$(basename "$(readlink -f "$dev/device/driver" 2>/dev/null)" 2>/dev/null)
		[ "$drv" = "$1" ] && [ "${dev##*/}" != "$2" ] && ip link set "${dev##*/}" name "$2"
	done
}

# boot_arg NAME [DEFAULT]: VALUE of NAME=VALUE on the kernel command line,
# or DEFAULT: lets a boot choose a mode, a scenario's parameters, or fewer
# cycles (make check-debug, KASAN).
boot_arg()
{
	value=$(sed -n "s/.* $1=\([^ ]*\).*/\1/p" /proc/cmdline)
	echo "${value:-${2:-}}"
}

# updown_cycles DEV COUNT: bring DEV up and down COUNT times; fails at the
# first refusal.
updown_cycles()
{
	for _ in $(seq "$2"); do
		ip link set dev "$1" up && ip link set dev "$1" down || return 1
	done
}

# mtu_cycles DEV MTU_A MTU_B COUNT: switch DEV's MTU to MTU_A and back to
# MTU_B COUNT times; fails at the first refusal.
mtu_cycles()
{
	for _ in $(seq "$4"); do
		ip link set dev "$1" mtu "$2" && ip link set dev "$1" mtu "$3" || return 1
	done
}

# expect_reserve_outcome DEV MEMALLOC_PID PLAIN_PID DELIVERED0 DROPPED1 COUNT BOUND REFUSED0
# After COUNT datagrams were sent to the memalloc receiver (nr-memalloc,
# output in /tmp/memalloc.out) with DEV's reserve path forced: it got them
# all, DEV's delivered counter moved by exactly COUNT from DELIVERED0 and the
# dropped one not from DROPPED1, the ordinary receiver (nr-xfer,
# /tmp/plain.out; see expect_alive) got nothing, the peak is exactly BOUND
# (the forced ring takes the whole share), and the share was found used up
# (refused moved from REFUSED0, read once the ring was full and before the
# traffic).
expect_reserve_outcome()
{
	dev=$1 count=$6 bound=$7
	wait "$2"
	wait "$3"
	expect_eq "received by the memalloc socket" "$(sed -n 's/^received //p' /tmp/memalloc.out)" "$count"
	expect_eq "delivered counter" $(($(reserve_stat "$dev" delivered) - $4)) "$count"
	expect_eq "dropped counter after the memalloc traffic" "$(reserve_stat "$dev" dropped)" "$5"
	grep -q "^received 0 bytes" /tmp/plain.out ||
		{ echo "    ordinary socket got: $(cat /tmp/plain.out)"; ret=1; }
	expect_eq "peak" "$(reserve_stat "$dev" peak)" "$bound"
	[ "$(reserve_stat "$dev" refused)" -gt "$8" ] ||
		{ echo "    the share was never found used up during the traffic"; ret=1; }
}

# expect_alive PID WHAT: PID (a receiver) is still running, so what it did
# not receive was really sent while it listened.
expect_alive()
{
	kill -0 "$1" 2>/dev/null || { echo "    $2 had already exited"; ret=1; }
}

# wait_counter DEV NAME WANT: wait (up to 20 s) until DEV's reserve counter
# NAME reaches WANT, since a slow guest (TCG on a busy host) may still be
# receiving; the caller then asserts the exact value.
wait_counter() { wait_ge "$3" reserve_stat "$1" "$2"; }

# wait_ge WANT CMD...: wait (up to 20 s) until CMD prints a number of at
# least WANT.
wait_ge()
{
	_wait_want=$1
	shift
	for _ in $(seq 100); do
		[ "$("$@")" -ge "$_wait_want" ] && return 0
		sleep 0.2
	done
	return 1
}
