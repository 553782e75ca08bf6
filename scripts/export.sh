#!/bin/bash
# Write the kernel tree's commits (pristine..HEAD) back into the series
# folders with git format-patch, and rewrite the series file to match.
#
# A patch keeps the folder it was in; a new one goes where its subject says:
# driver subjects to drivers-conversion/, rtnetlink/uapi ones to netlink-uapi/,
# everything else to patches/.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
tree=${TREE:-$top/build/linux}
series=$top/series
folders="patches netlink-uapi drivers-conversion"

[ -d "$tree/.git" ] || { echo "export: no kernel tree at $tree (run: make tree)" >&2; exit 1; }
if ! git -C "$tree" diff --quiet HEAD; then
	echo "export: $tree has uncommitted changes; commit them first" >&2
	exit 1
fi

declare -A folder_of
if [ -f "$series" ]; then
	while read -r p; do
		name=${p#*/}
		folder_of[${name#[0-9][0-9][0-9][0-9]-}]=${p%%/*}
	done < <(grep -v -e '^#' -e '^[[:space:]]*$' "$series")
fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# --zero-commit and --no-signature keep the output free of commit ids and of
# the local git version, so an unchanged tree exports to identical bytes.
git -C "$tree" format-patch -q --zero-commit --no-signature --no-numbered \
	--abbrev=12 -o "$out" pristine..HEAD

for f in $folders; do
	mkdir -p "$top/$f"
	find "$top/$f" -maxdepth 1 -name '[0-9][0-9][0-9][0-9]-*.patch' -delete
done

{
	echo "# The kernel series, in the order git am applies it (make tree)."
	echo "# Written by 'make export'; edit the kernel tree, not this file."
	for p in "$out"/*.patch; do
		[ -e "$p" ] || continue
		base=$(basename "$p")
		name=${base#[0-9][0-9][0-9][0-9]-}
		folder=${folder_of[$name]:-}
		if [ -z "$folder" ]; then
			subject=$(sed -n 's/^Subject: \[PATCH\] //p' "$p" | head -1)
			case "$subject" in
			e1000:* | e1000e:* | virtio_net:* | virtio-net:*) folder=drivers-conversion ;;
			*rtnetlink:* | *if_link:* | *uapi:*) folder=netlink-uapi ;;
			*) folder=patches ;;
			esac
		fi
		cp "$p" "$top/$folder/$base"
		echo "$folder/$base"
	done
} >"$series.new"
mv "$series.new" "$series"
n=$(grep -vc -e '^#' "$series" || true)
"$top/scripts/tree.sh" --stamp
echo "export: $n patches written; series updated"
