#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The lockstep table, `upper` relation: RXE sits on a netdevsim port that is
# the real device of an offloaded MACsec netdev (the mlx5 RoCE-over-MACsec
# model: only traffic on macsec0's addresses is protected). netdevsim sets
# NETIF_F_HW_MACSEC itself, so the port's bit is driver-owned: reported, never
# touched. Checked three ways per row, as in lockstep_self.sh.
set -u
. "$(dirname "$0")/lib.sh"

lockstep_bed
A=$NSIM_A

ktap_print_header
ktap_set_plan 16

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
row "active TX SA: offload-mac" \
	"$A" on offload-mac "" relation=upper -- \
	ip macsec add macsec0 tx sa 0 pn 1 on key 01 $MB_KEY
row "ethtool -K on the port: nothing changes" \
	"$A" on offload-mac "" -- \
	ethtool -K "$A" gro off
row "lower link down: retracted, the driver's bit left alone" \
	"$A" on none lower-down -- \
	ip link set "$A" down
row "lower link up: offload-mac" \
	"$A" on offload-mac "" -- \
	ip link set "$A" up
row "SecY deleted: no SecY" \
	"$A" on none no-secy -- \
	ip link del macsec0
row "RXE deleted: the port is gone" \
	"$A" on absent "" -- \
	rdma link del mb_rxe0
row "all back: RXE, offloaded SecY, active TX SA" \
	"$A" on offload-mac "" relation=upper -- \
	"rdma link add mb_rxe0 type rxe netdev $A &&
	 ip link add link $A macsec0 type macsec port 4 encrypt on offload mac &&
	 ip link set macsec0 up &&
	 ip macsec add macsec0 tx sa 0 pn 1 on key 01 $MB_KEY"
row "netdevsim device deleted under it all: retracted, gone" \
	"$A" - absent "" -- \
	"echo $NSIM_A_ID > /sys/bus/netdevsim/del_device"
NSIM_IDS=("${NSIM_IDS[@]:1}")
table_end
check "unload" rmmod macsec_bridge

ktap_finished
