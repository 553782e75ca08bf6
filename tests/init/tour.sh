#!/bin/sh
# The demonstration `make run` shows: the per-device RX reserve on a real
# e1000 NIC, configured and watched with iproute2's ip, the global reserve
# following it, and the reserve path keeping a memalloc socket's traffic
# while ordinary traffic is dropped.
. /tests/lib.sh

say() { printf '\n\033[1m### %s\033[0m\n' "$*"; }
run() { printf '$ %s\n' "$*"; sh -c "$*"; }

say "Kernel: Debian's 6.1 with the netreserve series"
run "uname -r"

say "The two NICs QEMU gives us: eth0 (e1000, converted) and eth1 (virtio-net)"
run "ethtool -i eth0 | head -1; ethtool -i eth1 | head -1"
run "ip -d link show dev eth0 | grep -o 'rx_reserve [0-9]*'"

say "The global reserve: min_free_kbytes (the user's part) and the network's part"
run "cat /proc/sys/vm/min_free_kbytes /proc/sys/vm/memalloc_reserve_kbytes"

say "eth0 comes up: with no network storage (no memalloc socket) nothing is set aside"
run "ip link set dev eth0 rx_reserve 50"
run "ip link set dev eth0 up"
run "cat /proc/sys/vm/memalloc_reserve_kbytes"

say "A block client's socket is marked SO_MEMALLOC: eth0's share (50 buffers) goes into the global reserve"
memalloc_hold >/dev/null
run "cat /proc/sys/vm/memalloc_reserve_kbytes"
run "ip -s -d link show dev eth0"
memalloc_release >/dev/null
echo "(the socket closed)"
run "cat /proc/sys/vm/memalloc_reserve_kbytes"
run "ip link set dev eth0 down"

say "A device without support refuses a share"
run "ip link set dev lo rx_reserve 10"

say "The same picture from the project's tool"
run "netreserve set eth0 50"
run "netreserve show"
run "netreserve show lo; echo \"exit status \$?\""

say "Under pressure (simulated: every normal RX allocation of eth0 fails)"
setup_link_pair >/dev/null || exit 1
ip netns exec peer sysctl -qw net.ipv6.conf.eth0.disable_ipv6=1
ip neigh replace 192.0.2.1 lladdr 52:54:00:12:00:01 dev eth1 nud permanent
ip -n peer neigh replace 192.0.2.2 lladdr 52:54:00:12:00:02 dev eth0 nud permanent
run "ip -n peer link set dev eth0 rx_reserve 8"
# The debugfs hook is per device: <netns inode>-<ifindex>.
dbg=$(rx_dbg eth0 peer)
echo "A block client's socket marked SO_MEMALLOC listens on UDP 6000; an ordinary one on 6001."
ip netns exec peer nr-memalloc recv 6000 10 10 mark >/tmp/memalloc.out &
ip netns exec peer nr-xfer recv udp 6001 14000 6 >/tmp/plain.out &
sleep 1
run "echo 1 > $dbg/force; ip -n peer link set dev eth0 down; ip -n peer link set dev eth0 up"
sleep 2
run "nr-xfer send udp 192.0.2.1 6001 14000   # 10 datagrams for the ordinary socket"
run "nr-xfer send udp 192.0.2.1 6000 14000   # 10 for the memalloc socket"
wait
echo "ordinary socket: $(cat /tmp/plain.out)"
echo "memalloc socket: $(cat /tmp/memalloc.out | tail -1)"
run "ip -n peer -s -d link show dev eth0 | tail -2"
echo 0 >$dbg/force

say "A running user-space block client cannot mark its own socket: netreserve does"
ip netns exec peer nr-client listen tcp 192.0.2.1 7001 >/dev/null &
listener=$!
sleep 0.5
nr-client connect tcp 192.0.2.1 7001 >/tmp/client.out &
client=$!
sleep 0.5
cat /tmp/client.out
set -- $(cat /tmp/client.out)
run "netreserve mark $3 $5"
run "cat /sys/kernel/debug/rx_reserve/memalloc_socks   # memalloc sockets now"
kill -USR1 "$client"
sleep 0.3
echo "the client's own getsockopt(SO_MEMALLOC): $(sed -n 's/^memalloc //p' /tmp/client.out)"
run "netreserve mark $3 $7   # /dev/null, not a socket"
run "netreserve unmark --all $3"
kill "$client" "$listener"
wait "$client" "$listener" 2>/dev/null
teardown_link_pair
say "Done"
