#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel-crate abstractions for a kernel series are a patch series,
# patches/<series>/*.patch, in `git format-patch` form against the pristine
# tree: what a kernel developer applies to their tree with `git am`.
#
#   scripts/series.sh apply TREE   apply the series to TREE, an unpacked
#                                  pristine tree (only rust/ is touched)
#   scripts/series.sh edit DIR     make DIR a git repository of the pristine
#                                  rust/ with the series as its commits, to
#                                  edit with git (commit --fixup, rebase -i)
#   scripts/series.sh export DIR   write DIR's commits back as the series
#   scripts/series.sh list         the files the series adds or changes,
#                                  relative to rust/
#
# The series is applied with `git am` in a scratch repository, so a patch
# that does not apply to the pristine tree fails loudly here too.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/toolchain.env"
: "${SERIES_DIR:=$top/patches/$KERNEL_SERIES}"
: "${KERNEL_TARBALL:=/usr/src/linux-source-$KERNEL_SERIES.tar.xz}"

git_() {
	git -c user.name="macsec_bridge developers" -c user.email="macsec-bridge@localhost" \
		-c advice.detachedHead=false "$@"
}

patches() {
	[ -d "$SERIES_DIR" ] || return 0
	find "$SERIES_DIR" -maxdepth 1 -name '*.patch' | LC_ALL=C sort
}

# pristine DIR: DIR holds the tarball's rust/ as the first commit.
pristine() {
	local dir=$1
	mkdir -p "$dir"
	tar -xf "$KERNEL_TARBALL" -C "$dir" --strip-components=1 "linux-source-$KERNEL_SERIES/rust"
	git_ -C "$dir" init -q
	git_ -C "$dir" add -A
	git_ -C "$dir" commit -q -m "Linux $KERNEL_SERIES (Debian linux-source-$KERNEL_SERIES) rust/"
	git_ -C "$dir" tag pristine
}

# am DIR: apply the series on top of pristine in DIR.
am() {
	local dir=$1 p
	mapfile -t p < <(patches)
	[ ${#p[@]} -eq 0 ] || git_ -C "$dir" am -q --whitespace=error-all "${p[@]}"
}

case "${1:-}" in
apply)
	tree=${2:?usage: series.sh apply TREE}
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
	pristine "$work"
	am "$work"
	n=0
	while IFS= read -r f; do
		if [ -e "$work/$f" ]; then
			mkdir -p "$tree/$(dirname "$f")"
			# Replace, never write through: the tree may share inodes.
			rm -f "$tree/$f"
			cp "$work/$f" "$tree/$f"
		else
			rm -f "$tree/$f"
		fi
		n=$((n + 1))
	done < <(git -C "$work" diff --name-only pristine HEAD)
	echo "series: $(patches | wc -l) patch(es), $n file(s) applied to $tree/rust" ;;
edit)
	dir=${2:?usage: series.sh edit DIR}
	[ ! -e "$dir" ] || { echo "series: $dir exists" >&2; exit 1; }
	pristine "$dir"
	am "$dir"
	echo "series: $dir has the series on tag 'pristine'; edit, then: series.sh export $dir" ;;
export)
	dir=${2:?usage: series.sh export DIR}
	mkdir -p "$SERIES_DIR"
	rm -f "$SERIES_DIR"/*.patch
	git_ -C "$dir" format-patch -q --no-signature --zero-commit -o "$SERIES_DIR" pristine..HEAD
	patches | sed "s|^$top/||" ;;
list)
	for p in $(patches); do
		sed -n 's|^diff --git a/rust/\(.*\) b/.*|./\1|p' "$p"
	done | LC_ALL=C sort -u ;;
*)
	echo "usage: series.sh apply TREE | edit DIR | export DIR | list" >&2
	exit 2 ;;
esac
