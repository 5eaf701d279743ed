#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make demo`: build what is missing, boot the test kernel and tell the
# story in a few readable lines.  Everything that is not the story (set-up,
# the kernel and module builds, their warnings) goes to a log.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/toolchain.env"

variant=debug
[ "${1:-}" = --variant ] && variant=$2

mod=$(mktemp -d /tmp/macsec_bridge-demo.XXXXXX)
trap 'rm -rf "$mod"' EXIT
buildlog=$mod.log
: > "$buildlog"
# prepare WHAT CMD...: run CMD with its output in the log; on failure, show
# the end of the log and stop.
prepare() {
	local what=$1
	shift
	if ! "$@" 2>>"$buildlog"; then
		echo "demo: $what failed; the end of $buildlog:" >&2
		tail -25 "$buildlog" >&2
		exit 1
	fi
}

echo "preparing the toolchain, the test kernel (about 15 min the first time),"
echo "the module and DRANet-Sec; build output goes to $buildlog"
prepare "set-up" "$top/scripts/setup.sh"
kdir=$(prepare "the kernel build" "$top/scripts/kernel.sh" --variant "$variant")
ko=$(prepare "the module build" "$top/scripts/module.sh" "$kdir" "$mod")
prepare "the DRANet-Sec build" env -u RUSTC -u RUSTDOC -u RUSTFMT \
	CARGO_TARGET_DIR="$top/target" cargo build --locked --quiet \
	--manifest-path "$top/tools/dranet-sec/Cargo.toml" >>"$buildlog"
echo "booting $(make -s -C "$kdir" kernelrelease) under TCG ..."
"$top/scripts/vm-run" --variant "$variant" --kdir "$kdir" --timeout 600 \
	"$top/scripts/demo-guest.sh" "$ko" "$kdir" "$top/target/debug/dranet-sec"
