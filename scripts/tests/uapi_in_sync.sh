#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# include/uapi/linux/macsec_bridge.h is exactly what the kernel's YNL
# generator makes of Documentation/netlink/specs/macsec_bridge.yaml (which
# also proves the spec validates against the genetlink schema: the 7.x
# generator refuses a spec that does not).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/scripts/toolchain.env"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

src=linux-source-$MODULE_SERIES
tar -xf "/usr/src/$src.tar.xz" -C "$tmp" \
	"$src/tools/net/ynl" --wildcards "$src/Documentation/netlink/genetlink*.yaml"
"$top/scripts/ynl-uapi.sh" "$tmp/$src" "$tmp/macsec_bridge.h"
if ! diff -u "$top/include/uapi/linux/macsec_bridge.h" "$tmp/macsec_bridge.h"; then
	echo "FAIL: uapi header drifted from the spec; run scripts/ynl-uapi.sh KDIR"
	exit 1
fi
echo "ok: uapi header matches the YNL spec"
