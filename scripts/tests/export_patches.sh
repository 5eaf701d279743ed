#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The rust/ overlay exports as a patch series that `git am` applies, in
# order, to a pristine 6.12 rust/ tree, ending exactly at the overlay; every
# patch has a kernel-style subject.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/scripts/toolchain.env"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$top/scripts/export-patches.sh" "$tmp/patches" >/dev/null
n=$(ls "$tmp/patches"/*.patch | wc -l)
[ "$n" -ge 2 ] || { echo "FAIL: only $n patches"; exit 1; }
if grep -h '^Subject:' "$tmp/patches"/*.patch | grep -vE '^Subject: \[PATCH [0-9]+/[0-9]+\] rust: [a-z]+: '; then
	echo "FAIL: subject not in kernel style"; exit 1
fi

mkdir "$tmp/tree" && cd "$tmp/tree"
tar -xf "/usr/src/linux-source-$KERNEL_SERIES.tar.xz" --strip-components=1 \
	"linux-source-$KERNEL_SERIES/rust"
git init -q . && git add -A
git -c user.name=t -c user.email=t@localhost commit -q -m pristine
git -c user.name=t -c user.email=t@localhost am -q "$tmp/patches"/*.patch
for f in $(cd "$top/rust" && find . -type f ! -name README.md); do
	cmp -s "$top/rust/$f" "rust/$f" || { echo "FAIL: $f differs after git am"; exit 1; }
done
echo "ok: $n patches apply with git am and reproduce the overlay"
