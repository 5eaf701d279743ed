#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check.sh KDIR: the C fields the kernel crate reads without the writer's
# lock are marked on both sides in the kernel tree KDIR. 7.3's Rust atomics
# (kernel::sync::atomic::atomic_load) require every concurrent store to be
# atomic, so:
#  - macsec.c reads and writes a TX SA's `active` and the SecY's
#    `operational` only through READ_ONCE()/WRITE_ONCE() (PN exhaustion and
#    the transmit path write them without RTNL). Every access to a field
#    named so is checked, whatever the expression, but the RX SA's and RX
#    SC's `active` (macsec_rxsa_get(), rx_sa->, rx_sc->) and the TX SC's,
#    which RTNL serialises;
#  - __dev_change_net_namespace() stores the new ifindex with WRITE_ONCE();
#  - the kernel crate reads the three with atomic_load() and no other way.
# A file missing or a check that finds what it checks absent fails.
set -u
kdir=$1
fail=0
for f in drivers/net/macsec.c net/core/dev.c rust/kernel/net/macsec.rs rust/kernel/net/device.rs; do
	[ -s "$kdir/$f" ] || { echo "FAIL: no $f in $kdir"; exit 1; }
done

# Prints the marked accesses' count, then each unmarked one.
out=$(perl -0ne '
	s{^static struct macsec_rx_sa \*macsec_rxsa_get\(.*?^\}\n}{}ms or die "no macsec_rxsa_get()\n";
	s{/\*.*?\*/}{}gs;
	my $mark = qr/\b(?:READ|WRITE)_ONCE\(\s*[\w>.\[\]-]*?(?:->|\.)(?:active|operational)\b/;
	my $n = () = /$mark/g;
	print "$n\n";
	s/$mark//g;
	s/\b(?:rx_sa|rx_sc)->active\b//g;
	s/\bsecy->tx_sc\.active\b//g;
	print "$1\n" while /(.{0,40}(?:->|\.)(?:active|operational)\b.{0,20})/g;
' "$kdir/drivers/net/macsec.c") || { echo "FAIL: cannot read macsec.c"; exit 1; }
marked=$(head -n 1 <<<"$out")
unmarked=$(tail -n +2 <<<"$out")
if [ -n "$unmarked" ]; then
	echo "FAIL: unmarked accesses in drivers/net/macsec.c:"
	echo "$unmarked"
	fail=1
elif [ "$marked" -lt 20 ]; then
	echo "FAIL: only $marked marked accesses in drivers/net/macsec.c (the fields were renamed?)"
	fail=1
else
	echo "ok: macsec.c marks all $marked accesses to a TX SA's active and the SecY's operational"
fi

if perl -0ne '
	/^int __dev_change_net_namespace\(.*?^\}\n/ms or exit 1;
	my $f = $&;
	exit !($f =~ /WRITE_ONCE\(dev->ifindex, new_ifindex\)/ && $f !~ /dev->ifindex\s*=[^=]/);
' "$kdir/net/core/dev.c"; then
	echo "ok: a namespace move stores the ifindex with WRITE_ONCE()"
else
	echo "FAIL: a namespace move stores the ifindex unmarked (or __dev_change_net_namespace() is gone)"
	fail=1
fi

# rust FILE FIELD: the one access to FIELD, outside comments, is an
# atomic_load() of it; a method call of that name is not an access.
rust() {
	perl -0ne '
		s{//[^\n]*}{}g;
		my $n = s/\batomic_load\(\s*\(\s*&raw const \(\*[^()]*(?:\(\))?\)\.'"$2"'\)\.cast_mut\(\),\s*Relaxed,?\s*\)//g;
		exit 2 if $n < 1;
		exit 3 if /\.'"$2"'\b(?!\s*\()/;
	' "$kdir/$1"
	case $? in
	0) echo "ok: $1 reads $2 with atomic_load() alone" ;;
	2) echo "FAIL: $1 does not read $2 with atomic_load()"; fail=1 ;;
	*) echo "FAIL: $1 reads $2 otherwise too"; fail=1 ;;
	esac
}
rust rust/kernel/net/macsec.rs operational
rust rust/kernel/net/macsec.rs active
rust rust/kernel/net/device.rs ifindex
exit $fail
