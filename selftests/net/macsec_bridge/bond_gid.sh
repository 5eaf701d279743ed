#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A `self` port claims its whole egress only while every RoCE GID of it
# leaves through the SecY. RXE sits on macsec0; macsec0 and a veth (a
# plaintext path) are enslaved to a bond with an address. The RDMA core
# gives macsec0's RXE the bond's GIDs (roce_gid_mgmt.c: the addresses of
# an upper device, unless the port is a bond's inactive slave), RXE sends
# RoCE on them through the bond, and the bond may send it through the
# veth in the clear: the port must say partial while such a GID is in its
# table, and offload-mac again once none is. A VLAN over macsec0 sends
# only through it: its GIDs change nothing.
#
# The GID tables change in the RDMA core's work, after the command that
# caused it: a row that changes them waits until sysfs shows the table it
# leads to, and the rows that change the port's state run with the table
# at rest, so that each row's notifications are one fixed sequence.
set -u
. "$(dirname "$0")/lib.sh"

lockstep_bed
A=$NSIM_A
MODES=(802.3ad balance-xor balance-rr)
TABLE=/sys/class/infiniband/mb_rxe0/ports/1

bond_cleanup() {
	ip link del mbbond0 2>/dev/null
	ip link del mbv0 2>/dev/null
	ip link del mbvlan0 2>/dev/null
	ip link del mbbr0 2>/dev/null
	lockstep_cleanup
}
on_exit bond_cleanup

# gids_on NDEV: how many entries of mb_rxe0's GID table have netdev NDEV
# (builtins only: the table has 1,024 slots).
gids_on() {
	local n=0 f x
	for f in "$TABLE"/gid_attrs/ndevs/*; do
		{ read -r x <"$f"; } 2>/dev/null && [ "$x" = "$1" ] && n=$((n + 1))
	done
	echo "$n"
}
# has_gid NDEV GID: the table holds GID with netdev NDEV.
has_gid() {
	local f x i
	for f in "$TABLE"/gid_attrs/ndevs/*; do
		{ read -r x <"$f"; } 2>/dev/null && [ "$x" = "$1" ] || continue
		i=${f##*/}
		read -r x <"$TABLE/gids/$i" && [ "$x" = "$2" ] && return 0
	done
	return 1
}
# The bond's IPv4 address as a GID.
BOND_GID=0000:0000:0000:0000:0000:ffff:c000:0201
VLAN_GID=0000:0000:0000:0000:0000:ffff:c633:6401
# bond_gids_in: the bond's GIDs (its default GID and its address's) are
# in the table, and none of macsec0's own.
bond_gids_in() {
	has_gid mbbond0 "$BOND_GID" && [ "$(gids_on macsec0)" -eq 0 ]
}
bond_gids_out() {
	[ "$(gids_on mbbond0)" -eq 0 ]
}
bond_gid_out() {
	! has_gid mbbond0 "$BOND_GID"
}
vlan_gids_out() {
	[ "$(gids_on mbvlan0)" -eq 0 ]
}
# says PORT REASON: a dump now gives PORT that reason.
says() {
	ynl --dump dev-get >"$ROW_DIR/now" &&
		[ "$(port_field "$ROW_DIR/now" "$1" reason)" = "$2" ]
}
BRIDGE_GID=0000:0000:0000:0000:0000:ffff:cb00:7101
bridge_listing() {
	local l
	l=$(listed macsec0)
	[ -n "$l" ] && ! grep -q "$BRIDGE_GID" <<<"$l"
}
# listed PORT: the port's protected GIDs in the last row's dump, by index.
listed() {
	port_field "$ROW_DIR/dump.$ROW_N" "$1" protected-gid
}

ktap_print_header
ktap_set_plan $((12 + 6 * (${#MODES[@]} + 1) + 2))

check "load" insmod_bridge "$MODULE_KO"
check "a monitor subscribes" table_begin
ip link add link "$A" macsec0 type macsec port 4 encrypt on offload mac
ip link set macsec0 up
ip macsec add macsec0 tx sa 0 pn 1 on key 01 $MB_KEY
ip link add mbv0 type veth peer name mbv1
ip link set mbv1 up
# A bond gives its slaves its MTU: it takes macsec0's, which has room for
# the SecTAG.
read -r MTU </sys/class/net/macsec0/mtu

row "RXE on macsec0: offload-mac" \
	macsec0 on offload-mac "" relation=self owner=bridge seq=offload-mac/none -- \
	rdma link add mb_rxe0 type rxe netdev macsec0
row "a VLAN over macsec0 with an address: its GID leaves through macsec0, nothing changes" \
	macsec0 on offload-mac "" seq= -- \
	"ip link add link macsec0 mbvlan0 type vlan id 100 && ip link set mbvlan0 up &&
	 ip addr add 198.51.100.1/24 dev mbvlan0 && wait_for 100 has_gid mbvlan0 $VLAN_GID"
check "the port lists no GID: it claims all of them" [ -z "$(listed macsec0)" ]
row "the VLAN deleted: nothing changes" \
	macsec0 on offload-mac "" seq= -- \
	"ip link del mbvlan0 && wait_for 100 vlan_gids_out"
# A bridge takes ports that are up: the claim stands while the RDMA core
# adds the bridge's GID, and falls when the module's work reads it.
row "macsec0 and the veth in a bridge with an address, while it claims: partial once GID is read" \
	macsec0 off none partial seq=none/partial -- \
	"ip link add mbbr0 type bridge && ip link set macsec0 master mbbr0 &&
	 ip link set mbv0 master mbbr0 && ip link set mbv0 up && ip link set mbbr0 up &&
	 ip addr add 203.0.113.1/24 dev mbbr0 && wait_for 100 has_gid mbbr0 $BRIDGE_GID &&
	 wait_for 100 says macsec0 partial"
check "the bridge: macsec0's own GID listed, the bridge's not" bridge_listing
row "the bridge deleted: offload-mac once its GID is gone" \
	macsec0 on offload-mac "" seq=offload-mac/none -- \
	"ip link del mbbr0 && wait_for 100 says macsec0 none"

# Active-backup: the bond sends through its active slave alone, and the
# RDMA core gives the bond's address GIDs to the active slave's port only.
# While macsec0 is active its port still says partial: a failover moves the
# bond's RoCE to the veth before the GIDs follow. After one, the bond's
# default GID stays in macsec0's table (roce_gid_mgmt.c replaces it only
# when the slave next comes up), and RoCE on it would leave through the
# veth: still partial.
for mode in "${MODES[@]}" active-backup; do
	row "$mode: TX SA off, macsec0 down (to be enslaved)" \
		macsec0 off none secy-down seq=none/no-active-tx-sa,none/secy-down -- \
		"ip macsec set macsec0 tx sa 0 off && ip link set macsec0 down"
	# macsec0 first: the bond takes its MAC address, and it is the
	# active slave.
	row "$mode: macsec0 and the veth in a bond with an address; bond's GIDs replace macsec0's" \
		macsec0 off none no-active-tx-sa seq=none/no-active-tx-sa -- \
		"ip link add mbbond0 mtu $MTU type bond mode $mode &&
		 ip link set mbv0 down && ip link set macsec0 master mbbond0 &&
		 ip link set mbv0 master mbbond0 && ip link set mbbond0 up &&
		 ip addr add 192.0.2.1/24 dev mbbond0 && wait_for 100 bond_gids_in"
	row "$mode: TX SA on: partial, the bond may send RoCE through the veth" \
		macsec0 off none partial seq=none/partial -- \
		"ip macsec set macsec0 tx sa 0 on"
	check "$mode: no GID listed: none leaves through macsec0 alone" [ -z "$(listed macsec0)" ]
	if [ "$mode" = active-backup ]; then
		row "$mode: veth made active: bond's address GID leaves macsec0's; partial" \
			macsec0 off none partial seq= -- \
			"ip link set mbbond0 type bond active_slave mbv0 &&
			 wait_for 100 bond_gid_out"
		check "$mode: the bond's default GID stays in macsec0's table" \
			[ "$(gids_on mbbond0)" -eq 1 ]
	fi
	# Without an active SA while the bond goes: its GIDs leave in the RDMA
	# core's work, while the bond releases macsec0.
	row "$mode: TX SA off, the bond deleted: macsec0 released, closed" \
		macsec0 off none secy-down seq=none/no-active-tx-sa,none/secy-down -- \
		"ip macsec set macsec0 tx sa 0 off && ip link del mbbond0 &&
		 wait_for 100 bond_gids_out"
	row "$mode: macsec0 up, TX SA on: its GIDs all its own again, offload-mac" \
		macsec0 on offload-mac "" seq=none/no-active-tx-sa,offload-mac/none -- \
		"ip link set macsec0 up && ip macsec set macsec0 tx sa 0 on"
done
table_end
check "unload" rmmod macsec_bridge

ktap_finished
