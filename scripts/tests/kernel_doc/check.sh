#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check.sh KDIR: the series' C adds no kernel-doc warning. For every C
# file or header the patches of patches/$KERNEL_SERIES change, the tree
# KDIR's scripts/kernel-doc (-Wall) warns no more than it does on the
# pristine file from the kernel's source tarball; what cannot be read is a
# failure.
set -u
kdir=$1
top=$(cd "$(dirname "$0")/../../.." && pwd)
. "$top/scripts/toolchain.env"
: "${KERNEL_TARBALL:=/usr/src/linux-source-$KERNEL_SERIES.tar.xz}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ -x "$kdir/scripts/kernel-doc" ] || { echo "FAIL: no scripts/kernel-doc in $kdir"; exit 1; }
[ -r "$KERNEL_TARBALL" ] || { echo "FAIL: no $KERNEL_TARBALL"; exit 1; }

mapfile -t files < <(sed -n 's|^+++ b/\(.*\.[ch]\)$|\1|p' "$top/patches/$KERNEL_SERIES"/*/0*.patch | sort -u)
[ ${#files[@]} -gt 0 ] || { echo "FAIL: the series changes no C file"; exit 1; }
warnings() { python3 "$kdir/scripts/kernel-doc" -none -Wall "$1" 2>&1 | grep -c -i 'warning' || true; }
# The pristine files, in one pass over the tarball (a file the series
# adds is not in it).
tar -xf "$KERNEL_TARBALL" -C "$tmp" "${files[@]/#/linux-source-$KERNEL_SERIES/}" 2>/dev/null
old=$tmp/linux-source-$KERNEL_SERIES
[ -d "$old" ] || { echo "FAIL: none of the series' C files is in $KERNEL_TARBALL"; exit 1; }
fail=0 n=0
for f in "${files[@]}"; do
	# The test kernel builds the abstractions; the in-tree user's files
	# are this repository's.
	new=$kdir/$f
	[ -r "$new" ] || new=$top/${f#tools/testing/}
	[ -r "$new" ] || { echo "FAIL: $f is neither in $kdir nor in the repository"; fail=1; continue; }
	before=0 # a file the series adds
	[ ! -e "$old/$f" ] || before=$(warnings "$old/$f")
	after=$(warnings "$new")
	n=$((n + 1))
	if [ "$after" -gt "$before" ]; then
		echo "FAIL: $f: kernel-doc warns $after times, $before before the series:"
		python3 "$kdir/scripts/kernel-doc" -none -Wall "$new" 2>&1 | sed 's/^/  /'
		fail=1
	fi
done
[ "$fail" -eq 0 ] || exit 1
echo "ok: kernel-doc -Wall: the series adds no warning to the $n C files it changes"
