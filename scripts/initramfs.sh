#!/bin/bash
# initramfs.sh OUT [--server|--nbd-client]: the guest's initramfs, written
# reproducibly with the kernel's gen_init_cpio (sorted list, fixed
# timestamps).  With --server it also holds Debian's nbd-server and its
# libraries, for the server guest of the pressure test only (the client's
# RAM is what the test squeezes: it does not carry them).  With
# --nbd-client it holds Debian's nbd-client and its libraries, for the
# pressure runs with PRESSURE_CLIENT=nbd-client; /etc/nbd-client.files
# lists what only nbd-client needs, which the client deletes once the
# device is connected.
#
# Holds busybox-static, ethtool and ip with their libraries, the project's
# guest programs and netreserve from build/guest-bin/, /init and the tests.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=$(realpath -m "$1")
server=${2:-}
gen=$top/build/tools/gen_init_cpio
list=$(mktemp)
trap 'rm -f "$list" "$list.sorted"' EXIT

if [ ! -x "$gen" ] || [ "$gen" -ot "$top/build/linux/usr/gen_init_cpio.c" ]; then
	mkdir -p "$(dirname "$gen")"
	gcc -O2 -o "$gen" "$top/build/linux/usr/gen_init_cpio.c"
fi

declare -A have
add_dir() {
	local d=$1
	while [ "$d" != / ] && [ -z "${have[$d]:-}" ]; do
		have[$d]=1
		echo "dir $d 0755 0 0" >>"$list"
		d=$(dirname "$d")
	done
}
# add_file GUEST_PATH HOST_PATH MODE
add_file() {
	add_dir "$(dirname "$1")"
	echo "file $1 $(realpath "$2") $3 0 0" >>"$list"
}
# add_binary GUEST_PATH HOST_PATH: a dynamic binary and the libraries it needs.
add_binary() {
	add_file "$1" "$2" 0755
	for lib in $(ldd "$2" 2>/dev/null | grep -o '/[^ ]*'); do
		add_file "$lib" "$lib" 0755
	done
}

for d in /bin /sbin /usr/bin /usr/sbin /usr/local/bin /proc /sys /dev /tmp /run /root /etc /var /tests; do
	add_dir "$d"
done
echo "nod /dev/console 0600 0 0 c 5 1" >>"$list"
echo "nod /dev/null 0666 0 0 c 1 3" >>"$list"

add_file /bin/busybox /bin/busybox 0755
for applet in $(/bin/busybox --list-full | sort); do
	case "$applet" in
	bin/busybox | bin/sh | */ip | */ethtool | */timeout) continue ;;
	esac
	add_dir "$(dirname "/$applet")"
	echo "slink /$applet /bin/busybox 0777 0 0" >>"$list"
done

# Debian's busybox shell runs its own applets before anything on PATH, so the
# guest's /bin/sh is bash: then `ip` is iproute2's, as on a real system.
add_binary /bin/bash /bin/bash
echo "slink /bin/sh bash 0777 0 0" >>"$list"

ip_bin=/sbin/ip
[ -x "$top/build/guest-bin/ip" ] && ip_bin=$top/build/guest-bin/ip
add_binary /sbin/ip "$ip_bin"
# coreutils' timeout: busybox's would run its own `ip` applet, not iproute2's.
add_binary /usr/bin/timeout /usr/bin/timeout
add_binary /usr/sbin/ethtool "$(command -v ethtool || echo /usr/sbin/ethtool)"

echo "root:x:0:0:root:/root:/bin/sh" >"$top/build/passwd"
echo "root:x:0:" >"$top/build/group"
touch -d @946684800 "$top/build/passwd" "$top/build/group"
add_file /etc/passwd "$top/build/passwd" 0644
add_file /etc/group "$top/build/group" 0644

add_file /init "$top/tests/init/init.sh" 0755
add_file /tour.sh "$top/tests/init/tour.sh" 0755
for f in "$top"/tests/guest/*; do
	add_file "/tests/${f##*/}" "$f" 0755
done
# The virtio-net test again, for boots with the driver in another buffer
# mode: small (mrg_rxbuf=off) and big (mrg_rxbuf=off,host_mtu=9000).
add_file /tests/virtio-modes/virtio_reserve.sh "$top/tests/guest/virtio_reserve.sh" 0755
add_file /tests/virtio-big/virtio_reserve.sh "$top/tests/guest/virtio_reserve.sh" 0755
# The share split over a multi-queue virtio-net's RX queues, in a boot of
# its own (boot.sh --topology tap-mq).
add_file /tests/virtio-mq/virtio_mq.sh "$top/tests/guest-mq/virtio_mq.sh" 0755
# Each harness self-test is a suite of its own: /tests/selftest/NAME/NAME.sh.
for f in "$top"/tests/guest-selftest/*.sh; do
	name=${f##*/}
	add_file "/tests/selftest/${name%.sh}/$name" "$f" 0755
done
if [ -d "$top/build/guest-bin" ]; then
	for f in "$top"/build/guest-bin/*; do
		[ "${f##*/}" = ip ] && continue
		add_binary "/usr/local/bin/${f##*/}" "$f"
	done
fi

if [ "$server" = --nbd-client ]; then
	[ -x /usr/sbin/nbd-client ] || { echo "initramfs: /usr/sbin/nbd-client is missing (make deps)" >&2; exit 1; }
	before=$(mktemp)
	awk '$1 == "file" { print $2 }' "$list" | sort >"$before"
	add_binary /usr/sbin/nbd-client /usr/sbin/nbd-client
	awk '$1 == "file" { print $2 }' "$list" | sort -u | comm -13 "$before" - >"$top/build/nbd-client.files"
	rm -f "$before"
	touch -d @946684800 "$top/build/nbd-client.files"
	add_file /etc/nbd-client.files "$top/build/nbd-client.files" 0644
fi

if [ "$server" = --server ]; then
	[ -x /usr/bin/nbd-server ] || { echo "initramfs: /usr/bin/nbd-server is missing (make deps)" >&2; exit 1; }
	add_binary /usr/bin/nbd-server /usr/bin/nbd-server
fi

# Sorted, so the archive depends only on its contents.
sort -u -k2,2 "$list" | sort -s -t' ' -k1,1r >"$list.sorted"
awk '$1 == "dir"' "$list.sorted" | sort -k2,2 >"$list"
awk '$1 != "dir"' "$list.sorted" | sort -k2,2 >>"$list"
"$gen" -t 946684800 "$list" >"$out.tmp"
mv "$out.tmp" "$out"
echo "initramfs: $out ($(( $(stat -c %s "$out") / 1024 )) KiB, $(wc -l <"$list") entries)"
