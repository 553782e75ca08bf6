#!/bin/bash
# Boot the test kernel under QEMU and carry the guest's exit status out.
#
#   boot.sh [options]
#     --kernel FILE     bzImage (default build/kernel/arch/x86/boot/bzImage)
#     --initrd FILE     initramfs (default build/initramfs.cpio)
#     --server-initrd FILE  with pair, the server's initramfs (default
#                       build/initramfs-server.cpio if it exists, else --initrd)
#     --mode MODE       check | run | script | shell (default check)
#     --script FILE     with --mode script: the script to run as root
#     --tests DIR       with --mode check: the guest folder of tests to run
#     --virtio PROPS    extra virtio-net-pci properties (both guests' with pair), e.g.
#                       mrg_rxbuf=off for the driver's small-buffer mode
#     --topology T      single (one guest, e1000 <-> virtio-net back to back)
#                       or pair (client and server guests, e1000 <-> e1000 and
#                       virtio-net <-> virtio-net) or tap-mq (one guest whose
#                       only NIC, eth1, is a virtio-net with 4 queue pairs on
#                       a multi-queue tap; run as root: boot.sh puts QEMU and
#                       the tap in a network namespace of their own)
#     --tap-send ARGS   with tap-mq, repeatable: a host-side nr-hostflood that
#                       sends to the guest through the tap from the start, with
#                       these arguments (-m, -P, -X, -r, ...); the tap steers
#                       each frame to RX queue (destination port % 4)
#     --tap-flood ARGS  the same, but sending only from when the guest writes
#                       "nr-tap-flood-go" to its console until it writes
#                       "nr-tap-flood-stop"
#     --mem MB          guest memory (default 512; with pair, the client's)
#     --server-mem MB   with pair, the server's memory (default 512)
#     --timeout S       hard limit for the whole run (default 900)
#     --log FILE        console log (default build/logs/<mode>.log)
#     --append ARGS     extra kernel command line
#     --icount          one vCPU, single-threaded TCG with "-icount shift=0,sleep=off":
#                       the guest's clock counts its instructions (make bench)
#
# Environment: NETRESERVE_PORTS_FILE=FILE (pair) gets the loopback UDP ports
# QEMU receives the client's eth0 and eth1 frames on; NETRESERVE_KVM=1 uses KVM instead of TCG; VERBOSE=1 shows the
# kernel's own console messages as well as the tests' output;
# NETRESERVE_ALLOW_ALLOC_FAILURE=1 (the pressure runs, which exhaust memory
# on purpose) does not count "page allocation failure" reports, stack dump
# included, as kernel problems.
#
# The exit status is the guest's (written by /init to its second serial port,
# the success channel); 124 on timeout; 1 when the guest did not report or
# the console shows a kernel BUG, WARNING, oops, KASAN, lockdep or hung task.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
orig_args=("$@")
tap_sends=() tap_floods=()
kernel=$top/build/kernel/arch/x86/boot/bzImage
initrd=$top/build/initramfs.cpio
server_initrd=
mode=check script= tests= topology=single mem=512 server_mem=512 timeout=900 log= append= icount=0

while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) kernel=$2; shift ;;
	--initrd) initrd=$2; shift ;;
	--server-initrd) server_initrd=$2; shift ;;
	--mode) mode=$2; shift ;;
	--script) script=$2; shift ;;
	--tests) tests=$2; shift ;;
	--topology) topology=$2; shift ;;
	--mem) mem=$2; shift ;;
	--timeout) timeout=$2; shift ;;
	--log) log=$2; shift ;;
	--append) append=$2; shift ;;
	--server-mem) server_mem=$2; shift ;;
	--virtio) virtio_opts=,$2; shift ;;
	--icount) icount=1 ;;
	--tap-send) tap_sends+=("$2"); shift ;;
	--tap-flood) tap_floods+=("$2"); shift ;;
	*) echo "boot.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done

if [ -z "$server_initrd" ]; then
	server_initrd=$initrd
	[ "$initrd" = "$top/build/initramfs.cpio" ] && [ -r "$top/build/initramfs-server.cpio" ] &&
		server_initrd=$top/build/initramfs-server.cpio
fi
for f in "$kernel" "$initrd"; do
	[ -r "$f" ] || { echo "boot.sh: $f is missing (make kernel initramfs)" >&2; exit 2; }
done
if [ "$mode" = script ]; then
	[ -r "$script" ] || { echo "boot.sh: script '$script' is not readable" >&2; exit 2; }
fi
# A multi-queue NIC needs QEMU's tap backend (the socket one has a single
# queue).  The tap, QEMU and the host-side senders live in a network
# namespace of their own, which has no other device: what is sent on the
# tap reaches the guest and nothing else, and nothing is left behind.
if [ "$topology" = tap-mq ] && [ -z "${NETRESERVE_TAP_NETNS:-}" ]; then
	exec env NETRESERVE_TAP_NETNS=1 unshare --net -- "$0" "${orig_args[@]}"
fi

mkdir -p "$top/build/logs"
log=${log:-$top/build/logs/$mode.log}
run_dir=$(mktemp -d "$top/build/logs/run.XXXXXX")
trap 'rm -rf "$run_dir"' EXIT

# la57=off: with 5-level paging (which TCG's "max" CPU offers) 6.1's
# KASAN calls a direct-map address "wild" when an interrupt comes while
# identify_cpu() has cleared the boot CPU's feature bits to read them again:
# pgtable_l5_enabled() is false for that moment.  Seen on 2026-12-07 in 2
# of 12 debug boots run two at a time, both at the same address
# (ff11000000..., the direct map) in handle_edge_irq() with identify_cpu()
# interrupted, early in start_kernel(): before anything of this series runs.
# The guests need no 57-bit addresses.  NETRESERVE_CPU overrides (-cpu).
cpu=${NETRESERVE_CPU:-max,la57=off}
accel=(-accel tcg,thread=multi -cpu "$cpu")
smp=2
if [ "${NETRESERVE_KVM:-0}" = 1 ]; then
	accel=(-accel kvm -cpu host)
fi
# icount needs single-threaded TCG; with one vCPU every guest nanosecond is
# one instruction of that vCPU.  sleep=off: an idle guest's clock jumps to
# its next timer instead of waiting for the host's.
if [ "$icount" = 1 ]; then
	accel=(-accel tcg,thread=single -icount shift=0,sleep=off -cpu "$cpu")
	smp=1
fi

# NETRESERVE_PLUGIN=SO,ARGS: a TCG plugin for the guest(s) (-plugin; make
# bench's instruction profile, scripts/insn-profile.sh).
# NETRESERVE_MONITOR_DIR=DIR: each guest's QEMU monitor listens on
# DIR/NAME.mon (debugging: "info virtio-queue-status" on a stalled guest).
# NETRESERVE_PCAP_DIR=DIR: QEMU writes the first 128 bytes of every frame
# each guest's NICs send and receive to DIR/NAME-NETDEV.pcap (filter-dump).
pcap_args()
{
	local name=$1 netdev
	[ -n "${NETRESERVE_PCAP_DIR:-}" ] || return 0
	for netdev in n0 n1; do
		echo -object "filter-dump,id=dump-$netdev,netdev=$netdev,maxlen=128,file=$NETRESERVE_PCAP_DIR/$name-$netdev.pcap"
	done
}

# Free UDP ports on the loopback for the -netdev socket links, asked of the
# kernel so that parallel runs never collide.
free_udp_ports()
{
	python3 -c '
import socket, sys
socks = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(int(sys.argv[1]))]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))' "$1"
}

# The kernel reports anything that must fail the run with one of these.
# RCU's stall warnings ("rcu: INFO: rcu_sched self-detected stall on CPU",
# "... detected stalls on CPUs/tasks") need a pattern of their own: their
# stack dumps do not always say "Call Trace:".
bad_reports='WARNING:|BUG:|Oops|Kernel panic|KASAN:|UBSAN:|kmemleak: [0-9]+ new suspected|possible (recursive|circular) locking|INFO: task .* blocked|rcu: INFO:|soft lockup|hard LOCKUP'
bad_console="($bad_reports|Call Trace:)"

cmdline="console=ttyS0 qemu_fw_cfg.ioport=12@0x510:0:1:4 reboot=t panic=-1 panic_on_warn=1 oops=panic softlockup_panic=1 hung_task_panic=1 nmi_watchdog=panic loglevel=7 nrmode=$mode"
[ -n "$tests" ] && cmdline+=" nrtests=$tests"
[ -n "$append" ] && cmdline+=" $append"

# qemu_args NAME MEM ROLE NETDEV...: the command line for one guest.
qemu_args()
{
	local name=$1 gmem=$2 role=$3 rd=$initrd
	shift 3
	[ "$role" = server ] && rd=$server_initrd
	echo qemu-system-x86_64 "${accel[@]}" -machine q35 -smp "$smp" -m "$gmem" \
		-nodefaults -nographic -no-reboot -display none \
		-kernel "$kernel" -initrd "$rd" \
		-append "'$cmdline nrrole=$role'" \
		-serial "file:$run_dir/$name.console" -serial "file:$run_dir/$name.result" \
		${NETRESERVE_MONITOR_DIR:+-monitor "unix:$NETRESERVE_MONITOR_DIR/$name.mon,server=on,wait=off"} \
		${NETRESERVE_PLUGIN:+-plugin "$NETRESERVE_PLUGIN"} \
		"$@" $(pcap_args "$name")
}

# A guest runs under timeout(1); its console streams to the terminal.
start_guest()
{
	local name=$1
	shift
	: >"$run_dir/$name.console"
	eval timeout -k 5 "$timeout" "$@" </dev/null >"$run_dir/$name.qemu" 2>&1 &
	echo $! >"$run_dir/$name.pid"
}

script_cfg=()
[ "$mode" = script ] && script_cfg=(-fw_cfg "name=opt/netreserve/script,file=$(readlink -f "$script")")

if [ "$mode" = shell ]; then
	# Interactive: the console is this terminal; no timeout.
	exec qemu-system-x86_64 "${accel[@]}" -machine q35 -smp "$smp" -m "$mem" \
		-nodefaults -nographic -no-reboot \
		-kernel "$kernel" -initrd "$initrd" \
		-append "$cmdline nrrole=guest" \
		-serial mon:stdio -serial "file:$run_dir/guest.result" \
		-device e1000,romfile=,netdev=n0 -netdev socket,id=n0,udp=127.0.0.1:1,localaddr=127.0.0.1:0 \
		-device virtio-net-pci,romfile=,netdev=n1 -netdev socket,id=n1,udp=127.0.0.1:1,localaddr=127.0.0.1:0
fi

# tap_send ARGS: nr-hostflood into the tap (tap-mq), to the guest's eth1.
tap_send()
{
	# shellcheck disable=SC2086 # ARGS are nr-hostflood's options, split as given
	exec "$top/build/host/nr-hostflood" -i nrtap0 -d 52:54:00:12:00:02 -s 52:54:00:12:00:99 \
		-D 192.0.2.2 -S 192.0.2.1 -t "$timeout" $1 >/dev/null
}

# The --tap-flood senders, between the guest's "nr-tap-flood-go" and
# "nr-tap-flood-stop" (written to its console), until the guest is gone.
tap_flood_on_cue()
{
	local line args pids=()
	while IFS= read -r line; do
		case "$line" in
		*nr-tap-flood-go*)
			[ ${#pids[@]} -gt 0 ] && continue
			for args in "${tap_floods[@]}"; do
				tap_send "$args" &
				pids+=($!)
			done
			;;
		*nr-tap-flood-stop*)
			[ ${#pids[@]} -gt 0 ] && kill "${pids[@]}" 2>/dev/null
			wait "${pids[@]}" 2>/dev/null
			pids=()
			;;
		esac
	done < <(tail -n +1 -F --pid="$(cat "$run_dir/guest.pid")" "$run_dir/guest.console" 2>/dev/null)
	[ ${#pids[@]} -gt 0 ] && kill "${pids[@]}" 2>/dev/null
	wait "${pids[@]}" 2>/dev/null
}

guests=()
case "$topology" in
single)
	read -r pa pb < <(free_udp_ports 2)
	# Where QEMU takes frames for eth0 (e1000) and eth1 (virtio-net): make
	# bench's host-side sender sends there (127.0.0.1 only).
	if [ -n "${NETRESERVE_PORTS_FILE:-}" ]; then
		printf 'guest_eth0=%s\nguest_eth1=%s\n' "$pa" "$pb" >"$NETRESERVE_PORTS_FILE"
	fi
	start_guest guest "$(qemu_args guest "$mem" guest \
		-device e1000,romfile=,netdev=n0,mac=52:54:00:12:00:01 \
		-netdev socket,id=n0,udp=127.0.0.1:$pb,localaddr=127.0.0.1:$pa \
		-device virtio-net-pci,romfile=,netdev=n1,mac=52:54:00:12:00:02${virtio_opts:-} \
		-netdev socket,id=n1,udp=127.0.0.1:$pa,localaddr=127.0.0.1:$pb \
		"${script_cfg[@]}")"
	guests=(guest)
	;;
pair)
	read -r p1 p2 p3 p4 < <(free_udp_ports 4)
	# Where QEMU takes frames for the client's NICs: the host-side flood of
	# the pressure test sends there (127.0.0.1 only).
	if [ -n "${NETRESERVE_PORTS_FILE:-}" ]; then
		printf 'client_eth0=%s\nclient_eth1=%s\n' "$p2" "$p4" >"$NETRESERVE_PORTS_FILE"
	fi
	start_guest server "$(qemu_args server "$server_mem" server \
		-device e1000,romfile=,netdev=n0,mac=52:54:00:12:01:01 \
		-netdev socket,id=n0,udp=127.0.0.1:$p2,localaddr=127.0.0.1:$p1 \
		-device virtio-net-pci,romfile=,netdev=n1,mac=52:54:00:12:01:02${virtio_opts:-} \
		-netdev socket,id=n1,udp=127.0.0.1:$p4,localaddr=127.0.0.1:$p3 \
		"${script_cfg[@]}")"
	start_guest client "$(qemu_args client "$mem" client \
		-device e1000,romfile=,netdev=n0,mac=52:54:00:12:02:01 \
		-netdev socket,id=n0,udp=127.0.0.1:$p1,localaddr=127.0.0.1:$p2 \
		-device virtio-net-pci,romfile=,netdev=n1,mac=52:54:00:12:02:02${virtio_opts:-} \
		-netdev socket,id=n1,udp=127.0.0.1:$p3,localaddr=127.0.0.1:$p4 \
		"${script_cfg[@]}")"
	guests=(server client)
	;;
tap-mq)
	tap=nrtap0
	ip link set lo up && ip tuntap add dev $tap mode tap multi_queue vnet_hdr || {
		echo "boot.sh: cannot create a multi-queue tap (root and /dev/net/tun needed)" >&2
		exit 2
	}
	"$top/build/host/nr-tapsteer" $tap "$timeout" &
	tap_pids=($!)
	# Nothing of the namespace's own: no IPv6 on the tap (no router or
	# neighbour solicitations), no address.
	sysctl -qw net.ipv6.conf.$tap.disable_ipv6=1 2>/dev/null
	ip link set $tap up
	start_guest guest "$(qemu_args guest "$mem" guest \
		-device virtio-net-pci,romfile=,netdev=n1,mq=on,vectors=10,mac=52:54:00:12:00:02${virtio_opts:-} \
		-netdev tap,id=n1,ifname=$tap,script=no,downscript=no,queues=4,vhost=off \
		"${script_cfg[@]}")"
	guests=(guest)
	for args in "${tap_sends[@]}"; do
		tap_send "$args" &
		tap_pids+=($!)
	done
	# It ends with the guest, and stops its senders then.
	[ ${#tap_floods[@]} -gt 0 ] && tap_flood_on_cue &
	;;
*) echo "boot.sh: unknown topology $topology" >&2; exit 2 ;;
esac

# Stream the consoles; kernel messages (timestamped) only with VERBOSE=1.
pids=()
for g in "${guests[@]}"; do
	pids+=("$(cat "$run_dir/$g.pid")")
	prefix=
	[ "${#guests[@]}" -gt 1 ] && prefix="[$g] "
	if [ "${VERBOSE:-0}" = 1 ]; then
		tail -n +1 -F --pid="$(cat "$run_dir/$g.pid")" "$run_dir/$g.console" 2>/dev/null | sed -u -e 's/\r$//' -e "s/^/$prefix/" &
	else
		# Only what /init and the tests print: not the firmware, not the
		# kernel.  sed -u, not awk: Debian's awk (mawk) reads a pipe in
		# blocks, so a line the host must act on (make pressure's
		# "nr-flood-go", make bench's "nr-icount-ready") would wait for
		# kilobytes more console output, or for the guest's end.
		tail -n +1 -F --pid="$(cat "$run_dir/$g.pid")" "$run_dir/$g.console" 2>/dev/null \
			| sed -u -n -e '1,/Run \/init as init process/d' -e 's/\r$//' \
				-e '/^\[ *[0-9]\+\.[0-9]\+\] /d' -e "s/^/$prefix/p" &
	fi
done

# Each QEMU's status first, then the console readers: a bare wait would
# reap the other guest too and lose its status.
qrcs=()
for i in "${!guests[@]}"; do
	wait "${pids[$i]}"
	qrcs[$i]=$?
done
[ -n "${tap_pids:-}" ] && kill "${tap_pids[@]}" 2>/dev/null
wait 2>/dev/null

status=0
for i in "${!guests[@]}"; do
	g=${guests[$i]}
	qrc=${qrcs[$i]}
	console=$run_dir/$g.console
	if [ "${#guests[@]}" -gt 1 ]; then
		cp "$console" "${log%.log}-$g.log"
	else
		cp "$console" "$log"
	fi
	# What QEMU itself said (a device it marked broken, for one) goes to
	# the log too: the guest cannot see it.
	if [ -s "$run_dir/$g.qemu" ]; then
		{ echo "boot.sh: QEMU ($g) said:"; cat "$run_dir/$g.qemu"; } \
			>>"$([ "${#guests[@]}" -gt 1 ] && echo "${log%.log}-$g.log" || echo "$log")"
		echo "boot.sh: $g: QEMU said: $(head -c 300 "$run_dir/$g.qemu")" >&2
	fi
	grc=$(sed -n 's/^netreserve-exit: \([0-9]*\).*/\1/p' "$run_dir/$g.result" | tail -1)
	if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
		echo "boot.sh: $g: timed out after ${timeout}s" >&2
		[ "$status" = 0 ] && status=124
		continue
	fi
	if [ "$qrc" != 0 ]; then
		echo "boot.sh: $g: QEMU failed (status $qrc):" >&2
		cat "$run_dir/$g.qemu" >&2
		status=1
		continue
	fi
	# A stalled pressure run asks for every task's stack (sysrq t, see
	# nr-sampler): those "Call Trace:" lines are the dump, not a report.
	# Every other pattern still counts after it.
	checked=$run_dir/$g.checked
	awk '/sysrq: Show State/ { dump = 1 } !(dump && /Call Trace:/)' "$console" >"$checked"
	# Leaving an allocation failure report out leaves in any other report
	# printed inside it (another CPU's, interleaved).
	if [ "${NETRESERVE_ALLOW_ALLOC_FAILURE:-0}" = 1 ]; then
		awk -v bad="$bad_reports" '/page allocation failure:/ { skip = 1 }
			skip && /<\/TASK>/ { skip = 0; next }
			!skip || $0 ~ bad' \
			"$checked" >"$checked.tmp" && mv "$checked.tmp" "$checked"
	fi
	if grep -aEq "$bad_console" "$checked"; then
		echo "boot.sh: $g: the kernel reported a problem:" >&2
		grep -aE -A3 "$bad_console" "$checked" | head -40 >&2
		status=1
		continue
	fi
	if [ -z "$grc" ]; then
		echo "boot.sh: $g: the guest did not report an exit status (crash?); see the console log" >&2
		tail -20 "$console" >&2
		status=1
		continue
	fi
	if [ "$grc" != 0 ]; then
		echo "boot.sh: $g: guest exited with status $grc" >&2
		[ "$status" = 0 ] && status=$grc
	fi
done
echo "boot.sh: console log: $log$([ ${#guests[@]} -gt 1 ] && echo " (per guest: ${log%.log}-*.log)")" >&2
exit "$status"
