#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the module from a scratch copy against the test kernel KDIR, in DIR;
# prints the .ko's path.
#
#   scripts/module.sh KDIR DIR
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/toolchain.env"
kdir=$1
dir=$2
cp -r "$top/Kbuild" "$top/drivers" "$top/include" "$dir/"
make -s -C "$kdir" M="$dir" ARCH=x86_64 RUSTC="$RUSTC" HOSTRUSTC="$RUSTC" \
	BINDGEN="$BINDGEN" modules >/dev/null
echo "$dir/drivers/net/macsec_bridge/macsec_bridge.ko"
