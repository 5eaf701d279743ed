#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The whole run, after every other test (the harness runs it last; the
# kernel tree's copy of the suite leaves it out, as each test already
# fails on a splat of its own run, lib.sh's splat_scan): the kernel log
# since boot holds no WARNING, BUG, lockdep splat, KASAN or kmemleak
# report, no netdev reference left behind (a device whose unregistration
# waits for it), RCU stall or hung task; kmemleak finds no leak.
set -u
. "$(dirname "$0")/lib.sh"

require_root

ktap_print_header
ktap_set_plan 3

# The scan below reads the log since boot: the ring buffer must still hold
# its first record (sequence number 0).
first=$(kmsg | head -n 1)
check "the kernel log holds every line since boot (first record: ${first%% *})" \
	[ "${first%% *}" = 0 ]

kml=/sys/kernel/debug/kmemleak
[ -e "$kml" ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null
if [ -w "$kml" ]; then
	# Objects younger than 5 s are not reported: scan twice, apart.
	echo scan > "$kml"
	sleep 6
	echo scan > "$kml"
	leaks=$(grep -c '^unreferenced object' "$kml")
	if [ "$leaks" -ne 0 ]; then
		head -60 "$kml" | sed 's/^/# /'
	fi
	check "kmemleak: no unreferenced objects (found $leaks)" [ "$leaks" -eq 0 ]
else
	ktap_test_skip "kmemleak not available in this kernel"
fi

# lib.sh's SPLAT_PATTERN, over the whole log less the records tests
# raised on purpose (splat_expected), each range named here.
if [ -s "$SPLATS_FILE" ]; then
	while read -r lo hi; do
		echo "# left out: records $lo to $hi, a warning a test raised on purpose"
	done <"$SPLATS_FILE"
fi
if bad=$(splats -1); then
	[ -z "$bad" ] || sed 's/^/# /' <<<"$bad"
else
	bad="the kernel log could not be read whole"
	echo "# $bad"
fi
check "dmesg has no warning, bug, lockdep or sanitizer report" [ -z "$bad" ]

ktap_finished
