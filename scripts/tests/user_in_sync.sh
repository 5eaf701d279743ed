#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The series' last two patches, the module and its kselftests in the
# kernel tree, are exactly what `scripts/series.sh user` makes of this
# repository's files: the driver in the tree and the one built here have
# one source. Written again as whoever signed them off, every patch of
# the series, set by set with its addresses and cover letters, must come
# out byte for byte the same.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/scripts/toolchain.env"
series=$top/patches/$MODULE_SERIES
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

mapfile -t user < <(KERNEL_SERIES=$MODULE_SERIES "$top/scripts/series.sh" user-patches)
if [ ${#user[@]} -ne 2 ]; then
	echo "FAIL: ${#user[@]} patches of the in-tree user in ${series#"$top"/}, not 2 (the module, its kselftests);"
	echo "      run scripts/series.sh user"
	exit 1
fi
author=$(sed -n 's/^Signed-off-by: //p' "${user[0]}" | tail -1)
cp -r "$series" "$tmp/series"
SERIES_DIR=$tmp/series MB_AUTHOR=$author KERNEL_SERIES=$MODULE_SERIES \
	"$top/scripts/series.sh" user >/dev/null
if ! diff -ru "$series" "$tmp/series"; then
	echo "FAIL: the series' in-tree user drifted from this repository's files; run"
	echo "      KERNEL_SERIES=$MODULE_SERIES scripts/series.sh user"
	exit 1
fi
echo "ok: the series ends with the module and its kselftests as this repository has them" \
	"($(grep -c '^diff --git' "${user[0]}") and $(grep -c '^diff --git' "${user[1]}") files)"
