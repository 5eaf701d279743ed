#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check.sh KDIR: the MACsec offload chain lives in the MACsec driver, which
# alone calls it. In the kernel tree KDIR, built with CONFIG_MACSEC=m:
# macsec.ko exports the registration pair (GPL) and nothing that announces,
# and vmlinux holds none of the chain.
set -u
kdir=$1
sv=$kdir/Module.symvers
fail=0
grep -qx 'CONFIG_MACSEC=m' "$kdir/.config" || {
	echo "FAIL: the tree's CONFIG_MACSEC is not m"
	exit 1
}
for s in register_macsec_offload_notifier unregister_macsec_offload_notifier; do
	if awk -v s="$s" '$2 == s && $3 == "drivers/net/macsec" && $4 == "EXPORT_SYMBOL_GPL" { f = 1 }
		END { exit !f }' "$sv"; then
		echo "ok: macsec.ko exports $s (GPL)"
	else
		echo "FAIL: $s is not a GPL export of drivers/net/macsec: $(grep -w "$s" "$sv" || echo none)"
		fail=1
	fi
done
if grep -w call_macsec_offload_notifiers "$sv"; then
	echo "FAIL: the chain's caller is exported"
	fail=1
else
	echo "ok: nothing that announces is exported"
fi
if nm "$kdir/vmlinux" | grep -E ' (macsec_offload_chain|(un)?register_macsec_offload_notifier|call_macsec_offload_notifiers)$'; then
	echo "FAIL: vmlinux holds the chain while macsec is a module"
	fail=1
else
	echo "ok: vmlinux holds none of the chain"
fi
exit $fail
