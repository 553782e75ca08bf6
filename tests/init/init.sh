#!/bin/sh
# The guest's /init: mount what the tests need, run what the kernel command
# line asks for (nrmode=check|run|script|shell), report the exit status on the
# success channel (/dev/ttyS1, a file on the host), and power QEMU off.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm /tmp /run /root /var
ln -sfn /run /var/run
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
mount -t debugfs debugfs /sys/kernel/debug
hostname "${nrrole:-guest}"
ip link set lo up

# Give the NICs names the tests can rely on, whatever their probe order:
# the e1000 one is eth0, the virtio-net one is eth1.
for dev in /sys/class/net/*; do
	drv=$(basename "$(readlink -f "$dev/device/driver" 2>/dev/null)" 2>/dev/null)
	case "$drv" in
	e1000) ip link set "${dev##*/}" name nr_e1000 ;;
	virtio_net) ip link set "${dev##*/}" name nr_virtio ;;
	esac
done
[ -e /sys/class/net/nr_e1000 ] && ip link set nr_e1000 name eth0
[ -e /sys/class/net/nr_virtio ] && ip link set nr_virtio name eth1

script=/sys/firmware/qemu_fw_cfg/by_name/opt/netreserve/script/raw
rc=0
case "${nrmode:-check}" in
check)
	/tests/run-tests "${nrtests:-/tests}"
	rc=$?
	;;
run)
	/tour.sh
	rc=$?
	;;
script)
	cp "$script" /tmp/script && chmod +x /tmp/script
	(cd /tmp && /bin/sh /tmp/script)
	rc=$?
	;;
shell)
	echo "netreserve guest shell: 'exit' or Ctrl-D powers the guest off"
	setsid cttyhack /bin/sh -l
	rc=$?
	;;
*)
	echo "init: unknown nrmode '$nrmode'"
	rc=2
	;;
esac

# kmemleak (debug kernel): a last scan, and any leak fails the run.
if [ -w /sys/kernel/debug/kmemleak ]; then
	echo scan >/sys/kernel/debug/kmemleak
	echo scan >/sys/kernel/debug/kmemleak
	if [ -s /sys/kernel/debug/kmemleak ]; then
		echo "init: kmemleak reports leaks:"
		cat /sys/kernel/debug/kmemleak
		[ "$rc" = 0 ] && rc=1
	fi
fi

echo "netreserve-exit: $rc" >/dev/ttyS1
sync
reboot -f
