#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Generate include/uapi/linux/macsec_bridge.h from the YNL spec with the
# kernel tree's own generator.
#
#   scripts/ynl-uapi.sh KDIR [OUT]     (OUT defaults to the repo's header)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
kdir=$1
out=${2:-$top/include/uapi/linux/macsec_bridge.h}
# The generator validates the spec against the schema beside specs/ and
# names it relative to the kernel root (the directory with MAINTAINERS): lay
# out a minimal root with the kernel's own genetlink schema.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/Documentation/netlink/specs"
touch "$tmp/MAINTAINERS"
spec=$top/Documentation/netlink/specs/macsec_bridge.yaml
proto=$(sed -n 's/^protocol: *//p' "$spec")
cp "$kdir/Documentation/netlink/${proto:-genetlink}.yaml" "$tmp/Documentation/netlink/"
cp "$spec" "$tmp/Documentation/netlink/specs/"
gen=$kdir/tools/net/ynl/pyynl/ynl_gen_c.py
timeout 120 python3 "$gen" --mode uapi --header \
	--spec "$tmp/Documentation/netlink/specs/macsec_bridge.yaml" -o "$out"
