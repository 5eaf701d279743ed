#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/inventory, which make check runs from and holds every run to,
# matches the repository: the test kernel's kselftests are the kselftest
# Makefile's TEST_PROGS in its order, every kselftest file runs on some
# guest, every guest's test is a kselftest file, every host check and
# crate is listed (and nothing else), no line is there twice, and every
# allowed skip gives its reason.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/scripts/toolchain.env"
inv=${INVENTORY:-$top/scripts/inventory}
ksft=$top/selftests/net/macsec_bridge
bad=0
fail() { echo "FAIL: $*"; bad=1; }

# col GUEST: the inventory's tests of GUEST, in order.
col() { INVENTORY=$inv "$top/scripts/inventory-list" "$1"; }
# same WHAT LIST-A LIST-B: the two sorted lists are equal.
same() {
	local d
	d=$(diff <(sort <<<"$2") <(sort <<<"$3")) || fail "$1:"$'\n'"$d"
}

# Every line: GUEST, TEST and at most an allowed skip with its reason.
awk -F'\t' '!/^#/ && NF && (NF < 2 || NF > 3 || $2 == "" ||
	(NF == 3 && $3 !~ /^skip(-check)?: ./)) { print "line " NR ": " $0; f = 1 }
	END { exit f }' "$inv" ||
	fail "lines not of the form GUEST<TAB>TEST[<TAB>skip: REASON|skip-check: REASON]"
dups=$(awk -F'\t' '!/^#/ && NF { print $1 "\t" $2 }' "$inv" | sort | uniq -d)
[ -z "$dups" ] || fail "listed twice: $dups"
guests=$(awk -F'\t' '!/^#/ && NF { print $1 }' "$inv" | sort -u | paste -sd' ')
[ "$guests" = "$MODULE_SERIES boot cargo debian host ktap kunit stock" ] ||
	fail "guests '$guests', not the ones make check runs"

# The test kernel runs the Makefile's TEST_PROGS, in its order.
progs=$(sed -n 's/^TEST_PROGS := //p' "$ksft/Makefile" | tr ' ' '\n' | grep .)
extended=$(sed -n 's/^TEST_PROGS_EXTENDED := //p' "$ksft/Makefile" | tr ' ' '\n' | grep .)
grep -q '^TEST_PROGS *+=' "$ksft/Makefile" && fail "the Makefile adds to TEST_PROGS with +="
[ "$(col "$MODULE_SERIES")" = "$progs" ] ||
	fail "the $MODULE_SERIES list is not TEST_PROGS in its order"
[ "$(col "$MODULE_SERIES" | tail -1)" = dmesg_clean.sh ] ||
	fail "dmesg_clean.sh is not the last $MODULE_SERIES test"

# Every kselftest file runs on some guest, and every guest's test is one.
files=$(cd "$ksft" && ls -- *.sh | grep -vx lib.sh)
same "kselftest files against TEST_PROGS and TEST_PROGS_EXTENDED" "$files" \
	"$(printf '%s\n' "$progs" "$extended" | grep .)"
for g in stock debian; do
	for t in $(col "$g"); do
		[ -f "$ksft/$t" ] || fail "$g runs $t, which is no kselftest"
	done
	[ "$(col "$g" | tail -1)" = dmesg_clean.sh ] || fail "dmesg_clean.sh is not the last $g test"
done
# The stock kernel runs every test of the test kernel but the two of the
# interposer's own test module, which needs the series' kernel crate, and
# the ones of the series' offload notifier and of its kernel crate's
# API, which it lacks, and the one whose frame would oops it without the
# series' receive-path fix; plus the
# package's test (the tree has no package), in the same order.
[ "$(col stock)" = "$(col "$MODULE_SERIES" | grep -vx -e macsec_interposer.sh \
	-e macsec_interposer_vlan.sh -e offload_notifier.sh -e crate_api.sh \
	-e rx_offload_lost.sh -e dmesg_clean.sh
	echo dkms_deb.sh; echo dmesg_clean.sh)" ] ||
	fail "the stock list is not the $MODULE_SERIES list less macsec_interposer*.sh and" \
		"offload_notifier.sh, crate_api.sh and rx_offload_lost.sh, plus dkms_deb.sh"
same "kselftest files against the guests' lists" "$files" \
	"$(for g in "$MODULE_SERIES" stock debian; do col "$g"; done | sort -u)"

# The host's checks and crates.
same "host checks (scripts/tests/*.sh)" \
	"$(cd "$top/scripts/tests" && ls -- *.sh | sed 's/\.sh$//')" "$(col host)"
same "boot checks (scripts/tests/boot/*.sh)" \
	"$(cd "$top/scripts/tests/boot" && ls -- *.sh | sed 's/\.sh$//')" "$(col boot)"
crates=$(cd "$top" && find . -name Cargo.toml -not -path '*/target/*' | sed 's|^\./||; s|/Cargo.toml$||')
same "crates (Cargo.toml)" "$(printf '%s\n' $crates drivers/net/macsec_bridge+interposer)" \
	"$(col cargo)"

[ "$bad" -eq 0 ] || exit 1
echo "ok: $(grep -vc -e '^#' -e '^$' "$inv") entries; $(col "$MODULE_SERIES" | wc -l) $MODULE_SERIES," \
	"$(col stock | wc -l) stock, $(col debian | wc -l) debian kselftests"
