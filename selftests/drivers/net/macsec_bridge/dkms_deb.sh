#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The Debian package, as a distribution's user installs it: onto a system
# whose kernel lacks the patch series and whose headers are what a
# distribution's headers package holds, `dpkg -i macsec-bridge-dkms`,
# `dkms autoinstall` builds the module for the running kernel, and it
# loads; `dpkg -r` takes it away again.
#
# MACSEC_BRIDGE_DEB is the .deb, MACSEC_BRIDGE_HEADERS the running kernel's
# headers (scripts/headers.sh). The package system's directories must be
# writable in the guest without touching the host: scripts/check.sh runs
# this under vm-run --overlay-rwdir for /var/lib, /usr/src and
# /usr/share/doc. /lib/modules is virtme-ng's tmpfs, its kernel directory a
# link into the (read-only) kernel tree: it is made a directory here.
set -u
. "$(dirname "$0")/lib.sh"

DEB=${MACSEC_BRIDGE_DEB:-}
HEADERS=${MACSEC_BRIDGE_HEADERS:-}

require_root
require_cmd dpkg dkms modprobe modinfo rmmod
require_ko "$DEB" "macsec-bridge-dkms package (MACSEC_BRIDGE_DEB)"
[ -f "$HEADERS/Module.symvers" ] ||
	bed_broken "headers of the running kernel not found (MACSEC_BRIDGE_HEADERS='$HEADERS')"
kver=$(uname -r)
moddir=/lib/modules/$kver
# The kernel's own modules, as its package installs them, and no headers
# (nor virtme-ng's link to the whole tree) yet.
if [ -L "$moddir" ]; then
	tree=$(readlink -f "$moddir")
	rm "$moddir" && mkdir "$moddir" || bed_broken "cannot make $moddir a directory"
	for f in "$tree"/*; do
		case "${f##*/}" in build | source) ;; *) ln -s "$f" "$moddir/" ;; esac
	done
fi
for d in /var/lib/dpkg /var/lib/dkms /usr/src "$moddir"; do
	mkdir -p "$d" 2>/dev/null && [ -w "$d" ] || bed_broken "$d is not writable in the guest"
done
[ ! -e "$moddir/build" ] || bed_broken "$moddir/build exists before the headers are installed"
ver=$(dpkg-deb -f "$DEB" Version)

ktap_print_header
ktap_set_plan 8

rmmod macsec_bridge 2>/dev/null
# Whatever loads below is what the package built.
[ ! -e /sys/module/macsec_bridge ] || bed_broken "macsec_bridge is loaded and cannot be unloaded"
# Installed before the kernel's headers, as on a machine that gets them
# later: the package's postinst adds the module to DKMS and builds nothing.
check "dpkg -i installs macsec-bridge-dkms $ver (no headers yet)" dpkg -i "$DEB"
check "dkms status: added, not built" \
	bash -c "dkms status -m macsec_bridge | grep -q ': added'"
# The headers arrive where a headers package links them, and with them
# what their package's hook runs.
ln -sfn "$HEADERS" "$moddir/build"
t0=$SECONDS
check "dkms autoinstall builds and installs it for $kver" dkms autoinstall -k "$kver"
echo "# dkms autoinstall took $((SECONDS - t0)) s"
check "dkms status: installed for $kver" \
	bash -c "dkms status -m macsec_bridge -k '$kver' | grep -q ': installed'"
path=$(modinfo -n macsec_bridge 2>/dev/null)
check "modinfo finds the DKMS build ($path)" \
	bash -c "[[ '$path' == $moddir/updates/dkms/macsec_bridge.ko* ]]"
check "modprobe loads it, and its dependencies" modprobe macsec_bridge
check "it is live" [ "$(cat /sys/module/macsec_bridge/initstate 2>/dev/null)" = live ]
rmmod macsec_bridge
check "dpkg -r removes the package and the module" \
	bash -c "dpkg -r macsec-bridge-dkms && ! modinfo -n macsec_bridge 2>/dev/null"

ktap_finished
