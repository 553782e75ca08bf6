#!/bin/bash
# iproute2.sh: fetch Debian bookworm's iproute2 source with apt-get source,
# through a private apt configuration that adds a deb-src entry without
# touching the system's sources, apply the project's patch, and build `ip`
# into build/guest-bin/ip for the guest.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
work=$top/build/iproute2
apt_dir=$top/build/apt
patch=$top/netlink-uapi/iproute2/0001-ip-link-add-rx_reserve.patch
out=$top/build/guest-bin/ip
version=6.1.0

src=$work/iproute2-$version
if [ ! -d "$src.orig" ]; then
	# The system's own Debian mirror (deb822 or one-line format), as deb-src.
	uri=$(sed -n 's/^URIs: *\([^ ]*\).*/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null |
		grep -v -e security -e nodesource | head -1)
	[ -n "$uri" ] || uri=$(awk '$1 == "deb" && $3 == "bookworm" { print $2; exit }' /etc/apt/sources.list 2>/dev/null)
	[ -n "$uri" ] || { echo "iproute2: no Debian mirror found in the apt sources" >&2; exit 1; }
	mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial" "$work"
	echo "deb-src $uri bookworm main" >"$apt_dir/sources.list"
	apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
		-o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache::Archives=$apt_dir/archives"
		-o "Dir::Cache::pkgcache=" -o "Dir::Cache::srcpkgcache=" -o "APT::Sandbox::User=root")
	echo "iproute2: fetching the source of iproute2 $version (bookworm) with apt-get source"
	apt-get -q "${apt_opts[@]}" update >"$work/apt.log" 2>&1 || { cat "$work/apt.log"; exit 1; }
	(cd "$work" && apt-get -q "${apt_opts[@]}" source --download-only "iproute2=$version-3") >>"$work/apt.log" 2>&1 ||
		{ cat "$work/apt.log"; exit 1; }
	# Debian's source, with Debian's own patches applied.
	rm -rf "$src.orig"
	dpkg-source --no-check -x "$work"/iproute2_$version-3.dsc "$src.orig" >>"$work/apt.log" 2>&1 ||
		{ cat "$work/apt.log"; exit 1; }
fi

stamp=$work/applied.sha256
want=$( { cat "$patch" 2>/dev/null; cat "$0"; } | sha256sum | cut -d' ' -f1)
if [ -x "$out" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
	echo "iproute2: $out is up to date"
	exit 0
fi

echo "iproute2: applying $(basename "$patch")"
rm -rf "$src" && cp -a "$src.orig" "$src"
if [ -f "$patch" ]; then
	(cd "$src" && patch -p1 --quiet <"$patch")
fi
echo "iproute2: building ip"
(cd "$src" && ./configure >"$work/configure.log" 2>&1 &&
	make -j"$(nproc)" SUBDIRS="lib ip" >"$work/build.log" 2>&1) || { tail -30 "$work/build.log"; exit 1; }
mkdir -p "$(dirname "$out")"
cp "$src/ip/ip" "$out"
echo "$want" >"$stamp"
echo "iproute2: $out built"
