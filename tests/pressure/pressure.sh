#!/bin/sh
# The pressure scenario, run in both guests of the pair topology (boot.sh
# --topology pair --mode script); nrrole on the command line says which.
#
#   server: exports SWAP_MIB over NBD with Debian's nbd-server (a file on
#           its tmpfs) until the client disconnects, or with nr_client=nvme
#           over NVMe/TCP with the kernel's target (nvmet-tcp, configfs)
#           until the client says it is done; nothing on the server side
#           ever gives up on a silent client.
#   client: little RAM; swap on /dev/nbd0 (or /dev/nvme0n1) over the link
#           (the kernel marks the NBD socket, or every NVMe/TCP queue's
#           socket, SOCK_MEMALLOC); nr-hog writes HOG_MIB (well past
#           RAM) and verifies every byte, while a sampler prints one
#           "nr-sample" line a second.  Ends with one "nr-result" line.
#
# The flood comes from the host (scripts/pressure.sh runs nr-hostflood
# into the client NIC's QEMU socket): the client prints "nr-flood-go" when
# swap is on and "nr-flood-stop" when the workload is over.  Its frames
# come from 10.99.0.3 (a static neighbour, so answers leave without ARP)
# to the client: UDP to a bound socket on port 5001 that never reads, UDP
# to closed ports, TCP SYNs, lone first fragments.
#
# Parameters from the kernel command line:
#   nr_nic=eth0|eth1   the link NBD uses (e1000 or virtio-net)
#   nr_flood_nic=NIC   the client NIC the host floods (default nr_nic); the
#                      other NIC is then up as 10.98.0.2/24
#   nr_mtu=N           its MTU on both ends
#   nr_reserve=N|default  rx_reserve on the client's NICs
#   nr_hog=MIB          what the workload writes, split over nr_hogs processes
#   nr_hogs=N nr_swap=MIB nr_flood=0|1 (0: no flood, the reference run)
#   nr_min_free_kb=KB   vm.min_free_kbytes for the run (default: the kernel's)
#   nr_force=1          every normal RX allocation of the NBD NIC fails
#                       (the debugfs test hook) once swap is on: the worst
#                       case, all of NBD's replies through the reserve
#   nr_client=nr-nbd|nbd-client|relay|relay-nomark  who attaches
#                       /dev/nbd0: the project's nr-nbd (ioctls), Debian's
#                       nbd-client in its default netlink mode (needs the
#                       nbd-client initramfs, scripts/pressure.sh
#                       PRESSURE_CLIENT=nbd-client), or a user-space client
#                       (nr-nbd relay: the kernel talks to it over a Unix
#                       socketpair, it forwards over TCP and marks both its
#                       sockets SO_MEMALLOC itself, or not with relay-nomark;
#                       relay-extmark: unmarked, then netreserve mark --all
#                       marks them from outside)
#   nr_client=nvme      NVMe/TCP instead of NBD: the client writes the
#                       connect string to /dev/nvme-fabrics and swaps on
#                       /dev/nvme0n1
#   nr_writeback=1      no swap: the workload maps /dev/nbd0 (or
#                       /dev/nvme0n1) shared, each process its own part,
#                       so that its pages are dirty page cache the
#                       flusher writes back over the link; each process
#                       syncs and drops its part before reading it back
#                       from the device (the test kernels have no
#                       filesystem, so it is the device's own page cache)
#   nr_nvme_outage=S    with nvme: 10 s after the client connected, the
#                       server takes the subsystem off its port for S
#                       seconds (the target drops the connections), so that
#                       the client must reconnect while it is short of
#                       memory and its swap waits for that controller
#   nr_soak=SECONDS     soak (make soak): run the workload again and again for
#                       SECONDS while link flaps and rx_reserve and MTU
#                       changes hit the client's NICs at random; ends with
#                       one "nr-soak" line instead of "nr-result"
set -u
. /tests/lib.sh
role=$(boot_arg nrrole)
nic=$(boot_arg nr_nic eth0)
flood_nic=$(boot_arg nr_flood_nic "$nic")
mtu=$(boot_arg nr_mtu 1500)
reserve=$(boot_arg nr_reserve default)
hog=$(boot_arg nr_hog 384)
hogs=$(boot_arg nr_hogs 2)
swap=$(boot_arg nr_swap 448)
flood=$(boot_arg nr_flood 1)
min_free=$(boot_arg nr_min_free_kb)
soak=$(boot_arg nr_soak 0)
force=$(boot_arg nr_force 0)
client_prog=$(boot_arg nr_client nr-nbd)
nvme_outage=$(boot_arg nr_nvme_outage 0)
writeback=$(boot_arg nr_writeback 0)
server=10.99.0.1 client=10.99.0.2
port=10809 blk=nbd0
nvme_port=4420 nvme_nqn=nqn.2026-12.example:swap
# The server guest's "I am done" port: the NVMe target has no process that
# would see the client go, so the client tells it.
done_port=10810
[ "$client_prog" = nvme ] && port=$nvme_port blk=nvme0n1
port_hex=$(printf '%04X' "$port")

ip link set dev "$nic" mtu "$mtu" || exit 1
if [ "$role" = server ]; then
	ip addr add $server/24 dev "$nic"
else
	ip addr add $client/24 dev "$nic"
fi
ip link set dev "$nic" up
for _ in $(seq 50); do
	ip link show dev "$nic" | grep -q LOWER_UP && break
	sleep 0.2
done

if [ "$role" = server ]; then
	truncate -s "${swap}M" /tmp/swap.img || exit 1
	# The server's established connections on the port, as /proc/net/tcp
	# lines.
	established() { awk -v p=":$port_hex" '$2 ~ (p "$") && $4 == "01"' /proc/net/tcp /proc/net/tcp6 2>/dev/null; }
	# TCP's counters that say a segment arrived and was not taken, and
	# those of the segments themselves, as name=value for the non-zero ones.
	tcp_drops() {
		awk '$1 == "Tcp:" || $1 == "TcpExt:" { if (!h[$1]) { h[$1] = 1; for (i = 2; i <= NF; i++) n[$1, i] = $i; next }
			for (i = 2; i <= NF; i++) if ($i != 0 && n[$1, i] ~ /^(InSegs|OutSegs|RetransSegs|InErrs|InCsumErrors|PruneCalled|RcvPruned|OfoPruned|TCPRcvQDrop|TCPBacklogDrop|TCPOFODrop|TCPOFOQueue|TCPZeroWindowDrop|TCPDSACKRecv|TCPDSACKOldSent|TCPMemoryPressures|PAWSEstab|TCPACKSkippedSeq|TCPSYNChallenge|TCPChallengeACK)$/) printf "%s=%s ", n[$1, i], $i }' /proc/net/snmp /proc/net/netstat
	}
	if [ "$client_prog" = nvme ]; then
		# The kernel's NVMe/TCP target exports the file.  tmpfs has no
		# O_DIRECT in 6.1, so the namespace does buffered I/O.
		cfs=/sys/kernel/config
		grep -q " $cfs configfs " /proc/mounts || mount -t configfs configfs $cfs || exit 1
		subsys=$cfs/nvmet/subsystems/$nvme_nqn
		mkdir "$subsys" "$subsys/namespaces/1" $cfs/nvmet/ports/1 || exit 1
		echo 1 >"$subsys/attr_allow_any_host"
		echo 1 >"$subsys/namespaces/1/buffered_io"
		echo -n /tmp/swap.img >"$subsys/namespaces/1/device_path"
		echo 1 >"$subsys/namespaces/1/enable" || exit 1
		echo tcp >$cfs/nvmet/ports/1/addr_trtype
		echo ipv4 >$cfs/nvmet/ports/1/addr_adrfam
		echo $server >$cfs/nvmet/ports/1/addr_traddr
		echo $port >$cfs/nvmet/ports/1/addr_trsvcid
		ln -s "$subsys" "$cfs/nvmet/ports/1/subsystems/$nvme_nqn" || exit 1
		if [ "$nvme_outage" != 0 ]; then
			(
				until [ -n "$(established)" ]; do
					sleep 0.5
				done
				sleep 10
				rm "$cfs/nvmet/ports/1/subsystems/$nvme_nqn"
				echo "nr-outage begins: subsystem off the port for $nvme_outage s"
				sleep "$nvme_outage"
				ln -s "$subsys" "$cfs/nvmet/ports/1/subsystems/$nvme_nqn"
				echo "nr-outage ends"
			) &
		fi
		# Stays until the client connects to done_port once it has
		# deleted its controller.
		nc -l -p $done_port >/dev/null 2>&1 &
	else
		# Debian's nbd-server, one client (-d: no fork), no idle timeout.
		cat >/tmp/nbd-server.conf <<-EOF
		[generic]
			port = $port
			allowlist = false
		[swap]
			exportname = /tmp/swap.img
		EOF
		nbd-server -C /tmp/nbd-server.conf -d >/tmp/nbd.out 2>&1 &
	fi
	server_pid=$!
	# Every 5 s, one "nr-server" line: where nbd-server (or nc for NVMe)
	# waits, the server's TCP connections on the port (send and receive
	# queues, retransmit timer) and the NIC's packets, so that a client
	# stall shows which side stopped.
	while sleep 5; do
		kill -0 $server_pid 2>/dev/null || break
		echo "nr-server wchan=$(cat /proc/$server_pid/wchan 2>/dev/null) avail_kb=$(awk '/MemAvailable/ { print $2 }' /proc/meminfo) rx=$(cat /sys/class/net/$nic/statistics/rx_packets) rx_dropped=$(cat /sys/class/net/$nic/statistics/rx_dropped) tx=$(cat /sys/class/net/$nic/statistics/tx_packets) $(tcp_drops) tcp=$(established | awk '{ printf "%s:%s:%s:%s ", $5, $6, $7, $3 }')"
	done &
	wait $server_pid
	rc=$?
	if [ "$client_prog" = nvme ]; then
		echo "nvme target: the client is done (status $rc)"
		exit 0
	fi
	cat /tmp/nbd.out
	# nbd-server says "Connection dropped" and exits 1 when the client
	# disconnects; the client's result is what counts.
	echo "nbd-server exited with status $rc"
	exit 0
fi

# Client.
for _ in $(seq 50); do
	ping -c 1 -W 1 $server >/dev/null 2>&1 && break
done
if [ "$reserve" != default ]; then
	for dev in eth0 eth1; do
		ip link set dev $dev rx_reserve "$reserve" || exit 1
	done
fi
[ -n "$min_free" ] && sysctl -qw vm.min_free_kbytes="$min_free"
# The host's flood comes from 10.99.0.3: answers (SYN-ACKs are not sent for
# closed ports, but ICMP and RSTs may be) go out at once, to a MAC nobody has.
if [ "$flood_nic" = "$nic" ]; then
	ip neigh replace 10.99.0.3 lladdr 52:54:00:12:03:01 dev "$nic" nud permanent
else
	ip link set dev "$flood_nic" mtu "$mtu" up
	ip addr add 10.98.0.2/24 dev "$flood_nic"
	ip neigh replace 10.98.0.3 lladdr 52:54:00:12:03:01 dev "$flood_nic" nud permanent
fi
# A bound socket that never reads: the flood to port 5001 lands there.
nr-memalloc recv 5001 1 1 nomark 100000 >/dev/null 2>&1 &
idle=$!
sleep 2	# let the server listen
# attach: connect /dev/nbd0 to the server's "swap" export (or /dev/nvme0n1
# to its NVMe/TCP subsystem).  The kernel's NBD driver marks the socket
# SOCK_MEMALLOC (nbd_start_device()), the NVMe/TCP host driver every
# queue's socket (nvme_tcp_alloc_queue()); nothing else is needed.
# Debian's nbd-client configures the device over generic netlink and
# exits; its -swap option would only mlock a process that netlink mode
# does not keep, so it is not given.
attach()
{
	case "$client_prog" in
	nr-nbd) nr-nbd attach /dev/nbd0 $server $port swap ;;
	nbd-client) nbd-client -N swap $server $port /dev/nbd0 >/tmp/nbd-client.out 2>&1 ;;
	relay) nr-nbd relay /dev/nbd0 $server $port swap mark ;;
	relay-nomark) nr-nbd relay /dev/nbd0 $server $port swap nomark ;;
	relay-extmark)
		# The same client, unmarked, marked from outside while it runs,
		# as an operator would mark a client they cannot change.
		nr-nbd relay /dev/nbd0 $server $port swap nomark >/tmp/relay.out 2>&1
		r=$?
		cat /tmp/relay.out
		[ "$r" = 0 ] || return 1
		netreserve mark --all "$(sed -n 's/^nr-nbd: relay \([0-9]*\),.*/\1/p' /tmp/relay.out)" ;;
	nvme)
		# No nvme-cli needed: the fabrics driver takes the connect string.
		echo "transport=tcp,traddr=$server,trsvcid=$port,nqn=$nvme_nqn" >/dev/nvme-fabrics || return 1
		for _ in $(seq 50); do
			[ -b /dev/$blk ] && return 0
			sleep 0.2
		done
		return 1 ;;
	*) echo "pressure: unknown nr_client $client_prog" >&2; return 1 ;;
	esac
}
for _ in $(seq 20); do
	attach && break
	sleep 1	# nbd-server may not listen yet
done
if [ "$client_prog" = nbd-client ]; then
	cat /tmp/nbd-client.out
	# Give back the rootfs RAM nbd-client and its own libraries take, so
	# that the client has as much memory as with nr-nbd.
	xargs rm -f </etc/nbd-client.files
fi
[ -b /dev/$blk ] && [ "$(cat /sys/block/$blk/size)" != 0 ] || exit 1
if [ "$writeback" != 1 ]; then
	mkswap /dev/$blk >/dev/null || exit 1
	swapon /dev/$blk || exit 1
fi

kernel=$(uname -r)
echo "nr-info kernel=$kernel client=$client_prog writeback=$writeback nic=$nic mtu=$mtu reserve=$(ip -d link show dev "$nic" | sed -n 's/.* rx_reserve \([0-9]*\) .*/\1/p') hog_mib=$hog swap_mib=$swap mem_kb=$(awk '/MemTotal/ { print $2 }' /proc/meminfo) min_free_kb=$(cat /proc/sys/vm/min_free_kbytes) memalloc_reserve_kb=$(cat /proc/sys/vm/memalloc_reserve_kbytes 2>/dev/null || echo 0)"

# rx_dbg DEV: the debugfs folder of DEV's RX reserve (patched kernels),
# named after the network namespace's inode and the ifindex.
rx_dbg()
{
	echo "/sys/kernel/debug/rx_reserve/$(command stat -L -c %i /proc/self/ns/net)-$(cat "/sys/class/net/$1/ifindex" 2>/dev/null)"
}

if [ "$force" = 1 ]; then
	echo 1 >"$(rx_dbg "$nic")/force" || exit 1
fi
[ "$flood" = 1 ] && echo "nr-flood-go nic=$flood_nic"

# " eth0_held=N eth0_peak=N ...": both NICs' reserve counters (patched
# kernels), as the sample and result lines carry them.
reserve_stats()
{
	for dev in eth0 eth1; do
		f=$(rx_dbg $dev)/stats
		[ -r $f ] && awk -v d=$dev '{ printf " %s_%s=%s", d, $1, $2 }' $f
	done
}

# swap_io: "PAGES_IN PAGES_OUT", 4 KiB pages read from and written to the
# swap device since it was attached (the test kernels have no VM event
# counters, so /proc/vmstat has no pswpin/pswpout).
swap_io() { awk '{ print int($3 / 8), int($7 / 8) }' /sys/block/$blk/stat; }

# One line a second (nr-sampler: locked in memory, forks nothing, so its
# samples go on while the guest is out of memory): free pages against the
# min watermark, swap traffic, the flooded NIC's packets, the workload's
# progress, every NIC's reserve counters (patched kernels).
nr-sampler "$flood_nic" $blk &
sampler_pid=$!

# The workload: nr_hogs processes at once (the guest has two CPUs), each
# writing and verifying its part; the outcome is the worst of theirs.
run_workload()
{
	rm -f /tmp/hog.*.out
	pids=
	for i in $(seq "$hogs"); do
		part=
		[ "$writeback" = 1 ] && part="/dev/$blk $(((i - 1) * (hog / hogs)))"
		# shellcheck disable=SC2086 # $part is two words or none
		nr-hog $((hog / hogs)) /tmp/hog.$i.progress $part >/tmp/hog.$i.out 2>&1 &
		pids="$pids $!"
	done
	rc=0
	for pid in $pids; do
		wait "$pid"
		r=$?
		[ "$r" -gt "$rc" ] && rc=$r
	done
	verified=$(sed -n 's/.*verified \([0-9]*\) bytes.*/\1/p' /tmp/hog.*.out | awk '{ s += $1 } END { print s + 0 }')
	differ=$(sed -n 's/.*, \([0-9]*\) differ.*/\1/p' /tmp/hog.*.out | awk '{ s += $1 } END { print s + 0 }')
	return "$rc"
}

if [ "$soak" = 0 ]; then
	start=$(date +%s)
	run_workload
	rc=$?
	end=$(date +%s)
	echo "nr-flood-stop"
	kill $sampler_pid
	cat /tmp/hog.*.out
	outcome=completed
	[ "$rc" = 0 ] || outcome=failed
	[ "$rc" -gt 128 ] && outcome="killed-by-signal-$((rc - 128))"
	[ "$differ" != 0 ] && outcome=corrupt
	pswp=$(swap_io)
	echo "nr-result outcome=$outcome rc=$rc seconds=$((end - start)) verified=$verified differ=$differ pswpin=${pswp% *} pswpout=${pswp#* } rx_packets=$(cat /sys/class/net/$nic/statistics/rx_packets)$(reserve_stats)"
else
	# Soak: the other NIC flaps and changes MTU, both NICs' shares change,
	# at random, while the workload runs again and again.
	other=eth1
	[ "$nic" = eth1 ] && other=eth0
	user_min_free=$(cat /proc/sys/vm/min_free_kbytes)
	rnd() { od -An -N2 -tu2 /dev/urandom | tr -d ' '; }
	chaos()
	{
		actions=0
		while [ ! -e /tmp/soak.stop ]; do
			case $(($(rnd) % 4)) in
			0) ip link set dev $other up; sleep 0.$(($(rnd) % 10)); ip link set dev $other down ;;
			1) ip link set dev $other mtu $(echo 1280 1500 4000 9000 | cut -d' ' -f$(($(rnd) % 4 + 1))) ;;
			2) ip link set dev $nic rx_reserve $(echo 0 8 20 50 100 | cut -d' ' -f$(($(rnd) % 5 + 1))) ;;
			3) ip link set dev $other rx_reserve $(echo 0 8 20 50 100 | cut -d' ' -f$(($(rnd) % 5 + 1))) ;;
			esac
			actions=$((actions + 1))
			echo "$actions" >/tmp/soak.actions
			sleep 0.$(($(rnd) % 10 + 1))
		done
	}
	chaos &
	chaos_pid=$!
	start=$(date +%s) runs=0 bad=0 total_verified=0
	while [ $(($(date +%s) - start)) -lt "$soak" ]; do
		run_workload
		rc=$?
		runs=$((runs + 1))
		total_verified=$((total_verified + verified))
		[ "$rc" = 0 ] && [ "$differ" = 0 ] || bad=$((bad + 1))
		echo "nr-soak-run n=$runs rc=$rc verified=$verified differ=$differ elapsed=$(($(date +%s) - start))"
	done
	touch /tmp/soak.stop
	echo "nr-flood-stop"
	wait $chaos_pid
	kill $sampler_pid
	# Back to the defaults, the other NIC down: then nothing may be held,
	# the global reserve must be exactly what the NBD NIC's share adds, and
	# the user's part of min_free_kbytes must be what it was.
	ip link set dev $other down
	ip link set dev $other mtu 1500
	ip link set dev $nic rx_reserve 50
	ip link set dev $other rx_reserve 50
	swapoff /dev/$blk
	sleep 1
	pages=$(awk '$1 == "pages" { print $2 }' "$(rx_dbg "$nic")/stats")
	echo "nr-soak runs=$runs bad_runs=$bad verified=$total_verified actions=$(cat /tmp/soak.actions 2>/dev/null || echo 0) seconds=$(($(date +%s) - start)) memalloc_reserve_kb=$(cat /proc/sys/vm/memalloc_reserve_kbytes) nic_pages_kb=$((pages * 4)) min_free_kb=$(cat /proc/sys/vm/min_free_kbytes) min_free_kb_before=$user_min_free$(reserve_stats)"
fi

swapoff /dev/$blk 2>/dev/null
if [ "$client_prog" = nvme ]; then
	echo 1 >/sys/class/nvme/nvme0/delete_controller
	echo done | nc $server $done_port
else
	nr-nbd detach /dev/nbd0
fi
kill $idle 2>/dev/null
# The reserve is back to idle: nothing held once the swap is gone.
sleep 1
for dev in eth0 eth1; do
	f=$(rx_dbg $dev)/stats
	[ -r $f ] && echo "nr-after $dev held=$(awk '$1 == "held" { print $2 }' $f)"
done
exit 0
