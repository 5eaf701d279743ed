#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check.sh KDIR OUT: what a MACsec offload notifier is told
# (struct macsec_offload_info) holds no way to the driver's context, so no
# way to an SA's key: a notifier reaching for it does not build against
# the kernel tree KDIR, where one reading every member it has does (the
# control: a bed that builds nothing fails). Builds in OUT.
set -u
kdir=$1 out=$2
here=$(dirname "$(readlink -f "$0")")
. "$here/../../toolchain.env"
rm -rf "$out" && mkdir -p "$out" && cp -r "$here/told" "$here/reach" "$out/" || exit 1
kmake() {
	make ARCH=x86_64 RUSTC="$RUSTC" HOSTRUSTC="$RUSTC" BINDGEN="$BINDGEN" -C "$kdir" "$@"
}
if ! kmake M="$out/told" W=1 modules >"$out/told.log" 2>&1; then
	cat "$out/told.log"
	echo "FAIL: a notifier reading every member of struct macsec_offload_info does not build"
	exit 1
fi
echo "ok: a notifier reading every member of struct macsec_offload_info builds"
if kmake M="$out/reach" modules >"$out/reach.log" 2>&1; then
	echo "FAIL: a notifier reaching for info->ctx->sa.key builds"
	exit 1
fi
if ! grep -q "has no member named .ctx." "$out/reach.log"; then
	cat "$out/reach.log"
	echo "FAIL: the notifier reaching for the key failed to build for another reason"
	exit 1
fi
echo "ok: a notifier reaching for info->ctx->sa.key does not build (no member 'ctx')"
