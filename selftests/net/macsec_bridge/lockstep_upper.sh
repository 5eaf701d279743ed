#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The lockstep table, `upper` relation: RXE sits on a netdevsim port that is
# the real device of an offloaded MACsec netdev (the mlx5 RoCE-over-MACsec
# model: only traffic on macsec0's addresses is protected). The port's own
# GIDs, its default GID among them, bypass the SecY, so the port never
# claims protection: where the SecY protects, it reports none with reason
# partial, and otherwise the SecY's own reason. netdevsim sets
# NETIF_F_HW_MACSEC itself, so the port's bit is driver-owned: reported, never
# touched. Checked three ways per row, as in lockstep_self.sh. With two
# SecYs on the port in different namespaces, the one in the older namespace
# is named, whatever their ifindexes.
set -u
. "$(dirname "$0")/lib.sh"

lockstep_bed
A=$NSIM_A
setup_ns X || ns_broken X

# names_macsec0: the port's object names macsec0, here (no secy-netnsid).
names_macsec0() {
	ynl --dump dev-get >"$ROW_DIR/names" &&
		[ "$(port_field "$ROW_DIR/names" "$A" secy-ifindex)" = "$(ifindex macsec0)" ] &&
		[ -z "$(port_field "$ROW_DIR/names" "$A" secy-netnsid)" ]
}

ktap_print_header
ktap_set_plan 19

check "load" insmod_bridge "$MODULE_KO"
check "a monitor subscribes" table_begin
row "RXE on the netdevsim port: no SecY; the bit is the driver's" \
	"$A" on none no-secy owner=driver -- \
	rdma link add mb_rxe0 type rxe netdev "$A"
row "offloaded MACsec netdev on top: relation upper, SecY down" \
	"$A" on none secy-down relation=upper owner=driver -- \
	ip link add link "$A" macsec0 type macsec port 4 encrypt on offload mac
row "MACsec netdev up: no active TX SA" \
	"$A" on none no-active-tx-sa -- \
	ip link set macsec0 up
row "active TX SA: the SecY protects, the port only in part: partial" \
	"$A" on none partial relation=upper seq=none/partial -- \
	ip macsec add macsec0 tx sa 0 pn 1 on key 01 $MB_KEY
row "ethtool -K on the port: nothing changes" \
	"$A" on none partial seq= -- \
	ethtool -K "$A" gro off
row "lower link down: retracted, the driver's bit left alone" \
	"$A" on none lower-down -- \
	ip link set "$A" down
row "lower link up: partial" \
	"$A" on none partial -- \
	ip link set "$A" up
row "SecY deleted: no SecY" \
	"$A" on none no-secy -- \
	ip link del macsec0
row "RXE deleted: the port is gone" \
	"$A" on absent "" -- \
	rdma link del mb_rxe0
row "all back: RXE, offloaded SecY, active TX SA" \
	"$A" on none partial relation=upper -- \
	"rdma link add mb_rxe0 type rxe netdev $A &&
	 ip link add link $A macsec0 type macsec port 4 encrypt on offload mac &&
	 ip link set macsec0 up &&
	 ip macsec add macsec0 tx sa 0 pn 1 on key 01 $MB_KEY"
check "the port names macsec0" names_macsec0
# In X, macsec1's ifindex is taken: the move gives it the lowest free one.
row "a second SecY, moved to a namespace where its ifindex is lower: nothing changes" \
	"$A" on none partial relation=upper seq= -- \
	"ip link add link $A macsec1 type macsec port 5 encrypt on offload mac &&
	 ip -n $X link add mb_pin index \$(ifindex macsec1) type dummy &&
	 ip link set macsec1 netns $X &&
	 [ \$(ifindex macsec1 $X) -lt \$(ifindex macsec0) ]"
check "the port still names macsec0, not the lower ifindex in X" names_macsec0
row "netdevsim device deleted under it all: retracted, gone" \
	"$A" - absent "" -- \
	"echo $NSIM_A_ID > /sys/bus/netdevsim/del_device"
NSIM_IDS=("${NSIM_IDS[@]:1}")
table_end
check "unload" rmmod macsec_bridge

ktap_finished
