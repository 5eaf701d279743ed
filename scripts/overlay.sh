#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The repo's rust/ directory is an overlay for the kernel tree: each file
# replaces (or adds) the file at the same path under the tree's rust/.
#
#   scripts/overlay.sh apply TREE     copy the overlay into TREE
#   scripts/overlay.sh list           list the overlay's files
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
: "${OVERLAY_DIR:=$top/rust}"

case "${1:-}" in
apply)
	tree=$2
	n=0
	if [ -d "$OVERLAY_DIR" ]; then
		while IFS= read -r -d '' f; do
			rel=${f#"$OVERLAY_DIR"/}
			mkdir -p "$tree/rust/$(dirname "$rel")"
			# Replace, never write through: the tree may share inodes.
			rm -f "$tree/rust/$rel"
			cp "$f" "$tree/rust/$rel"
			n=$((n + 1))
		done < <(find "$OVERLAY_DIR" -type f ! -name '*~' ! -name README.md -print0 | LC_ALL=C sort -z)
	fi
	echo "overlay: $n file(s) applied to $tree/rust" ;;
list)
	[ ! -d "$OVERLAY_DIR" ] || (cd "$OVERLAY_DIR" && find . -type f ! -name "*~" ! -name README.md | LC_ALL=C sort) ;;
*)
	echo "usage: overlay.sh apply TREE | list" >&2
	exit 2 ;;
esac
