#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# IPv6 RoCE of RXE leaves through the GID's netdev, or the port does not
# claim it. RXE routes every packet itself (rxe_find_route6()); with a
# source address given, the kernel binds an IPv6 route lookup to the
# requested device only for link-local, loopback and multicast
# destinations, so a more specific route through another device (one
# router advertisement with an on-link prefix, received on the SecY's
# real device from the segment it does not protect, installs it) sends
# RoCE on a global GID around the SecY, in plaintext. "RDMA/rxe: send
# IPv6 RoCE only through the GID's netdev" makes RXE refuse such a route,
# as IPv4 never returns one.
#
# RXE on macsec0 (a `self` port), offloaded to the model NIC mtn0, gets a
# global IPv6 GID; a route for a peer's address through mtn0 stands for
# the forged advertisement; rping to that peer from the global address
# sends the connection request. Captures on mtn0 and macsec0 count the
# RoCE frames leaving each (UDP port 4791 over IPv6). First, without the
# route, the requests cross the SecY: rping gets as far as sending.
# - Where the series is applied (the offload notifier is in the kernel),
#   no RoCE frame leaves at all, and the port claims the whole port,
#   offload-mac, listing nothing.
# - On a kernel without it (stock, Debian: the module interposes), the
#   capture finds the frames on mtn0 and none through macsec0: RXE
#   routed around the SecY. The port is partial from the moment the
#   global GID appears, and lists the GIDs that cannot leave around it
#   (the link-local default ones), never the global one.
# Each row states every notification the port sends, in order.
set -u
. "$(dirname "$0")/lib.sh"

nic_bed
require_cmd rdma rping
require_rxe
route_cleanup() {
	[ -n "${CAP_PIDS:-}" ] && kill $CAP_PIDS 2>/dev/null
	ip -6 route del 2001:db8:1::2/128 dev mtn0 2>/dev/null
	nic_cleanup
}
on_exit route_cleanup

SRC=2001:db8:1::1
PEER=2001:db8:1::2
# The peer's MAC address: not the model NIC's (RXE loops a frame for its
# own address back instead of sending it).
PEER_MAC=02:00:5e:00:53:02
# The GID of SRC as sysfs writes one.
SRC_GID=2001:0db8:0001:0000:0000:0000:0000:0001

if [ "$(offload_path)" = notifier ]; then
	STRICT=1
else
	STRICT=
fi

# gid_of RDMA NETDEV GID: sysfs shows GID, RoCE v2, on NETDEV.
gid_of() {
	local d=/sys/class/infiniband/$1/ports/1 n i g dev ty
	for n in "$d"/gids/*; do
		i=${n##*/}
		read -r g <"$n" 2>/dev/null || continue
		[ "$g" = "$3" ] || continue
		read -r dev <"$d/gid_attrs/ndevs/$i" 2>/dev/null || continue
		read -r ty <"$d/gid_attrs/types/$i" 2>/dev/null || continue
		[ "$dev" = "$2" ] && [ "$ty" = "RoCE v2" ] && return 0
	done
	return 1
}

# capture DEV SECONDS OUT: counts the RoCE v2 frames over IPv6 (UDP
# destination port 4791) leaving DEV for SECONDS, into OUT; OUT.ready
# once the socket is bound.
capture() {
	/usr/bin/python3 - "$@" <<'PY'
import socket, struct, sys, time
dev, secs, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
s.bind((dev, 0))
s.settimeout(0.2)
open(out + '.ready', 'w').close()
n, end = 0, time.monotonic() + secs
while time.monotonic() < end:
    try:
        data, addr = s.recvfrom(65535)
    except socket.timeout:
        continue
    if addr[2] != socket.PACKET_OUTGOING or len(data) < 14 + 40 + 8:
        continue
    if struct.unpack('!H', data[12:14])[0] != 0x86dd or data[14 + 6] != 17:
        continue
    if struct.unpack('!H', data[14 + 40 + 2:14 + 40 + 4])[0] == 4791:
        n += 1
open(out, 'w').write(f'{n}\n')
PY
}

# roce_to_peer THROUGH|AROUND: rping from SRC to PEER (nobody answers:
# the connection request and its retries are what leaves) while mtn0 and
# macsec0 are captured; then the counts against what this kernel must do.
# THROUGH: the route is macsec0's, and the requests cross the SecY (the
# model NIC offloads: they reach mtn0 as well). AROUND: the route is
# mtn0's; nothing crosses the SecY, and RXE sends nothing where the series
# is applied, the requests on mtn0 where it is not.
roce_to_peer() {
	local c=$ROW_DIR/cap m n
	rm -f "$c".*
	capture mtn0 12 "$c.mtn0" &
	CAP_PIDS=$!
	capture macsec0 12 "$c.macsec0" &
	CAP_PIDS="$CAP_PIDS $!"
	wait_for 300 test -e "$c.mtn0.ready" -a -e "$c.macsec0.ready" || return 1
	timeout 8 rping -c -a "$PEER" -I "$SRC" -C 1 -v
	wait $CAP_PIDS
	CAP_PIDS=
	read -r n <"$c.mtn0" && read -r m <"$c.macsec0" || return 1
	echo "$1: RoCE frames leaving mtn0: $n; through macsec0: $m" | tee -a "$COUNTS"
	case $1 in
	through) [ "$m" -gt 0 ] ;;
	around)
		[ "$m" -eq 0 ] || return 1
		if [ -n "$STRICT" ]; then [ "$n" -eq 0 ]; else [ "$n" -gt 0 ]; fi
		;;
	*) return 1 ;;
	esac
}
COUNTS=$(mktemp)

ktap_print_header
ktap_set_plan 11

check "load" insmod_bridge "$MODULE_KO"
check "a monitor subscribes" table_begin
row "RXE on macsec0, offloaded to the model NIC, no address: self, offload-mac" \
	macsec0 on offload-mac "" relation=self owner=bridge seq=offload-mac/none -- \
	"ip link add link mtn0 macsec0 type macsec port 4 encrypt on offload mac &&
	 sysctl -qw net.ipv6.conf.macsec0.addr_gen_mode=1 &&
	 ip link set macsec0 up &&
	 ip macsec add macsec0 tx sa 0 pn 1 on key 01 $MB_KEY &&
	 rdma link add mb_rxe0 type rxe netdev macsec0 && wait_for 40 gids_are macsec0 0"
if [ -n "$STRICT" ]; then
	row "a global IPv6 address on macsec0: RXE routes its GID only through it, offload-mac" \
		macsec0 on offload-mac "" seq= -- \
		"ip addr add $SRC/64 dev macsec0 nodad &&
		 wait_for 100 gid_of mb_rxe0 macsec0 $SRC_GID && gids_are macsec0 0"
	route_row=("macsec0" on offload-mac "" seq=)
else
	row "a global IPv6 address on macsec0: RXE may route its GID around, partial, unlisted" \
		macsec0 off none partial seq=none/partial -- \
		"ip addr add $SRC/64 dev macsec0 nodad &&
		 wait_for 100 gid_of mb_rxe0 macsec0 $SRC_GID &&
		 wait_for 100 listed_on macsec0 mb_rxe0 macsec0 $SRC_GID"
	route_row=("macsec0" off none partial seq=)
fi
row "RoCE to a peer on macsec0's prefix: it crosses the SecY, nothing announced" \
	"${route_row[@]}" -- \
	"ip -6 neigh replace $PEER lladdr $PEER_MAC dev macsec0 nud permanent &&
	 roce_to_peer through"
row "a route to the peer through mtn0, RoCE to it: $([ -n "$STRICT" ] &&
	echo "RXE refuses the route, nothing leaves" ||
	echo "plaintext on mtn0, none through the SecY")" \
	"${route_row[@]}" -- \
	"ip -6 neigh replace $PEER lladdr $PEER_MAC dev mtn0 nud permanent &&
	 ip -6 route add $PEER/128 dev mtn0 && roce_to_peer around"
row "the address removed: offload-mac, nothing listed" \
	macsec0 on offload-mac "" "seq=$([ -n "$STRICT" ] || echo offload-mac/none)" -- \
	"ip addr del $SRC/64 dev macsec0 && wait_for 100 gids_are macsec0 0"
row "RXE deleted: the port is gone" \
	macsec0 off absent "" -- \
	"rdma link del mb_rxe0"
table_end
sed 's/^/# /' "$COUNTS"
rm -f "$COUNTS"
check "unload" rmmod macsec_bridge

ktap_finished
