#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What the MACsec core's offload notifier tells its observers, as a raw
# observer on the chain reads it (test_modules/macsec_notifier_probe.rs:
# neither the kernel crate nor the module in between), against this
# test's own record of what it asked and the model NIC's record of what it
# was asked:
# - each announced operation comes as a pre and a post line around the
#   driver's, with copies of what the driver is told: where it goes, the
#   SecY and its real device (ifindexes), the association number, whether
#   a TX SA is active (TX SA operations only), the mode an offload change
#   asks for, the driver's result. The driver's context, which holds the
#   key of an SA operation, is not handed out: the key is nowhere in what
#   the probe is handed nor in the objects that points to (the SecY, the
#   real device), at pre or post.
# - statistics requests (`ip macsec show`, which any user may make) reach
#   the driver and are announced to nobody.
# For a kernel with the MACsec offload notifier only.
set -u
. "$(dirname "$0")/lib.sh"

PROBE_KO=${MACSEC_NOTIFIER_PROBE_KO:-$(dirname "$NIC_KO")/macsec_notifier_probe.ko}

if [ "$(offload_path)" != notifier ]; then
	ktap_skip_all "the kernel has no MACsec offload notifier (the patch series)"
	exit "$KSFT_SKIP"
fi
nic_bed
tracefs_require
require_cmd setpriv
require_ko "$PROBE_KO" "notifier probe test module (MACSEC_NOTIFIER_PROBE_KO)"
probe_cleanup() {
	ip link del macsec1 2>/dev/null
	rmmod macsec_notifier_probe 2>/dev/null
	nic_cleanup
}
on_exit probe_cleanup
insmod "$PROBE_KO" || ktap_exit_fail_msg "cannot load the notifier probe"

# told_are LINE...: since the trace was emptied, the probe was told exactly
# these, in this order, each "pre|post OP FIELDS".
told_are() {
	local got
	got=$(sed -n 's/.*macsec_notifier_probe: //p' "$T/trace")
	[ "$got" = "$(printf '%s\n' "$@")" ] && return 0
	echo "# told: $(echo $got)"
	return 1
}
# around OP SECY AN ACTIVE RET: the two lines of one MAC operation on SECY
# (an ifindex) over mtn0, the driver returning RET.
around() {
	local f="offload=mac secy=$2 real=$NIC an=$3 active=$4 new=off"
	echo "pre $1 $f ret=0 key=0"
	echo "post $1 $f ret=$5 key=0"
}
# step DESC CMD... -- OPS -- TOLD...: CMD succeeds, the model NIC returned
# from exactly OPS (ops_are) and the probe was told exactly TOLD (each
# argument a line or several).
step() {
	local desc=$1 cmd=() ops=() told=()
	shift
	while [ "$1" != -- ]; do cmd+=("$1"); shift; done
	shift
	while [ "$1" != -- ]; do ops+=("$1"); shift; done
	shift
	told=("$@")
	echo >"$T/trace"
	check "$desc" eval '"${cmd[@]}" && ops_are "${ops[@]}" && told_are "${told[@]}"'
}

NIC=$(<"/sys/class/net/mtn0/ifindex")
ktap_print_header
ktap_set_plan 14

echo >"$T/trace"
if ip link add link mtn0 macsec0 type macsec port 4 offload mac; then
	M=$(<"/sys/class/net/macsec0/ifindex")
else
	M=none
fi
check "a SecY offloaded at its creation: add_secy" \
	eval 'ops_are "mdo_add_secy 0" && told_are "$(around add_secy "$M" 0 0 0)"'
step "a SecY updated: upd_secy" \
	ip link set macsec0 type macsec encrypt on -- "mdo_upd_secy 0" -- \
	"$(around upd_secy "$M" 0 0 0)"
step "a TX SA: add_txsa, its AN, active, not its key" \
	ip macsec add macsec0 tx sa 1 pn 1 on key 01 "$MB_KEY" -- "mdo_add_txsa 0" -- \
	"$(around add_txsa "$M" 1 1 0)"
step "the TX SA turned off: upd_txsa, its AN, inactive" \
	ip macsec set macsec0 tx sa 1 off -- "mdo_upd_txsa 0" -- \
	"$(around upd_txsa "$M" 1 0 0)"
step "an RX SC: add_rxsc" \
	ip macsec add macsec0 rx port 1 address 02:00:00:00:00:01 -- "mdo_add_rxsc 0" -- \
	"$(around add_rxsc "$M" 0 0 0)"
step "an active RX SA: add_rxsa, its AN, no TX SA active, not its key" \
	ip macsec add macsec0 rx port 1 address 02:00:00:00:00:01 sa 2 pn 1 on key 02 "$MB_KEY" -- \
	"mdo_add_rxsa 0" -- "$(around add_rxsa "$M" 2 0 0)"
ip link set mtn0 alias fail:mdo_add_txsa
step "a TX SA the driver refuses: its error after" \
	eval '! ip macsec add macsec0 tx sa 3 pn 1 on key 03 "$MB_KEY"' -- "mdo_add_txsa -5" -- \
	"$(around add_txsa "$M" 3 1 -5)"
ip link set mtn0 alias ''
step "open: dev_open" \
	ip link set macsec0 up -- "mdo_dev_open 0" -- "$(around dev_open "$M" 0 0 0)"

# stats_only: since the trace was emptied, the NIC returned from
# statistics operations only, mdo_get_dev_stats among them.
stats_only() {
	local got
	got=$(sed -n 's/.*macsec_test_nic: \(mdo_[a-z_]*\) exit .*/\1/p' "$T/trace")
	grep -qx mdo_get_dev_stats <<<"$got" && ! grep -qv '^mdo_get_[a-z_]*_stats$' <<<"$got" &&
		return 0
	echo "# operations: $(echo $got)"
	return 1
}
echo >"$T/trace"
check "statistics, by root: the driver is asked, nobody told" \
	eval 'ip macsec show macsec0 >/dev/null && stats_only && told_are'
echo >"$T/trace"
check "statistics, by a user without privilege: the driver is asked, nobody told" \
	eval 'setpriv --reuid=65534 --regid=65534 --clear-groups \
		ip macsec show macsec0 >/dev/null && stats_only && told_are'

ip link add link mtn0 macsec1 type macsec port 5 offload off
M1=$(cat /sys/class/net/macsec1/ifindex 2>/dev/null || echo none)
step "offload turned on: upd_offload around add_secy, the mode asked for" \
	ip macsec offload macsec1 mac -- "mdo_add_secy 0" -- \
	"pre upd_offload offload=mac secy=$M1 real=$NIC an=0 active=0 new=mac ret=0 key=0" \
	"$(around add_secy "$M1" 0 0 0)" \
	"post upd_offload offload=mac secy=$M1 real=$NIC an=0 active=0 new=mac ret=0 key=0"
step "offload turned off: upd_offload around del_secy" \
	ip macsec offload macsec1 off -- "mdo_del_secy 0" -- \
	"pre upd_offload offload=mac secy=$M1 real=$NIC an=0 active=0 new=off ret=0 key=0" \
	"$(around del_secy "$M1" 0 0 0)" \
	"post upd_offload offload=mac secy=$M1 real=$NIC an=0 active=0 new=off ret=0 key=0"
step "closed: dev_stop" \
	ip link set macsec0 down -- "mdo_dev_stop 0" -- "$(around dev_stop "$M" 0 0 0)"
step "deleted: del_secy" \
	ip link del macsec0 -- "mdo_del_secy 0" -- "$(around del_secy "$M" 0 0 0)"

ktap_finished
