#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# State that existed before the module loaded. The module never claims
# protection it has not observed: a port whose offloaded SecY was configured
# before loading says `reason unknown` and its bit stays off until an
# offload operation shows the SecY (`ip macsec show` is none: statistics
# requests are announced to no one; a no-op update, `ip link set macsec0
# type macsec encrypt on`, is), and `unsettled` until
# a key change (a TX SA made afresh, then made the encoding SA) settles
# its driver.
# Unloading clears every bit the module set and restores every macsec_ops:
# offload keeps working.
set -u
. "$(dirname "$0")/lib.sh"

lockstep_bed

# port_is PROTECTION REASON: the dump says so for macsec0.
port_is() {
	ynl --dump dev-get | py -c "import json, sys
d = [p for p in json.load(sys.stdin) if p['ifname'] == 'macsec0']
sys.exit(0 if d and d[0]['protection'] == '$1' and d[0]['reason'] == '$2' else 1)"
}

A=$NSIM_A
ip link add link "$A" macsec0 type macsec port 4 encrypt on offload mac
ip link set macsec0 up
ip macsec add macsec0 tx sa 0 pn 1 on key 01 $MB_KEY
rdma link add mb_rxe0 type rxe netdev macsec0

ktap_print_header
ktap_set_plan 14

check "load with an offloaded SecY and RXE already configured" insmod_bridge "$MODULE_KO"
check "unobserved: protection none, reason unknown" port_is none unknown
check "unobserved: the bit stays off" [ "$(hw_macsec macsec0)" = off ]
check "a monitor subscribes" table_begin
row "ip macsec show (statistics, announced to no one): still unknown" \
	macsec0 off none unknown -- \
	ip macsec show macsec0
row "a no-op SecY update re-observes it: unsettled (what its driver holds of SA 0 is not known)" \
	macsec0 off none unsettled relation=self owner=bridge -- \
	ip link set macsec0 type macsec encrypt on
row "a key change (SA 1 added, made the encoding SA): settled, offload-mac" \
	macsec0 on offload-mac "" -- \
	"ip macsec add macsec0 tx sa 1 pn 1 on key 02 $MB_KEY &&
	 ip link set macsec0 type macsec encodingsa 1"
row "TX SA deactivated: retracted" \
	macsec0 off none no-active-tx-sa -- \
	ip macsec set macsec0 tx sa 1 off
row "TX SA activated: offload-mac" \
	macsec0 on offload-mac "" -- \
	ip macsec set macsec0 tx sa 1 on
table_end
check "unload clears the bit it set" \
	bash -c "rmmod macsec_bridge &&
		 [ \"\$(ethtool -k macsec0 | awk '/^macsec-hw-offload:/ {print \$2}')\" = off ]"
check "offload keeps working without the module" \
	bash -c "ip macsec add macsec0 tx sa 2 pn 1 on key 03 $MB_KEY &&
		 ip macsec show macsec0 | grep -q 'offload: mac'"
load_unknown() { insmod_bridge "$MODULE_KO" && port_is none unknown; }
check "load again: unknown until observed" load_unknown

ktap_finished
