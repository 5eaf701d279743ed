#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A dump that takes several datagrams stays consistent: 100 bound ports
# need two or more, read one at a time by mb_genl.py. With nothing
# changing in between, every port comes once, in the order it was tracked,
# and no message says NLM_F_DUMP_INTR. When a port already sent is deleted
# and another is tracked between two datagrams, the ports that lived
# throughout still come exactly once, and the dump says NLM_F_DUMP_INTR,
# so the reader knows to ask again. A port renamed over and over while
# dumps run is always reported under one of its two names, whole: the
# name a reader gets was copied under RTNL, never read as it changes.
set -u
. "$(dirname "$0")/lib.sh"

require_root
require_cmd ip insmod rmmod
require_ko "$MODULE_KO" "module under test (MACSEC_BRIDGE_KO)"
GENL="/usr/bin/python3 $lib_dir/mb_genl.py"
N=100

cleanup() {
	local i
	for i in $(seq 0 $((N - 1))) new; do echo "link del mbp$i"; done |
		ip -force -batch - 2>/dev/null
	ip link del mbp1renamed 2>/dev/null
	ip link del mbd0 2>/dev/null
	rmmod macsec_bridge 2>/dev/null
	rm -rf "$ROW_DIR"
}
on_exit cleanup

# verdict FILE PYTHON-EXPRESSION: over `d`, the JSON in FILE.
verdict() { py -c "import json,sys; d=json.load(open('$1')); sys.exit(0 if ($2) else 1)"; }

ktap_print_header
ktap_set_plan 9

check "load" insmod_bridge "$MODULE_KO"
ip link add mbd0 type dummy
ip link add link mbd0 macsec0 type macsec port 5
for i in $(seq 0 $((N - 1))); do echo "link add mbp$i type dummy"; done | ip -batch -
ports=()
for i in $(seq 0 $((N - 1))); do ports+=("$(ifindex "mbp$i")"); done
check "$N dummies bound to a MACsec netdev: $N ports" \
	$GENL bind "$(ifindex macsec0)" "${ports[@]}"

want=$(for i in $(seq 0 $((N - 1))); do printf '"mbp%d",' "$i"; done)
$GENL dump-split true >"$ROW_DIR/quiet" 2>&1
check "a quiet dump takes several datagrams" verdict "$ROW_DIR/quiet" "d['parts'] >= 2"
check "every port once, in the order it was tracked" \
	verdict "$ROW_DIR/quiet" "d['ifnames'] == [${want%,}]"
check "and no NLM_F_DUMP_INTR" verdict "$ROW_DIR/quiet" "not d['intr']"

# Between the first datagram and the rest: mbp0 (already sent) goes, mbpnew
# is tracked.
change="ip link del mbp0 && ip link add mbpnew type dummy &&
	$GENL bind $(cat /sys/class/net/macsec0/ifindex) \$(cat /sys/class/net/mbpnew/ifindex)"
$GENL dump-split "$change" >"$ROW_DIR/busy" 2>&1
check "a dump across a change: NLM_F_DUMP_INTR" verdict "$ROW_DIR/busy" "d['intr']"
check "the ports that lived throughout came exactly once" \
	verdict "$ROW_DIR/busy" "all(d['ifnames'].count('mbp%d' % i) == 1 for i in range(1, $N))"

ifx=$(ifindex mbp1)
# Renamed back and forth for as long as the dumps run.
( while :; do
	ip link set mbp1 name mbp1renamed && ip link set mbp1renamed name mbp1 || break
done ) &
renamer=$!
$GENL dump-names "$ifx" 60 >"$ROW_DIR/renames" 2>&1
kill "$renamer"
wait "$renamer" 2>/dev/null
ip link set mbp1renamed name mbp1 2>/dev/null
check "a port renamed throughout 60 dumps: under both names, each whole" \
	verdict "$ROW_DIR/renames" "d == ['mbp1', 'mbp1renamed']"
check "unload" rmmod macsec_bridge

ktap_finished
