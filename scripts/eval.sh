#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make eval`: what software MACsec costs RDMA between two pods, and what
# macsec_bridge and `dranet-sec audit` add to it (scripts/eval.py, in a VM
# of the test kernel). ITERS scales the iteration counts (default 0.25),
# REPS is how many times each figure is taken in each state (default 3).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/toolchain.env"

variant=debug
[ "${1:-}" = --variant ] && variant=$2

kdir=$("$top/scripts/kernel.sh" --variant "$variant")
mod=$(mktemp -d /tmp/macsec_bridge-eval.XXXXXX)
trap 'rm -rf "$mod"' EXIT
ko=$("$top/scripts/module.sh" "$kdir" "$mod")
env -u RUSTC -u RUSTDOC -u RUSTFMT CARGO_TARGET_DIR="$top/target" \
	cargo build -q --locked --manifest-path "$top/tools/dranet-sec/Cargo.toml"
echo "booting $(make -s -C "$kdir" kernelrelease) under TCG ..."
"$top/scripts/vm-run" --variant "$variant" --kdir "$kdir" --timeout 5400 \
	env ITERS="${ITERS:-0.25}" REPS="${REPS:-3}" /usr/bin/python3 "$top/scripts/eval.py" "$ko" "$top/target/debug/dranet-sec"
