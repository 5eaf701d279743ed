#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What the kernel crate's networking API lets a Rust driver do, as any
# driver could do it (test_modules/crate_api_probe.rs; the module under
# test is not loaded):
# - NETIF_F_HW_MACSEC through the one safe feature write there is,
#   FeaturesLock::set_hw_macsec(), which flips it at the probe's load. On
#   a device with macsec_ops (netdevsim, and a VLAN over it) the bit is
#   the driver's: the write is refused (EOPNOTSUPP) and nothing changes.
#   Cleared under a MAC-offloaded SecY, the MACsec core would find no
#   operations for it (macsec_get_ops()) and its receive path would
#   dereference that NULL on the next frame (handle_not_macsec()): a frame
#   is received there after the refusal, and the kernel stays clean. On a
#   device without them (dummy) the bit is set, then cleared, each write
#   announced by one RTM_NEWLINK and seen by ethtool.
# - Rtnl::assume_held() asserts through lockdep that the task holds RTNL:
#   asked without it (the probe breaks the contract on purpose), lockdep
#   reports it in the kernel log, with the caller in the trace.
# For the kernel with the patch series only: the API is the series'.
set -u
. "$(dirname "$0")/lib.sh"

PROBE_KO=${CRATE_API_PROBE_KO:-$(dirname "$NIC_KO")/crate_api_probe.ko}

if [ "$(offload_path)" != notifier ]; then
	ktap_skip_all "the kernel crate has no FeaturesLock (the patch series)"
	exit "$KSFT_SKIP"
fi
require_root
require_cmd ip ethtool insmod rmmod python3
require_ko "$PROBE_KO" "features probe test module (CRATE_API_PROBE_KO)"
modprobe -q macsec dummy 8021q 2>/dev/null
nsim_require

T=$(mktemp -d)
features_cleanup() {
	rmmod crate_api_probe 2>/dev/null
	ip link del mbf_macsec 2>/dev/null
	ip link del mbf_vlan 2>/dev/null
	ip link del mbf_dummy 2>/dev/null
	nsim_del_all
	rm -rf "$T"
}
on_exit features_cleanup
nsim_pair || bed_broken "a linked pair of netdevsim ports"

# flip DEV: loads the probe on DEV (it flips DEV's bit once) and prints its
# line, from "ifindex=" on.
flip() {
	local line
	rmmod crate_api_probe 2>/dev/null
	dmesg_mark
	insmod "$PROBE_KO" ifindex="$(ifindex "$1")" || return 1
	line=$(dmesg_since | sed -n 's/.*crate_api_probe: \(ifindex=\)/\1/p')
	echo "$line"
}
# flipped DEV WANT: the probe's line for DEV is WANT (with DEV's ifindex
# put first), and ethtool agrees with its "after".
flipped() {
	local got want="ifindex=$(ifindex "$1") $2" seen=off
	got=$(flip "$1")
	[ "${2##*after=}" = 1 ] && seen=on
	[ "$got" = "$want" ] && [ "$(hw_macsec "$1")" = $seen ] && return 0
	echo "# $1: probe said '$got', wanted '$want'; ethtool: $(hw_macsec "$1")"
	return 1
}
# announced WANT: the probe's write on mbf_dummy is WANT, and the kernel
# announced exactly one RTM_NEWLINK of mbf_dummy for it: the monitor's
# lines between two MTU changes of the test's own, each waited for (an
# MTU change is announced whether the device is up or not).
announced() {
	local mon=$T/monitor pid n i=0 ok=0
	ip -o monitor link >"$mon" 2>/dev/null &
	pid=$!
	# The monitor is listening once an MTU change reaches it.
	until grep -q "mbf_dummy.* mtu $((1300 + i)) " "$mon"; do
		((i++ < 50)) || break
		ip link set mbf_dummy mtu $((1300 + i))
		nap 0.2
	done
	if grep -q "mbf_dummy.* mtu $((1300 + i)) " "$mon" && flipped mbf_dummy "$1"; then
		ip link set mbf_dummy mtu 1280
		wait_for 50 grep -q 'mbf_dummy.* mtu 1280 ' "$mon" && ok=1
	fi
	kill "$pid"
	wait "$pid" 2>/dev/null
	[ $ok = 1 ] || return 1
	n=$(sed -n "/mbf_dummy.* mtu $((1300 + i)) /,/mbf_dummy.* mtu 1280 /p" "$mon" |
		grep -c 'mbf_dummy')
	# The two marks and the write's between them.
	[ "$n" = 3 ] && return 0
	echo "# RTM_NEWLINK of mbf_dummy between the marks: $((n - 2))"
	return 1
}

# The bed: a SecY offloaded to NSIM_B's MAC, up; a VLAN over NSIM_B; a
# dummy device.
ip link add link "$NSIM_B" mbf_macsec type macsec port 9 offload mac &&
	ip link set mbf_macsec up || bed_broken "a MAC-offloaded SecY on netdevsim"
ip link add link "$NSIM_B" name mbf_vlan type vlan id 5 || bed_broken "a VLAN over netdevsim"
ip link add mbf_dummy type dummy || bed_broken "a dummy device"
vb=0
[ "$(hw_macsec mbf_vlan)" = on ] && vb=1

ktap_print_header
ktap_set_plan 8
dmesg_mark
START=$DMESG_MARK
check "netdevsim under an offloaded SecY: the write is refused, the bit stays" \
	flipped "$NSIM_B" "ops=1 before=1 ret=-95 after=1"
check "a frame received under the offloaded SecY after the refusal reaches it" \
	delivered "$NSIM_A" "$NSIM_B" mbf_macsec 1
check "a VLAN over netdevsim (macsec_ops forwarding to it): refused" \
	flipped mbf_vlan "ops=1 before=$vb ret=-95 after=$vb"
check "a dummy device (no macsec_ops): the bit is set, announced once" \
	announced "ops=0 before=0 ret=1 after=1"
check "the dummy device again: the bit is cleared, announced once" \
	announced "ops=0 before=1 ret=1 after=0"
check "the offloaded SecY's device kept its bit through it all" \
	[ "$(hw_macsec "$NSIM_B")" = on ]
DMESG_MARK=$START
dmesg_clean_since "no warning, bug or oops in the kernel log"

# unheld_reported: the probe, asking for RTNL's proof without RTNL, drew
# one warning, raised in the kernel crate's assertion (lockdep's) and
# reached from the probe's init, and nothing else the kernel log scan
# would report. Its records, from the WARNING line to the end of its
# trace, are the ones the kernel log scans (splat_scan) then leave out.
unheld_reported() {
	local raw log first last others
	rmmod crate_api_probe 2>/dev/null
	dmesg_mark
	insmod "$PROBE_KO" unheld=1 || return 1
	raw=$(kmsg) || return 1
	log=$(awk -v m="$DMESG_MARK" '$1 > m' <<<"$raw")
	first=$(awk '/WARNING:/ { print $1; exit }' <<<"$log")
	last=$(awk -v f="${first:-0}" '$1 >= f && /---\[ end trace/ { print $1; exit }' <<<"$log")
	others=$(awk -v f="${first:-0}" -v l="${last:-0}" '$1 < f || $1 > l' <<<"$log" |
		grep -E 'WARNING:|BUG:|Oops|lockdep|KASAN:|UBSAN:|Call Trace:')
	if grep -q 'crate_api_probe: assume_held without RTNL' <<<"$log" &&
		[ -n "$first" ] && [ -n "$last" ] && [ -z "$others" ] &&
		awk -v f="$first" '$1 == f' <<<"$log" |
		grep -Eq 'WARNING:.*(rtnl_assert_held|helpers/net/rtnetlink\.c)' &&
		awk -v f="$first" -v l="$last" '$1 >= f && $1 <= l' <<<"$log" |
		grep -q '\[crate_api_probe\]'; then
		splat_expected "$first" "$last"
		return 0
	fi
	grep -E 'WARNING:|rtnl_assert_held|crate_api_probe|BUG:|Oops' <<<"$log" | head -20 |
		sed 's/^/# /'
	return 1
}
# The assertion is lockdep's: a kernel without it (CONFIG_PROVE_LOCKING)
# has nothing to report.
if [ -e /proc/lockdep ]; then
	check "Rtnl::assume_held without RTNL: lockdep reports it" unheld_reported
else
	ktap_test_skip "Rtnl::assume_held without RTNL: the kernel has no lockdep"
fi

ktap_finished
