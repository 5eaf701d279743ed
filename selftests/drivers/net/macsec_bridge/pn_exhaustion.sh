#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# PN exhaustion. A driver whose hardware runs out of packet numbers calls
# macsec_pn_wrapped() (aquantia, cn10k): the TX SA's `active` flag is
# cleared from the datapath, with no offload operation and no event. The
# SecY then sends nothing protected, and the port must stop claiming that
# it does: the module reads every observed SecY again once a second while
# a port advertises offload, on its own schedule (a reader re-reads
# nothing: it gets what the module last published). The model
# NIC wraps the encoding SA's PN on the next frame it sends while its alias
# is `pn-wrap`. RXE sits on macsec0 (relation self), so the feature bit is
# the module's and `ethtool -k` shows the retraction with no request of
# the family's. The delay from the frame that wraps to ethtool's view of
# the retraction is measured here, and fails past RETRACT_BOUND_MS: the
# re-read interval (1 s) and 3 s for RTNL, the workqueue and this poll on
# a guest under TCG (seen: 0.4 s alone, up to 1.6 s in make check, two
# guests on two cores). A re-read of 20 s fails it (a wrap lands at a
# random point of the interval: each of the two passes with odds of about
# 1 in 6).
set -u
. "$(dirname "$0")/lib.sh"

RETRACT_BOUND_MS=4000
nic_bed

ktap_print_header
ktap_set_plan 11

# send_frame DEV: one broadcast frame (the MACsec ethertype, no payload
# worth the name) sent on DEV, through its driver's ndo_start_xmit.
send_frame() {
	py -c '
import socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
s.send(b"\xff" * 6 + b"\x02\0\0\0\0\x09" + b"\x88\xb5" + bytes(46))' "$1"
}
bit_is() { [ "$(hw_macsec "$1")" = "$2" ]; }
# wrap NAME: the NIC wraps the encoding SA's PN on one frame sent now;
# until ethtool shows macsec0's bit off (30 s at most), and the
# milliseconds from just before the frame to then in $ROW_DIR/delay.NAME.
wrap() {
	local t0=${EPOCHREALTIME/./} t1
	ip link set mtn0 alias pn-wrap && send_frame mtn0 && wait_for 300 bit_is macsec0 off
	local rc=$?
	t1=${EPOCHREALTIME/./}
	echo $(((t1 - t0) / 1000)) >"$ROW_DIR/delay.$1"
	return $rc
}
# within NAME: the retraction after wrap NAME came within the bound.
within() {
	local ms
	read -r ms <"$ROW_DIR/delay.$1" || return 1
	echo "# SA $1: retracted $ms ms after the wrapping frame (bound $RETRACT_BOUND_MS ms)"
	[ "$ms" -le "$RETRACT_BOUND_MS" ]
}

check "load" insmod_bridge "$MODULE_KO"
check "a monitor subscribes" table_begin
row "offloaded SecY on the model NIC, up, active TX SA 0, RXE on it: offload-mac" \
	macsec0 on offload-mac "" relation=self owner=bridge -- \
	"ip link add link mtn0 macsec0 type macsec port 4 encrypt on offload mac &&
	 ip link set macsec0 up &&
	 ip macsec add macsec0 tx sa 0 pn 1 on key 01 $MB_KEY &&
	 rdma link add mb_rxe0 type rxe netdev macsec0"
row "SA 0's PN wraps: retracted within the re-read interval, with no request" \
	macsec0 off none no-active-tx-sa seq=none/no-active-tx-sa -- \
	"wrap 0"
row "SA 1 installed as the encoding SA: offload-mac" \
	macsec0 on offload-mac "" seq=offload-mac/none -- \
	"ip link set mtn0 alias '' &&
	 ip macsec add macsec0 tx sa 1 pn 1 on key 02 $MB_KEY &&
	 ip link set macsec0 type macsec encodingsa 1"
row "SA 1's PN wraps: retracted within the re-read interval, and the dump says so" \
	macsec0 off none no-active-tx-sa seq=none/no-active-tx-sa -- \
	"wrap 1"
table_end
check "SA 0's retraction within $RETRACT_BOUND_MS ms of the wrap" within 0
check "SA 1's retraction within $RETRACT_BOUND_MS ms of the wrap" within 1
check "unload" rmmod macsec_bridge

ktap_finished
