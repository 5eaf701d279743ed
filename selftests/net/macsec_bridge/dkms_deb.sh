#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The Debian package's module, on the kernel it was built for. On the host,
# scripts/deb-install.sh installed the package as a distribution does for
# a kernel it is about to boot: `dpkg -i macsec-bridge-dkms`, then the
# kernel's headers, whose hook runs `dkms autoinstall -k KVER`; DKMS built
# the module and installed it into /lib/modules/KVER/updates/dkms. This is
# that boot: the module is where the package put it, depmod runs as at
# boot, and `modprobe macsec_bridge` loads it with its dependencies.
#
# MACSEC_BRIDGE_DEB_MODULES is deb-install.sh's OUT: the package's build,
# at its path relative to /lib/modules/KVER. On Debian's own kernel it is
# the modules tree that scripts/debian-install.sh's apt left. /lib/modules is virtme-ng's
# tmpfs, its kernel directory a link into the (read-only) kernel tree: it
# is made a directory here.
set -u
. "$(dirname "$0")/lib.sh"

BUILT=${MACSEC_BRIDGE_DEB_MODULES:-}

require_root
require_cmd depmod modprobe modinfo rmmod
ko=$(cd "$BUILT" 2>/dev/null && find updates -name 'macsec_bridge.ko*' | head -1)
require_ko "${ko:+$BUILT/$ko}" "the package's module (MACSEC_BRIDGE_DEB_MODULES)"
kver=$(uname -r)
moddir=/lib/modules/$kver
if [ -L "$moddir" ]; then
	tree=$(readlink -f "$moddir")
	rm "$moddir" && mkdir "$moddir" || bed_broken "cannot make $moddir a directory"
	for f in "$tree"/*; do
		case "${f##*/}" in build | source | updates) ;; *) ln -s "$f" "$moddir/" ;; esac
	done
fi
mkdir -p "$moddir/$(dirname "$ko")" && cp "$BUILT/$ko" "$moddir/$ko" ||
	bed_broken "cannot install $ko into $moddir"
rm -f "$moddir"/modules.dep "$moddir"/modules.dep.bin

ktap_print_header
ktap_set_plan 5

rmmod macsec_bridge 2>/dev/null
# Whatever loads below is what the package built.
[ ! -e /sys/module/macsec_bridge ] || bed_broken "macsec_bridge is loaded and cannot be unloaded"
check "depmod finds it" bash -c "depmod -a '$kver' && modinfo -n macsec_bridge | grep -qx '$moddir/$ko'"
check "it was built for $kver" [ "$(modinfo -F vermagic macsec_bridge | cut -d' ' -f1)" = "$kver" ]
check "modprobe loads it, and its dependencies" modprobe macsec_bridge
check "it is live" [ "$(cat /sys/module/macsec_bridge/initstate 2>/dev/null)" = live ]
check "rmmod" rmmod macsec_bridge

ktap_finished
