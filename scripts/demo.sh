#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make demo`: build what is missing, boot the test kernel and tell the story
# the project can tell today, in a few readable lines.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/toolchain.env"

variant=debug
[ "${1:-}" = --variant ] && variant=$2

kdir=$("$top/scripts/kernel.sh" --variant "$variant")
mod=$(mktemp -d /tmp/macsec_bridge-demo.XXXXXX)
trap 'rm -rf "$mod"' EXIT
ko=$("$top/scripts/module.sh" "$kdir" "$mod")
echo "booting $(make -s -C "$kdir" kernelrelease) under TCG ..."
exec "$top/scripts/vm-run" --variant "$variant" --kdir "$kdir" --timeout 600 \
	"$top/scripts/demo-guest.sh" "$ko" "$kdir"
