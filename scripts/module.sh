#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the module from a scratch copy against the test kernel KDIR, in DIR;
# prints the .ko's path. With REF, the copy is the module as of that git
# commit (`make bench` compares against one).
#
#   scripts/module.sh KDIR DIR [REF]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/toolchain.env"
kdir=$1
dir=$2
if [ -n "${3:-}" ]; then
	git -C "$top" archive "$3" Kbuild drivers include | tar -x -C "$dir"
else
	cp -r "$top/Kbuild" "$top/drivers" "$top/include" "$dir/"
fi
make -s -C "$kdir" M="$dir" ARCH=x86_64 RUSTC="$RUSTC" HOSTRUSTC="$RUSTC" \
	BINDGEN="$BINDGEN" modules >/dev/null
echo "$dir/drivers/net/macsec_bridge/macsec_bridge.ko"
