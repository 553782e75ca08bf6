#!/bin/sh
# The demonstration `make run` shows: the guest's NICs, their drivers, and
# traffic crossing the e1000 <-> virtio-net link through both RX paths.
. /tests/lib.sh

say() { printf '\n\033[1m### %s\033[0m\n' "$*"; }
run() { printf '$ %s\n' "$*"; sh -c "$*"; }

say "Kernel"
run "uname -r"
run "cat /proc/sys/vm/min_free_kbytes"

say "The two NICs QEMU gives us, joined back to back"
run "ethtool -i eth0 | head -2"
run "ethtool -i eth1 | head -2"

say "eth0 (e1000) goes into namespace 'peer'; eth1 (virtio-net) stays"
setup_link_pair || exit 1
run "ip -n peer -br addr show eth0"
run "ip -br addr show eth1"

say "Traffic through both RX paths"
run "ping -c 2 192.0.2.1"
run "ip netns exec peer ping -6 -c 2 2001:db8::2"
run "ip -s link show eth1"
run "ip -n peer -s link show eth0"
teardown_link_pair
say "Done"
