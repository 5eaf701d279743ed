#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check.sh KDIR OUT: safe Rust gets one feature write from the kernel
# crate, NETIF_F_HW_MACSEC through FeaturesLock::set_hw_macsec(), which
# refuses the bit where it is a driver's or a user's. Against the kernel
# tree KDIR, safe code cannot write another bit (any_bit), take the right
# to write under RTNL alone, which a NETDEV_REGISTER notifier of the device
# holds too (register), nor take the right a notifier's event gives from
# an event it made up (event); the control (allowed), every way to the
# write with the unsafe its contract asks for, builds warning-free (a bed
# that builds nothing fails). Builds in OUT.
set -u
kdir=$1 out=$2
here=$(dirname "$(readlink -f "$0")")
. "$here/../../toolchain.env"
rm -rf "$out" && mkdir -p "$out" || exit 1
cp -r "$here/allowed" "$here/any_bit" "$here/register" "$here/event" "$out/" || exit 1
kmake() {
	make ARCH=x86_64 RUSTC="$RUSTC" HOSTRUSTC="$RUSTC" BINDGEN="$BINDGEN" -C "$kdir" "$@"
}
rc=0
if kmake M="$out/allowed" W=1 modules >"$out/allowed.log" 2>&1 &&
	! grep -q '^warning' "$out/allowed.log"; then
	echo "ok: the allowed feature writes build, warning-free"
else
	cat "$out/allowed.log"
	echo "FAIL: the allowed feature writes do not build warning-free"
	rc=1
fi
# refused NAME ERROR WHAT: module NAME must fail to build, with rustc's
# error ERROR (an extended regular expression) and no other.
refused() {
	if kmake M="$out/$1" modules >"$out/$1.log" 2>&1; then
		echo "FAIL: $3 builds"
		rc=1
	elif ! grep -Eq "^$2" "$out/$1.log" ||
		[ "$(grep -c '^error\[' "$out/$1.log")" != 1 ]; then
		grep '^error' "$out/$1.log"
		echo "FAIL: $3 failed to build, but not (only) with: $2"
		rc=1
	else
		echo "ok: $3 does not build ($(grep -o '^error\[E[0-9]*\]' "$out/$1.log"))"
	fi
}
refused any_bit 'error\[E0599\]: no method named `change` found for struct `FeaturesLock' \
	"safe code writing any feature bit (FeaturesLock::change)"
refused register 'error\[E0133\]: call to unsafe function `.*features_lock_rtnl` is unsafe' \
	"safe code taking the right to write features under RTNL alone"
refused event 'error\[E0133\]: call to unsafe function `.*NetdevEvent.*::features_lock` is unsafe' \
	"safe code taking the right a made-up notifier event gives"
exit $rc
