#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The Debian package as a distribution installs it for a kernel: the
# kernel's modules are there, `dpkg -i macsec-bridge-dkms` (DKMS adds the
# module and, without headers, builds nothing), then the kernel's headers
# arrive and their package's hook runs `dkms autoinstall -k KVER`, which
# builds and installs the module into updates/dkms; `dpkg -r` takes it
# away again. This is what happens when a kernel and its headers are
# installed before the machine boots into them; dkms_deb.sh, in a guest
# of that kernel, then loads the module this built.
#
#   scripts/deb-install.sh DEB KVER MODULES HEADERS OUT
#
# DEB: the package. KVER: the kernel's release. MODULES: its modules as
# its package installs them in /lib/modules/KVER. HEADERS: its headers
# (scripts/headers.sh). OUT: where the module the package built is
# copied, under its installed path relative to /lib/modules/KVER.
#
# Run as root on this machine without changing it: in a mount namespace of
# its own, the directories the package system writes (/etc, /usr/lib for
# /lib/modules, /usr/src, /usr/share/doc, /var/cache, /var/lib) are
# overlays whose upper layers live in OUT's scratch directory and go when
# the namespace ends. Prints one KTAP line per check; exits 1 if one
# failed.
set -uo pipefail

# The caller's mount namespace; the script runs again in a new one.
if [ -z "${DEB_INSTALL_HOST_NS:-}" ]; then
	[ $# -eq 5 ] || { echo "usage: deb-install.sh DEB KVER MODULES HEADERS OUT" >&2; exit 2; }
	[ "$(id -u)" -eq 0 ] || { echo "deb-install.sh: needs root (mount namespace, overlays)" >&2; exit 1; }
	DEB_INSTALL_HOST_NS=$(readlink /proc/self/ns/mnt) \
		exec unshare --mount --propagation private "$0" "$@"
fi

deb=$1 kver=$2 modules=$3 headers=$4 out=$5
# Never on the caller's own mounts.
[ "$(readlink /proc/self/ns/mnt)" != "$DEB_INSTALL_HOST_NS" ] ||
	{ echo "deb-install.sh: not in a mount namespace of its own" >&2; exit 1; }
scratch=$out/.overlays
n=0 failed=0

# check DESC CMD...: one KTAP line for CMD's result.
check() {
	local desc=$1
	shift
	n=$((n + 1))
	if "$@"; then
		echo "ok $n $desc"
	else
		echo "not ok $n $desc"
		failed=$((failed + 1))
	fi
}

# broken WHY: the set-up failed: no check could run.
broken() {
	echo "deb-install.sh: $*" >&2
	exit 1
}

[ -f "$deb" ] || broken "no package at '$deb'"
[ -f "$modules/modules.dep" ] || broken "'$modules' holds no installed kernel modules"
[ -f "$headers/Module.symvers" ] || broken "no kernel headers at '$headers'"
rm -rf "$out"
mkdir -p "$out" "$scratch" || broken "cannot make $out"
for d in /etc /usr/lib /usr/src /usr/share/doc /var/cache /var/lib; do
	o=$scratch/$(tr / _ <<<"$d")
	mkdir -p "$o/upper" "$o/work" &&
	mount -t overlay overlay -o "lowerdir=$d,upperdir=$o/upper,workdir=$o/work" "$d" ||
		broken "cannot mount an overlay on $d"
done

# The kernel's own modules, as its package installs them; no headers yet.
moddir=/lib/modules/$kver
mkdir -p "$moddir" || broken "cannot make $moddir"
for f in "$modules"/*; do
	case "${f##*/}" in build | source) ;; *) ln -s "$f" "$moddir/" ;; esac
done
ver=$(dpkg-deb -f "$deb" Version) || broken "$deb is not a package"

echo "TAP version 13"
echo "1..9"
check "dpkg -i installs macsec-bridge-dkms $ver (no headers yet)" dpkg -i "$deb"
check "dkms status: added, not built" \
	bash -c "dkms status -m macsec_bridge | grep -q ': added'"
# The headers arrive where their package links them, and its hook runs.
ln -sfn "$headers" "$moddir/build"
t0=$SECONDS
check "dkms autoinstall -k $kver builds and installs it" dkms autoinstall -k "$kver"
echo "# dkms autoinstall took $((SECONDS - t0)) s"
check "dkms status: installed for $kver" \
	bash -c "dkms status -m macsec_bridge -k '$kver' | grep -q ': installed'"
path=$(modinfo -k "$kver" -n macsec_bridge 2>/dev/null)
check "modinfo -k finds the DKMS build ($path)" \
	bash -c "[[ '$path' == $moddir/updates/dkms/macsec_bridge.ko* ]]"
check "it was built for $kver" \
	[ "$(modinfo -F vermagic "$path" 2>/dev/null | cut -d' ' -f1)" = "$kver" ]
rel=${path#"$moddir"/}
check "depmod lists it with its dependencies (macsec, ib_core)" \
	bash -c "grep -E '^$rel: .*macsec\\.ko.*' '$moddir/modules.dep' | grep -q ib_core"
mkdir -p "$out/$(dirname "$rel")" && cp "$path" "$out/$rel"
check "dpkg -r removes the package and the module" \
	bash -c "dpkg -r macsec-bridge-dkms && ! modinfo -k '$kver' -n macsec_bridge 2>/dev/null"
check "dkms no longer knows it" bash -c "[ -z \"\$(dkms status -m macsec_bridge)\" ]"
echo "# $failed of $n failed"
[ "$failed" -eq 0 ]
