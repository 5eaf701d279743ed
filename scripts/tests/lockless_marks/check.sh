#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check.sh KDIR: the C fields the kernel crate reads without the writer's
# lock are marked on both sides in the kernel tree KDIR. 7.3's Rust atomics
# (kernel::sync::atomic::atomic_load) require every concurrent store to be
# atomic, so:
#  - macsec.c reads and writes a TX SA's `active` and the SecY's
#    `operational` only through READ_ONCE()/WRITE_ONCE() (PN exhaustion and
#    the transmit path write them without RTNL);
#  - dev_change_net_namespace() stores the new ifindex with WRITE_ONCE();
#  - the kernel crate loads all three with atomic_load(), not a volatile or
#    plain read.
set -u
kdir=$1
fail=0
field='(tx_sa|secy)->(active|operational)\b'
unmarked=$(perl -ne '
	$l = $_;
	$l =~ s/\b(READ|WRITE)_ONCE\(\s*(tx_sa|secy)->(active|operational)\b//g;
	print "$.: $_" if $l =~ /(tx_sa|secy)->(active|operational)\b/;
' "$kdir/drivers/net/macsec.c")
if [ -n "$unmarked" ]; then
	echo "FAIL: unmarked accesses in drivers/net/macsec.c:"
	echo "$unmarked"
	fail=1
else
	echo "ok: macsec.c marks every access to $field"
fi
if perl -0ne 'exit !(/static struct macsec_tx_sa \*macsec_txsa_get\([^{]*\{[^}]*READ_ONCE\(sa->active\)/)' \
	"$kdir/drivers/net/macsec.c"; then
	echo "ok: macsec_txsa_get() reads active with READ_ONCE()"
else
	echo "FAIL: macsec_txsa_get() reads sa->active unmarked"
	fail=1
fi
if perl -0ne 'exit !(/int __dev_change_net_namespace\(.*?\n}\n/s && $& =~ /WRITE_ONCE\(dev->ifindex, new_ifindex\)/ && $& !~ /\tdev->ifindex = /)' \
	"$kdir/net/core/dev.c"; then
	echo "ok: a namespace move stores the ifindex with WRITE_ONCE()"
else
	echo "FAIL: a namespace move stores the ifindex unmarked"
	fail=1
fi
for r in 'rust/kernel/net/macsec.rs:operational' 'rust/kernel/net/macsec.rs:active' \
	'rust/kernel/net/device.rs:ifindex'; do
	f=${r%%:*} m=${r#*:}
	if grep -E "atomic_load\(\(&raw const \(\*[a-z_.()]+\)\.$m\)" "$kdir/$f" >/dev/null &&
		! grep -E "(read_volatile|unsafe \{ ?\(\*[a-z_.()]+\))\(?&?(raw const )?\(?\*?[a-z_.()]*\)?\.$m\b" "$kdir/$f" >/dev/null; then
		echo "ok: $f loads $m with atomic_load()"
	else
		echo "FAIL: $f does not load $m with atomic_load() alone"
		fail=1
	fi
done
exit $fail
