#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make bench`: build the module and DRANet-Sec (release), boot the test
# kernel and run scripts/bench-guest.sh; prints tables.
#
# SIZES (default 16,128,1024) are the port counts of the scale part;
# BENCH_BASE (a git commit; default f85ec94, the last one before the state
# was indexed, which has the tracepoint the scale part reads; empty for
# none) is a module measured beside this one, on the same topology in the
# same run.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/toolchain.env"

variant=debug
[ "${1:-}" = --variant ] && variant=$2

kdir=$("$top/scripts/kernel.sh" --variant "$variant")
mod=$(mktemp -d /tmp/macsec_bridge-bench.XXXXXX)
trap 'rm -rf "$mod"' EXIT
ko=$("$top/scripts/module.sh" "$kdir" "$mod")
base_ko=
BENCH_BASE=${BENCH_BASE-f85ec94}
if [ -n "$BENCH_BASE" ]; then
	mkdir "$mod/base"
	base_ko=$("$top/scripts/module.sh" "$kdir" "$mod/base" "$BENCH_BASE")
fi
env -u RUSTC -u RUSTDOC -u RUSTFMT CARGO_TARGET_DIR="$top/target" \
	cargo build -q --release --locked --manifest-path "$top/tools/dranet-sec/Cargo.toml"
echo "booting $(make -s -C "$kdir" kernelrelease) under TCG ..."
# 1,024 ports are 3,072 netdevs and 1,024 RXE devices: TCG makes an RXE
# device in about 1.4 s.
"$top/scripts/vm-run" --variant "$variant" --kdir "$kdir" --timeout 5400 --memory 6G \
	"$top/scripts/bench-guest.sh" "$ko" \
	"$top/target/release/dranet-sec" "${FLIPS:-100}" "${SIZES:-16,128,1024}" "$base_ko"
