#!/bin/bash
# Extract Debian's linux-source-6.1 into build/linux, commit it as the pristine
# base, and apply the series on top with git am.  Re-running it is cheap: when
# the tree already carries exactly the series, nothing happens.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
tree=${TREE:-$top/build/linux}
tarball=/usr/src/linux-source-6.1.tar.xz
series=$top/series

# Fixed identity and dates make every commit id reproducible, so that
# `make tree && make export` gives back the same bytes.
export GIT_AUTHOR_NAME="netreserve" GIT_AUTHOR_EMAIL="netreserve@localhost"
export GIT_COMMITTER_NAME="netreserve" GIT_COMMITTER_EMAIL="netreserve@localhost"
export GIT_AUTHOR_DATE="2000-01-01T00:00:00Z" GIT_COMMITTER_DATE="2000-01-01T00:00:00Z"

version=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null) || {
	echo "tree: linux-source-6.1 is not installed (run: make deps)" >&2
	exit 1
}

series_patches() {
	grep -v -e '^#' -e '^[[:space:]]*$' "$series" 2>/dev/null || true
}

series_hash() {
	{ echo "$version"; series_patches | while read -r p; do cat "$top/$p"; done; } | sha256sum | cut -d' ' -f1
}

stamp=$tree/.git/netreserve-applied
want=$(series_hash)

# After 'make export' the tree carries exactly the series: record that.
if [ "${1:-}" = "--stamp" ]; then
	printf '%s\n%s\n' "$want" "$(git -C "$tree" rev-parse HEAD)" >"$stamp"
	exit 0
fi

if [ -d "$tree/.git" ]; then
	if [ -f "$stamp" ] && [ "$(sed -n 1p "$stamp")" = "$want" ]; then
		echo "tree: $tree is linux-source-6.1 $version with the series applied (up to date)"
		exit 0
	fi
	if ! git -C "$tree" diff --quiet HEAD; then
		echo "tree: $tree has uncommitted changes; commit and 'make export' them, or discard them" >&2
		exit 1
	fi
	if [ -f "$stamp" ] && [ "$(sed -n 2p "$stamp")" != "$(git -C "$tree" rev-parse HEAD)" ]; then
		echo "tree: $tree has commits that are not in the series; run 'make export' first" >&2
		echo "tree: (or 'make tree FORCE=1' to throw them away)" >&2
		[ "${FORCE:-0}" = 1 ] || exit 1
	fi
	tree_version=$(git -C "$tree" log -1 --format=%s pristine | sed -n 's/.*linux-source-6.1 \([^ ]*\).*/\1/p')
	if [ "$tree_version" != "$version" ]; then
		echo "tree: the tree holds linux-source-6.1 $tree_version but $version is installed; re-extracting"
		rm -rf "$tree"
	fi
fi

if [ ! -d "$tree/.git" ]; then
	echo "tree: extracting linux-source-6.1 $version into $tree"
	rm -rf "$tree" "$tree.tmp"
	mkdir -p "$tree.tmp"
	tar -xf "$tarball" -C "$tree.tmp"
	mv "$tree.tmp/linux-source-6.1" "$tree"
	rmdir "$tree.tmp"
	echo "tree: committing the pristine source"
	git -C "$tree" init -q -b netreserve
	git -C "$tree" config core.autocrlf false
	git -C "$tree" add -A -f .
	git -C "$tree" commit -q -m "Debian linux-source-6.1 $version (pristine)"
	git -C "$tree" tag pristine
	# For the developer's own commits in the tree (git commit -s).
	git -C "$tree" config user.name "Netreserve Developers"
	git -C "$tree" config user.email "devel@netreserve.example"
fi

echo "tree: applying the series to linux-source-6.1 $version"
git -C "$tree" am --abort >/dev/null 2>&1 || true
git -C "$tree" reset -q --hard pristine
n=0
while read -r p; do
	n=$((n + 1))
	printf 'tree: [%2d] %s\n' "$n" "$p"
	if ! git -C "$tree" am -q --committer-date-is-author-date "$top/$p" >"$tree/.git/am.log" 2>&1; then
		echo "tree: patch $p does not apply:" >&2
		grep -E 'error:|patch failed|does not apply|already exists' "$tree/.git/am.log" >&2 || cat "$tree/.git/am.log" >&2
		git -C "$tree" am --abort >/dev/null 2>&1 || true
		exit 1
	fi
done < <(series_patches)
printf '%s\n%s\n' "$want" "$(git -C "$tree" rev-parse HEAD)" >"$stamp"
echo "tree: $n patches applied on linux-source-6.1 $version"
