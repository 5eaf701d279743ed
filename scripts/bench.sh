#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make bench`: build the module and DRANet-Sec (release), boot the test
# kernel and run scripts/bench-guest.sh; prints tables.
#
# SIZES (default 16,128,1024,16: 16 again last, see bench-scale.py) are
# the port counts of the scale part, in the order measured;
# BENCH_BASE (git commits, comma-separated; default f85ec94,9a4c078: the
# last one before the state was indexed, and the last one whose indexes
# were red-black trees; both have the tracepoint the scale part reads;
# empty for none) are modules measured beside this one, on the same
# topology in the same run, each labelled by its commit.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/toolchain.env"

variant=debug
[ "${1:-}" = --variant ] && variant=$2

kdir=$("$top/scripts/kernel.sh" --variant "$variant")
mod=$(mktemp -d /tmp/macsec_bridge-bench.XXXXXX)
trap 'rm -rf "$mod"' EXIT
ko=$("$top/scripts/module.sh" "$kdir" "$mod")
bases=
BENCH_BASE=${BENCH_BASE-f85ec94,9a4c078}
IFS=, read -ra commits <<<"$BENCH_BASE"
for c in "${commits[@]}"; do
	mkdir "$mod/base-$c"
	bases+="${bases:+,}$c=$("$top/scripts/module.sh" "$kdir" "$mod/base-$c" "$c")"
done
# DRANET_BASE (default 93b8937, the last DRANet-Sec that read all of
# sysfs and dumped every port on every change; empty for none) is a
# DRANet-Sec measured beside this one. It builds in a target directory of
# its own: two copies of one package in one directory confuse cargo's
# freshness checks.
cargo_release() {
	env -u RUSTC -u RUSTDOC -u RUSTFMT CARGO_TARGET_DIR="$2" \
		cargo build -q --release --locked --manifest-path "$1/tools/dranet-sec/Cargo.toml"
}
dranet=after=$top/target/release/dranet-sec
DRANET_BASE=${DRANET_BASE-93b8937}
if [ -n "$DRANET_BASE" ]; then
	mkdir "$mod/src"
	git -C "$top" archive "$DRANET_BASE" tools/dranet-sec | tar -x -C "$mod/src"
	cargo_release "$mod/src" "$top/target/bench-base"
	dranet=before=$top/target/bench-base/release/dranet-sec,$dranet
fi
cargo_release "$top" "$top/target"
echo "booting $(make -s -C "$kdir" kernelrelease) under TCG ..."
# 1,024 ports are 3,072 netdevs and 1,024 RXE devices: TCG makes an RXE
# device in about 1.4 s.
"$top/scripts/vm-run" --variant "$variant" --kdir "$kdir" --timeout 5400 --memory 6G \
	"$top/scripts/bench-guest.sh" "$ko" \
	"$top/target/release/dranet-sec" "${FLIPS:-100}" "${SIZES:-16,128,1024,16}" "$bases" \
	"$dranet"
