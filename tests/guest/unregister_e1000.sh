# Unregister with reserve buffers in the ring and in flight: remove the e1000
# PCI device while its ring holds reserve buffers and a memalloc socket still
# has reserve-backed packets queued.  No warning (the harness fails the run on
# one), the device's pages leave the global reserve, and the packets read
# afterwards are credited to the gone device's state without harm.  A PCI
# rescan brings the NIC back with the default share.
. /tests/lib.sh

stat() { reserve_stat eth0 "$1"; }
pci=$(basename "$(readlink /sys/class/net/eth0/device)")
# The shares are set aside while a memalloc socket exists: hold one throughout.
memalloc_hold || exit 1
base=$(cat /proc/sys/vm/memalloc_reserve_kbytes)

setup_link_pair || { echo "    FAIL: link setup"; exit 1; }
ip netns exec peer sysctl -qw net.ipv6.conf.eth0.disable_ipv6=1
ip neigh replace 192.0.2.1 lladdr 52:54:00:12:00:01 dev eth1 nud permanent
ip -n peer neigh replace 192.0.2.2 lladdr 52:54:00:12:00:02 dev eth0 nud permanent
ip -n peer link set dev eth0 rx_reserve 8

# The receiver lets 5 datagrams queue until it is told to read them.
ip netns exec peer nr-memalloc recv 6000 5 30 mark 120 >/tmp/memalloc.out &
receiver=$!
wait_bound peer udp 6000
check_err $?
echo 1 >$(rx_dbg eth0)/force
ip -n peer link set dev eth0 down
ip -n peer link set dev eth0 up
# The whole share in the ring: 8 packets and the buffer e1000 holds back.
wait_counter eth0 held 9
alloc0=$(stat alloc) rx0=$(rx_packets eth0 peer)
nr-xfer send udp 192.0.2.1 6000 7000
wait_rx_packets eth0 peer $((rx0 + 5))
# 5 buffers queued to the socket, 4 in the ring that cannot be refilled:
# the queued datagrams keep their charge until they are read, so the share
# stays used up and no buffer is allocated in between.  (UDP used to drop
# the charge as it queued a datagram: held read 4, or the ring took 5 more
# buffers from the reserve.)
expect_eq "reserve buffers held before the removal" "$(stat held)" 9
expect_eq "reserve allocations while the datagrams wait" $(($(stat alloc) - alloc0)) 0
expect_udp_queued peer 6000 7000
# What the global reserve holds without eth0 (virtio-net's part is in it).
others=$(( $(cat /proc/sys/vm/memalloc_reserve_kbytes) - $(stat pages) * 4 ))

dbg=$(rx_dbg eth0)
echo 1 >/sys/bus/pci/devices/$pci/remove
check_err $?
[ ! -e "$dbg" ]
check_err $?
expect_eq "memalloc_reserve_kbytes after the removal" "$(cat /proc/sys/vm/memalloc_reserve_kbytes)" "$others"
read_now $receiver
wait $receiver
expect_eq "read after the device was gone" "$(sed -n 's/^received //p' /tmp/memalloc.out)" 5
log_test "PCI removal with reserve buffers in the ring and in flight"

ip netns del peer
ip addr flush dev eth1
ip link set eth1 down
pci_rescan e1000 eth0
ip -d link show dev eth0 | grep -q "rx_reserve 50 "
check_err $?
expect_eq "memalloc_reserve_kbytes after the rescan" "$(cat /proc/sys/vm/memalloc_reserve_kbytes)" "$base"
memalloc_release
check_err $?
log_test "a PCI rescan brings e1000 back with the default share"
exit $test_failed
