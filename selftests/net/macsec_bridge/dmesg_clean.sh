#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run last: the kernel log since boot holds no WARNING, BUG, lockdep splat,
# KASAN report or kmemleak report, no netdev reference left behind (a
# device whose unregistration waits for it), RCU stall or hung task.
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

# What lockdep, KASAN, kmemleak, DEBUG_ATOMIC_SLEEP and WARN()/BUG() print,
# then what a leaked netdev reference (netdev_wait_allrefs()), a refcount
# misuse, an RCU stall and the hung task detector print.
pattern='WARNING:|BUG:|Oops|general protection fault|possible circular locking'
pattern+='|possible recursive locking|inconsistent lock state|suspicious RCU usage'
pattern+='|DEBUG_LOCKS_WARN_ON|lock held when returning'
pattern+='|sleeping function called from invalid context|KASAN:|UBSAN:'
pattern+='|kmemleak: [0-9]+ new suspected|unreferenced object|Call Trace:'
pattern+='|unregister_netdevice: waiting for|refcount_t: |detected stalls? on CPU'
pattern+='|self-detected stall|blocked for more than [0-9]+ seconds'
# Less the records tests raised on purpose (splat_expected), each range
# named here.
if [ -s "$SPLATS_FILE" ]; then
	while read -r lo hi; do
		echo "# left out: records $lo to $hi, a warning a test raised on purpose"
	done <"$SPLATS_FILE"
fi
if raw=$(kmsg); then
	log=$(awk -v f="$SPLATS_FILE" '
		BEGIN {
			while ((getline l < f) > 0) {
				split(l, r, " ")
				lo[++n] = r[1]
				hi[n] = r[2]
			}
		}
		{
			s = $1 + 0
			for (i = 1; i <= n; i++)
				if (s >= lo[i] && s <= hi[i])
					next
			sub(/^[0-9]+ /, "")
			print
		}' <<<"$raw")
	bad=$(grep -E "$pattern" <<<"$log")
	if [ -n "$bad" ]; then
		grep -E -B2 -A20 "$pattern" <<<"$log" | head -120 | sed 's/^/# /'
	fi
else
	bad="the kernel log could not be read whole"
	echo "# $bad"
fi
check "dmesg has no warning, bug, lockdep or sanitizer report" [ -z "$bad" ]

ktap_finished
