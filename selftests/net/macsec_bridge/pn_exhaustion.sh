#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# PN exhaustion. A driver whose hardware runs out of packet numbers calls
# macsec_pn_wrapped() (aquantia, cn10k): the TX SA's `active` flag is
# cleared from the datapath, with no offload operation and no event. The
# SecY then sends nothing protected, and the port must stop claiming that
# it does: the module reads every observed SecY again once a second while
# a port advertises offload or lists a protected GID, on its own schedule
# (a reader re-reads nothing: it gets what the module last published). The model
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
# Then the host mlx5 makes: RXE on the model NIC itself, an `upper` port
# that claims only part and lists the GID of the SecY's address. Its GID
# stands on the same TX SA, so a wrap must withdraw it within the same
# bound, though no port advertises offload then (before, nothing re-read
# the SecY and the GID stayed listed). The kernel's `ip macsec show`
# confirms each wrap.
set -u
. "$(dirname "$0")/lib.sh"

RETRACT_BOUND_MS=4000
nic_bed

ktap_print_header
ktap_set_plan 16

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
# wrap_gids NAME: as wrap, until mtn0 lists no GID.
wrap_gids() {
	local t0=${EPOCHREALTIME/./} t1
	ip link set mtn0 alias pn-wrap && send_frame mtn0 && wait_for 300 gids_are mtn0 0
	local rc=$?
	t1=${EPOCHREALTIME/./}
	echo $(((t1 - t0) / 1000)) >"$ROW_DIR/delay.$1"
	return $rc
}
# sa_off AN: the kernel's own view, `ip macsec show`, has TX SA AN off.
sa_off() {
	ip macsec show macsec0 | grep -Eq "^ +$1: PN [0-9]+, state off"
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
row "SA 2 the encoding SA, RXE moved to the model NIC: mtn0 upper, partial, no GID" \
	mtn0 on none partial relation=upper owner=driver seq=none/partial -- \
	"ip link set mtn0 alias '' &&
	 ip macsec add macsec0 tx sa 2 pn 1 on key 03 $MB_KEY &&
	 ip link set macsec0 type macsec encodingsa 2 &&
	 rdma link del mb_rxe0 &&
	 sysctl -qw net.ipv6.conf.macsec0.addr_gen_mode=1 && ip -6 addr flush dev macsec0 &&
	 rdma link add mb_rxe1 type rxe netdev mtn0 && wait_for 40 gids_are mtn0 0"
row "an IPv4 address on macsec0: mtn0 lists its GID, once the RDMA core has it" \
	mtn0 on none partial seq=none/partial -- \
	"ip addr add 192.0.2.1/24 dev macsec0 && wait_for 40 gids_are mtn0 1"
row "SA 2's PN wraps: the GID withdrawn within the re-read interval, no port claiming" \
	mtn0 on none no-active-tx-sa seq=none/no-active-tx-sa -- \
	"wrap_gids 2"
table_end
check "SA 0's retraction within $RETRACT_BOUND_MS ms of the wrap" within 0
check "SA 1's retraction within $RETRACT_BOUND_MS ms of the wrap" within 1
check "SA 2's GID withdrawn within $RETRACT_BOUND_MS ms of the wrap" within 2
check "the kernel shows TX SAs 0, 1 and 2 off (ip macsec show)" \
	eval 'sa_off 0 && sa_off 1 && sa_off 2'
check "unload" eval 'rdma link del mb_rxe1 && rmmod macsec_bridge'

ktap_finished
