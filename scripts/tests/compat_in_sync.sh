#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# drivers/net/macsec_bridge/compat/, the patch series as a part of the
# module (what DKMS builds on a kernel without the series), is exactly what
# `scripts/series.sh compat` makes of patches/$MODULE_SERIES: the series and
# the module's copy have one source, and neither is edited alone.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/scripts/toolchain.env"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

KERNEL_SERIES=$MODULE_SERIES "$top/scripts/series.sh" compat "$tmp/compat"
if ! diff -ru "$top/drivers/net/macsec_bridge/compat" "$tmp/compat"; then
	echo "FAIL: compat/ drifted from the series; run"
	echo "      scripts/series.sh compat drivers/net/macsec_bridge/compat"
	exit 1
fi
echo "ok: compat/ is the series ($(KERNEL_SERIES=$MODULE_SERIES "$top/scripts/series.sh" patches | wc -l) patches," \
	"$(find "$tmp/compat" -type f | wc -l) files)"
