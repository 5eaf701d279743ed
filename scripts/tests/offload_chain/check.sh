#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check.sh KDIR: the MACsec offload chain lives in the MACsec driver, which
# alone calls it. In the kernel tree KDIR, built with CONFIG_MACSEC=m:
# macsec.ko holds the chain and exports exactly the registration pair
# (GPL) beside its older exports, nothing that announces, and vmlinux
# holds none of the chain. What cannot be read is a failure.
set -u
kdir=$1
sv=$kdir/Module.symvers
fail=0
grep -qx 'CONFIG_MACSEC=m' "$kdir/.config" || { echo "FAIL: the tree's CONFIG_MACSEC is not m"; exit 1; }
[ -s "$sv" ] || { echo "FAIL: no Module.symvers in $kdir"; exit 1; }

# Every export of macsec.ko, with its kind: the driver's three, and the pair.
want='macsec_get_real_dev EXPORT_SYMBOL_GPL
macsec_netdev_is_offloaded EXPORT_SYMBOL_GPL
macsec_pn_wrapped EXPORT_SYMBOL_GPL
register_macsec_offload_notifier EXPORT_SYMBOL_GPL
unregister_macsec_offload_notifier EXPORT_SYMBOL_GPL'
have=$(awk '$3 == "drivers/net/macsec" { print $2, $4 }' "$sv" | LC_ALL=C sort)
if [ "$have" = "$want" ]; then
	echo "ok: macsec.ko exports the registration pair (GPL) beside its own three, nothing else"
else
	echo "FAIL: macsec.ko's exports differ:"
	diff <(echo "$want") <(echo "$have") | sed 's/^/  /'
	fail=1
fi
if grep -w call_macsec_offload_notifiers "$sv"; then
	echo "FAIL: the chain's caller is exported"
	fail=1
else
	echo "ok: nothing that announces is exported"
fi

# The chain's head is macsec.ko's (a static: a local symbol there).
ko=$(nm "$kdir/drivers/net/macsec.ko") || { echo "FAIL: cannot read macsec.ko's symbols"; exit 1; }
if grep -Eq ' [bdBD] macsec_offload_chain$' <<<"$ko"; then
	echo "ok: macsec.ko holds the chain"
else
	echo "FAIL: macsec.ko has no macsec_offload_chain"
	fail=1
fi
syms=$(nm "$kdir/vmlinux") || { echo "FAIL: cannot read vmlinux's symbols"; exit 1; }
grep -q ' T register_netdevice_notifier$' <<<"$syms" ||
	{ echo "FAIL: vmlinux's symbols lack register_netdevice_notifier: not a kernel?"; exit 1; }
if grep -E ' (macsec_offload_chain|(un)?register_macsec_offload_notifier|call_macsec_offload_notifiers)$' <<<"$syms"; then
	echo "FAIL: vmlinux holds the chain while macsec is a module"
	fail=1
else
	echo "ok: vmlinux holds none of the chain"
fi
exit $fail
