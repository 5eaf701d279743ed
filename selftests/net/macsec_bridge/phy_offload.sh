#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# PHY offload, and switches between MAC and PHY offload. The model NIC
# mtp0 offers MACsec offload in its MAC and in its PHY (a bare phy_device
# with macsec_ops, as mscc's VSC8584 offers it): `offload phy` runs here.
# The port is h0, a veth with RXE on it, bound to the SecY.
#
# - Where the series is applied (the offload notifier is in the kernel),
#   the module follows PHY offload as it follows MAC offload: off to PHY
#   at creation, PHY to MAC, MAC to PHY (refused by the PHY, refused by
#   the MAC, then done), PHY to none; offload-phy is claimed once the PHY
#   holds an active encoding SA, retracted before a teardown, and after a
#   failed operation the SecY is unsettled until an update the offloader
#   accepts. A switch hands the SecY to the new offloader, then takes it
#   off the old one ("net: macsec: take the SecY off the old offloader on
#   an offload switch"); a switch either refuses is undone.
# - On a kernel without the series (stock, Debian: the module interposes
#   each device's own macsec_ops, never a PHY's), no operation of the PHY
#   reaches the module, so it never learns a SecY offloaded there
#   (unknown); and a SecY offloaded to mtp0's MAC is never claimed either
#   (offload-unreachable): a switch to the PHY would go unseen. Such a
#   kernel's macsec.c leaves the SecY on the PHY when it switches to the
#   MAC: the row shows the operations it makes.
#
# Each row states every notification the port sends, in order, and every
# operation the model NIC was asked to make, in order, from its own
# records in the trace buffer; ip's view of the SecY's offload mode is
# checked where it changes.
set -u
. "$(dirname "$0")/lib.sh"

nic_bed
tracefs_require
phy_cleanup() {
	ip link set mtp0 alias '' 2>/dev/null
	nic_cleanup
}
on_exit phy_cleanup
ip link set mtp0 up || ktap_exit_fail_msg "cannot bring the model NIC mtp0 up"

# fresh: forget the model NIC's records so far.
fresh() { echo >"$T/trace"; }
# offload_is DEV MODE: ip shows MACsec netdev DEV offloaded as MODE.
offload_is() {
	local f=$ROW_DIR/link.json
	ip -d -j link show "$1" >"$f" &&
		[ "$(json_field "$f" 'd[0]["linkinfo"]["info_data"]["offload"]')" = "$2" ]
}
# down_bare SECY: SECY down, its TX SA 0 made inactive (macsec.c refuses
# to delete an active one) and deleted: what a switch of the offload mode
# requires.
down_bare() {
	ip link set "$1" down && ip macsec set "$1" tx sa 0 off && ip macsec del "$1" tx sa 0
}
# up_sa SECY: SECY up with an active TX SA 0, the encoding SA.
up_sa() { ip link set "$1" up && ip macsec add "$1" tx sa 0 pn 1 on key 01 "$MB_KEY"; }

ktap_print_header
if [ "$(offload_path)" = notifier ]; then
	ktap_set_plan 25
else
	ktap_set_plan 11
fi

check "load" insmod_bridge "$MODULE_KO"
check "a monitor subscribes" table_begin
row "RXE on the veth h0: no SecY" \
	h0 off none no-secy owner=bridge -- \
	"ip link add h0 type veth peer name h0p && ip link set h0 up &&
	 rdma link add mb_rxe0 type rxe netdev h0"

if [ "$(offload_path)" = notifier ]; then
row "created offloaded to mtp0's PHY, up, active TX SA, h0 bound: offload-phy" \
	h0 on offload-phy "" relation=bound -- \
	"fresh && ip link add link mtp0 macsec0 type macsec port 4 encrypt on offload phy &&
	 up_sa macsec0 && offload_is macsec0 phy &&
	 ops_are 'phy mdo_add_secy 0' 'phy mdo_dev_open 0' 'phy mdo_add_txsa 0' &&
	 bind_here h0 macsec0"
row "PHY to MAC refused while the SecY is up: nothing asked, nothing announced" \
	h0 on offload-phy "" seq= -- \
	"fresh && ! ip link set macsec0 type macsec offload mac && offload_is macsec0 phy &&
	 ops_are"
row "down, the TX SA deleted: retracted" \
	h0 off none secy-down seq=none/secy-down -- \
	"fresh && down_bare macsec0 &&
	 ops_are 'phy mdo_dev_stop 0' 'phy mdo_upd_txsa 0' 'phy mdo_del_txsa 0'"
row "PHY to MAC: onto the MAC, then off the PHY, which changes nothing the port shows" \
	h0 off none secy-down seq= -- \
	"fresh && ip link set macsec0 type macsec offload mac && offload_is macsec0 mac &&
	 ops_are 'mdo_add_secy 0' 'phy mdo_del_secy 0'"
row "up, then an active TX SA: offload-mac" \
	h0 on offload-mac "" seq=none/no-active-tx-sa,offload-mac/none -- \
	"fresh && up_sa macsec0 && ops_are 'mdo_dev_open 0' 'mdo_add_txsa 0'"
row "down, the TX SA deleted: retracted" \
	h0 off none secy-down seq=none/secy-down -- \
	"down_bare macsec0"
row "MAC to PHY, refused by the PHY: the MAC never asked, nothing announced" \
	h0 off none secy-down seq= -- \
	"fresh && ip link set mtp0 alias fail:phy:mdo_add_secy &&
	 ! ip link set macsec0 type macsec offload phy && offload_is macsec0 mac &&
	 ops_are 'phy mdo_add_secy -5'"
row "up, then an active TX SA: offload-mac, the MAC kept the whole SecY" \
	h0 on offload-mac "" seq=none/no-active-tx-sa,offload-mac/none -- \
	"ip link set mtp0 alias '' && fresh && up_sa macsec0 &&
	 ops_are 'mdo_dev_open 0' 'mdo_add_txsa 0'"
row "down, the TX SA deleted: retracted" \
	h0 off none secy-down seq=none/secy-down -- \
	"down_bare macsec0"
# The SecY, offloaded nowhere once the PHY gave it up again, carries none
# of an offloaded SecY's fields.
row "MAC to PHY, the MAC refuses to give the SecY up: undone, back to the MAC" \
	h0 off none secy-down seq=none/secy-down -- \
	"fresh && ip link set mtp0 alias fail:mdo_del_secy &&
	 ! ip link set macsec0 type macsec offload phy && offload_is macsec0 mac &&
	 ops_are 'phy mdo_add_secy 0' 'mdo_del_secy -5' 'phy mdo_del_secy 0'"
row "up, then an active TX SA: unsettled, what the MAC holds is not known" \
	h0 off none unsettled seq=none/no-active-tx-sa,none/unsettled -- \
	"ip link set mtp0 alias '' && fresh && up_sa macsec0 &&
	 ops_are 'mdo_dev_open 0' 'mdo_add_txsa 0'"
row "an update the MAC accepts settles it: offload-mac" \
	h0 on offload-mac "" seq=offload-mac/none -- \
	"fresh && ip link set macsec0 type macsec encrypt on && ops_are 'mdo_upd_secy 0'"
row "down, the TX SA deleted: retracted" \
	h0 off none secy-down seq=none/secy-down -- \
	"down_bare macsec0"
row "MAC to PHY: onto the PHY, then off the MAC" \
	h0 off none secy-down seq= -- \
	"fresh && ip link set macsec0 type macsec offload phy && offload_is macsec0 phy &&
	 ops_are 'phy mdo_add_secy 0' 'mdo_del_secy 0'"
row "up, then an active TX SA: offload-phy" \
	h0 on offload-phy "" seq=none/no-active-tx-sa,offload-phy/none -- \
	"fresh && up_sa macsec0 && ops_are 'phy mdo_dev_open 0' 'phy mdo_add_txsa 0'"
row "the PHY fails an update: retracted while it runs, unsettled after" \
	h0 off none unsettled seq=none/unsettled -- \
	"fresh && ip link set mtp0 alias fail:phy:mdo_upd_secy &&
	 ! ip link set macsec0 type macsec encrypt on && ops_are 'phy mdo_upd_secy -5'"
row "an update the PHY accepts settles it: offload-phy" \
	h0 on offload-phy "" seq=offload-phy/none -- \
	"ip link set mtp0 alias '' && fresh && ip link set macsec0 type macsec encrypt on &&
	 ops_are 'phy mdo_upd_secy 0'"
row "down, the TX SA deleted, offload off, up again: software, offload-off" \
	h0 off none offload-off seq=none/secy-down,none/secy-down,none/offload-off -- \
	"down_bare macsec0 && fresh && ip link set macsec0 type macsec offload off &&
	 offload_is macsec0 off && ops_are 'phy mdo_del_secy 0' && ip link set macsec0 up"
else
row "created offloaded to mtp0's PHY, up, active TX SA, h0 bound: never observed" \
	h0 off none unknown relation=bound -- \
	"fresh && ip link add link mtp0 macsec0 type macsec port 4 encrypt on offload phy &&
	 up_sa macsec0 && offload_is macsec0 phy &&
	 ops_are 'phy mdo_add_secy 0' 'phy mdo_dev_open 0' 'phy mdo_add_txsa 0' &&
	 bind_here h0 macsec0"
row "down, the TX SA deleted: nothing seen" \
	h0 off none unknown seq= -- \
	"fresh && down_bare macsec0 &&
	 ops_are 'phy mdo_dev_stop 0' 'phy mdo_upd_txsa 0' 'phy mdo_del_txsa 0'"
# macsec.c without the series' fix: the PHY keeps the SecY.
row "PHY to MAC: onto the MAC, and the PHY is never told" \
	h0 off none secy-down seq=none/secy-down -- \
	"fresh && ip link set macsec0 type macsec offload mac && offload_is macsec0 mac &&
	 ops_are 'mdo_add_secy 0'"
row "up, active TX SA: not claimed, mtp0's PHY could take the SecY unseen" \
	h0 off none offload-unreachable seq=none/offload-unreachable -- \
	"fresh && up_sa macsec0 && ops_are 'mdo_dev_open 0' 'mdo_add_txsa 0'"
fi
row "unbound, macsec0 and RXE deleted: the port is gone" \
	h0 off absent "" -- \
	"dpu_unbind h0 && ip link del macsec0 && rdma link del mb_rxe0"
table_end
check "unload" rmmod macsec_bridge

ktap_finished
