#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The Debian package on Debian 13 with Debian's own 7.3 kernel. In the
# trixie root of scripts/debian-root.sh (kernel image, modules and headers
# from trixie-backports, and what the package depends on), as a Debian
# user does it:
#
#   apt-get install ./macsec-bridge-dkms_<version>_all.deb
#
# DKMS builds the module for 7.3.4+deb13-amd64, making the Rust artifacts
# Debian's headers lack from linux-source-7.3 (scripts/dkms-build.sh).
# Then what a user gets who has another rustc (trixie-backports'), a
# linux-source-7.3 of another version, or none: one line, and no module.
# netdevsim, which Debian does not build, is built out of tree from the
# same linux-source-7.3, for the guest's lockstep tables.
#
#   scripts/debian-install.sh DEB OUT
#
# OUT/kernel is the guest's kernel: boot/vmlinuz-<release> and
# lib/modules/<release>, Debian's modules tree as the package system left
# it (the DKMS module in updates/dkms, netdevsim in updates, depmod run);
# `scripts/vm-run --kimg OUT/kernel/boot/vmlinuz-<release>` boots it.
# OUT/macsec_test_nic.ko is the kselftests' model NIC, built for it.
# The Rust artifacts are cached beside the root (its kbuild/): the first
# run makes them, later runs check them and reuse them. apt-get has no
# source to download from (the backports rustc comes from the root's own
# archive cache): a dependency the root lacks fails the install.
# Prints one KTAP line per check; exits 1 if one failed.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/toolchain.env"

[ $# -eq 2 ] || { echo "usage: debian-install.sh DEB OUT" >&2; exit 2; }
deb=$(readlink -f "$1") out=$2
kver=$DEBIAN_KERNEL_ABI
n=0 failed=0

# check DESC CMD...: one KTAP line for CMD's result; CMD's output goes to
# OUT/<n>.log, shown when it failed.
check() {
	local desc=$1
	shift
	n=$((n + 1))
	if "$@" >"$out/$n.log" 2>&1; then
		echo "ok $n $desc"
	else
		echo "not ok $n $desc"
		sed 's/^/# /' "$out/$n.log" | tail -40
		failed=$((failed + 1))
	fi
}

broken() {
	echo "debian-install.sh: $*" >&2
	exit 1
}

[ -f "$deb" ] || broken "no package at '$1'"
rm -rf "$out"
mkdir -p "$out" || broken "cannot make $out"
rootdir=$("$top/scripts/debian-root.sh") || broken "no Debian root (scripts/debian-root.sh)"
root=$rootdir/root
kbuild=$rootdir/kbuild
mkdir -p "$kbuild"
name=${deb##*/}
ver=$(dpkg-deb -f "$deb" Version) || broken "$deb is not a package"

# in_debian UPPER [--bind…] -- CMD...: CMD in the root, its writes in
# OUT/UPPER, the package at /mnt/pkg; $apt is apt-get with no source.
apt="apt-get -y -o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts=/mnt/pkg/none"
in_debian() {
	local upper=$out/$1
	shift
	"$top/scripts/debian-root.sh" run --upper "$upper" --bind "${deb%/*}:/mnt/pkg" "$@"
}

# The install, with the artifacts' cache writable.
install() {
	in_debian install --bind-rw "$kbuild:/var/cache/macsec-bridge-dkms" -- \
		$apt install "/mnt/pkg/$name"
}
check "apt-get install ./$name on trixie: every dependency in place" install

upper=$out/install/upper
moddir=$upper/usr/lib/modules/$kver
ko=$(find "$moddir/updates/dkms" -name 'macsec_bridge.ko*' 2>/dev/null | head -1)
check "DKMS built the module for $kver and installed it in updates/dkms" [ -n "$ko" ]
makelog=$(find "$upper/var/lib/dkms/macsec_bridge/$ver/$kver" -name make.log 2>/dev/null | head -1)
clean_build() {
	cat "$makelog" && [ -n "$makelog" ] && ! grep -E '(warning|error)(\[|:)|WARNING:' "$makelog"
}
check "its build log has no warning" clean_build
# This build used them: make ran in the copy of the headers that holds them.
artifacts() {
	cat "$kbuild/$kver/.stamp" &&
	grep -qF "Entering directory '/var/cache/macsec-bridge-dkms/$kver'" "$makelog" &&
	grep -qxF "linux-source-7.3 $DEBIAN_KERNEL_VERSION" "$kbuild/$kver/.stamp" &&
	[ -f "$kbuild/$kver/rust/libkernel.rmeta" ] && [ -f "$kbuild/$kver/rust/libmacros.so" ]
}
check "it was built against the Rust artifacts made from linux-source-7.3 $DEBIAN_KERNEL_VERSION" artifacts
vermagic() {
	local v
	v=$(in_debian install -- modinfo -F vermagic "/lib/modules/$kver/updates/dkms/${ko##*/}") &&
	echo "$v" && [ "${v%% *}" = "$kver" ]
}
check "the module's vermagic is $kver" vermagic

# netdevsim from the same source, against Debian's own headers (C only).
netdevsim() {
	in_debian install -- bash -euc '
		cd /tmp
		tar -xf /usr/src/linux-source-7.3.tar.xz linux-source-7.3/drivers/net/netdevsim
		d=/tmp/linux-source-7.3/drivers/net/netdevsim
		make -C "/lib/modules/$1/build" M="$d" CONFIG_NETDEVSIM=m modules
		install -Dm644 "$d/netdevsim.ko" "/lib/modules/$1/updates/netdevsim.ko"
		depmod "$1"
		modinfo -F vermagic "/lib/modules/$1/updates/netdevsim.ko"
	' _ "$kver"
}
check "netdevsim (not in Debian's kernel) built out of tree from linux-source-7.3" netdevsim

# The kselftests' model NIC, against Debian's kernel as the module is: in
# the copy of its headers that holds the Rust artifacts DKMS made, with
# trixie's rustc and bindgen, binding net/macsec.h itself (its Kbuild, as
# on the stock kernel). OUT/macsec_test_nic.ko, for the guest.
model_nic() {
	local src=$out/nic dir
	dir=$("$top/scripts/test-modules-src" "$src") &&
	in_debian install --bind-rw "$kbuild:/var/cache/macsec-bridge-dkms" \
		--bind-rw "$src:/mnt/nic" -- \
		make -C "/var/cache/macsec-bridge-dkms/$kver" M="/mnt/nic/${dir#"$src"/}" RUSTC=/usr/bin/rustc \
		HOSTRUSTC=/usr/bin/rustc BINDGEN=bindgen MACSEC_BRIDGE_COMPAT=y W=1 modules \
		>"$out/nic.log" 2>&1
	local rc=$?
	cat "$out/nic.log"
	[ $rc -eq 0 ] && ! grep -E '(warning|error)(\[|:)' "$out/nic.log" &&
	cp "$dir/macsec_test_nic.ko" "$out/macsec_test_nic.ko" &&
	modinfo -F vermagic "$out/macsec_test_nic.ko" | grep -q "^$kver "
}
check "the model NIC built against $kver's Rust artifacts (W=1, no warning)" model_nic

# The guest's kernel: Debian's image, and the modules tree as the package
# system left it. Hard links to the root's files (its cache must never
# change: what the install wrote replaces a link, never writes through it).
guest_kernel() {
	local g=$out/kernel
	mkdir -p "$g/boot" "$g/lib/modules" &&
	cp "$root/boot/vmlinuz-$kver" "$g/boot/" &&
	{ cp -al "$root/usr/lib/modules/$kver" "$g/lib/modules/" 2>/dev/null ||
	  cp -a "$root/usr/lib/modules/$kver" "$g/lib/modules/"; } &&
	(cd "$moddir" && find . -type f) | while IFS= read -r f; do
		mkdir -p "$(dirname "$g/lib/modules/$kver/$f")" &&
		cp -a --remove-destination "$moddir/$f" "$g/lib/modules/$kver/$f" || exit 1
	done &&
	ls "$g/lib/modules/$kver/updates/dkms/${ko##*/}" "$g/lib/modules/$kver/updates/netdevsim.ko" &&
	grep -q "updates/netdevsim.ko:" "$g/lib/modules/$kver/modules.dep"
}
check "the guest's kernel: Debian's vmlinuz, its modules with both" guest_kernel

# The module was there, and then neither it nor the package nor DKMS's
# record of it is.
purge() {
	local status
	[ -n "$ko" ] &&
	in_debian install -- $apt purge macsec-bridge-dkms &&
	[ -z "$(find "$moddir/updates/dkms" -name 'macsec_bridge.ko*' 2>/dev/null)" ] &&
	status=$(in_debian install -- dkms status macsec_bridge) && [ -z "$status" ] &&
	! in_debian install -- dpkg-query -W -f='${db:Status-Status}\n' macsec-bridge-dkms |
		grep -qx installed
}
check "apt-get purge removes the module and DKMS's record of it" purge

# refused NAME SETUP WANT: with SETUP done in a fresh root (no artifacts
# made yet), installing the package builds nothing, and the build log's
# one line is WANT.
refused() {
	local upper=$out/$1 setup=$2 want=$3 log
	in_debian "$1" -- bash -c "
		( $setup ) || exit 1
		$apt install --no-install-recommends /mnt/pkg/$name
		dkms build macsec_bridge/$ver -k $kver
		true"
	log=$(find "$upper/upper/var/lib/dkms/macsec_bridge" -name make.log 2>/dev/null |
		head -1)
	echo "--- $log"
	cat "$log" 2>/dev/null
	[ -n "$log" ] && [ -z "$(find "$upper/upper" -name 'macsec_bridge.ko*')" ] &&
	[ "$(grep -c '^macsec_bridge: ' "$log")" -eq 1 ] && grep -qF -- "$want" "$log" &&
	! grep -qE '^ *(RUSTC|BINDGEN|CC|make)' "$log"
}
check "another rustc (trixie-backports'): one line, no build" refused rustc \
	"apt-get install -y --no-download -t trixie-backports rustc rust-src" \
	"was built by 'rustc 1.85.1 (4eb161250 2025-03-15) (built from a source tarball)': install that rustc"
# The archive holds one linux-source-7.3: the other version is a package
# made here, with the name, version and file of the real one.
other_source="set -e
	d=/tmp/ls; mkdir -p \$d/DEBIAN \$d/usr/src
	tar -cJf \$d/usr/src/linux-source-7.3.tar.xz -T /dev/null
	printf '%s\n' 'Package: linux-source-7.3' 'Version: 7.3.3-1~bpo13+1' 'Architecture: all' \
		'Maintainer: macsec_bridge developers <macsec-bridge@localhost>' \
		'Description: linux-source-7.3 of another version' > \$d/DEBIAN/control
	dpkg-deb -b \$d /tmp/ls.deb && dpkg -i /tmp/ls.deb"
check "linux-source-7.3 of another version: one line, no build" refused source "$other_source" \
	"linux-source-7.3 is 7.3.3-1~bpo13+1, linux-headers-$kver is $DEBIAN_KERNEL_VERSION: install linux-source-7.3 (= $DEBIAN_KERNEL_VERSION)"
check "no linux-source-7.3: one line, no build" refused nosource \
	"apt-get remove -y linux-source-7.3" \
	"lacks the kernel's Rust artifacts (rust/*.rmeta, rust/*.so); install linux-source-7.3 (= $DEBIAN_KERNEL_VERSION) to make them"

echo "1..$n"
[ "$failed" -eq 0 ]
