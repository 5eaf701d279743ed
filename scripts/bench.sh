#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make bench`: build the module and DRANet-Sec (release), boot the test
# kernel and run scripts/bench-guest.sh; prints a table.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/toolchain.env"

variant=debug
[ "${1:-}" = --variant ] && variant=$2

kdir=$("$top/scripts/kernel.sh" --variant "$variant")
mod=$(mktemp -d /tmp/macsec_bridge-bench.XXXXXX)
trap 'rm -rf "$mod"' EXIT
ko=$("$top/scripts/module.sh" "$kdir" "$mod")
env -u RUSTC -u RUSTDOC -u RUSTFMT CARGO_TARGET_DIR="$top/target" \
	cargo build -q --release --locked --manifest-path "$top/tools/dranet-sec/Cargo.toml"
echo "booting $(make -s -C "$kdir" kernelrelease) under TCG ..."
exec "$top/scripts/vm-run" --variant "$variant" --kdir "$kdir" --timeout 900 \
	"$top/scripts/bench-guest.sh" "$ko" \
	"$top/target/release/dranet-sec" "${FLIPS:-100}"
