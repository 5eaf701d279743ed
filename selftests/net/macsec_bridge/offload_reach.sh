#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The offloading device loses NETIF_F_HW_MACSEC under a running SecY:
# `ethtool -K mtn0 macsec-hw-offload off` (mlx5e lists the bit in
# hw_features, and so does the model NIC), mlx5e's fix_features as it
# enters switchdev mode, the eswitch mode of a DPU (the model NIC with the
# alias `switchdev`, at its next features update), or, for a SecY on a
# VLAN, ethtool on the VLAN or on the NIC under it (the VLAN's features
# are the NIC's vlan_features and features in common). From then on
# macsec.c's macsec_check_offload() fails: every offload operation of the
# SecY returns EOPNOTSUPP before the driver, and the driver may have
# dropped its rules, though macsec_netdev_is_offloaded() still says MAC.
# The port is retracted at the feature change, reason
# offload-unreachable; the bit's return leaves it unsettled, and only an
# update that hands the driver the whole SecY brings the claim back. Each
# row states every notification the port sends, in order; ethtool's view
# of the offloading device is checked in each action. The port is h0, a
# veth with RXE on it, bound to the SecY (its bit is the module's). What
# macsec.c's receive path does with a frame for a SecY whose device lost
# the bit is rx_offload_lost.sh's.
set -u
. "$(dirname "$0")/lib.sh"

nic_bed
require_cmd ethtool
reach_cleanup() {
	ip link del macsec1 2>/dev/null
	ip link del mtn0.5 2>/dev/null
	nic_cleanup
}
on_exit reach_cleanup

bit_is() { [ "$(hw_macsec "$1")" = "$2" ]; }
# eopnotsupp CMD...: CMD fails with EOPNOTSUPP, as macsec.c fails a
# request on a SecY whose driver it cannot reach.
eopnotsupp() {
	local out
	out=$("$@" 2>&1) && return 1
	grep -q "Operation not supported" <<<"$out"
}
# rotate SECY AN: a key change, as MKA makes one: TX SA AN added, then
# made the encoding SA (mdo_upd_secy, with that SA's record made afresh).
rotate() {
	ip macsec add "$1" tx sa "$2" pn 1 on key "0$(($2 + 1))" "$MB_KEY" &&
		ip link set "$1" type macsec encodingsa "$2"
}

ktap_print_header
ktap_set_plan 24

check "load" insmod_bridge "$MODULE_KO"
check "a monitor subscribes" table_begin
row "RXE on the veth h0: no SecY" \
	h0 off none no-secy owner=bridge -- \
	"ip link add h0 type veth peer name h0p && ip link set h0 up &&
	 rdma link add mb_rxe0 type rxe netdev h0"
row "bound to macsec0, offloaded to the model NIC, up, active TX SA: offload-mac" \
	h0 on offload-mac "" relation=bound -- \
	"ip link add link mtn0 macsec0 type macsec port 4 encrypt on offload mac &&
	 ip link set macsec0 up &&
	 ip macsec add macsec0 tx sa 0 pn 1 on key 01 $MB_KEY &&
	 bind_here h0 macsec0"
row "ethtool clears mtn0's macsec-hw-offload: retracted at once" \
	h0 off none offload-unreachable relation=bound seq=none/offload-unreachable -- \
	"ethtool -K mtn0 macsec-hw-offload off && bit_is mtn0 off"
row "an update fails before the NIC (EOPNOTSUPP): nothing announced" \
	h0 off none offload-unreachable seq= -- \
	"eopnotsupp ip link set macsec0 type macsec encrypt on"
row "the bit is back: unsettled, the NIC may have dropped its rules" \
	h0 off none unsettled seq=none/unsettled -- \
	"ethtool -K mtn0 macsec-hw-offload on && bit_is mtn0 on"
row "an update hands the NIC the whole SecY: offload-mac" \
	h0 on offload-mac "" seq=offload-mac/none -- \
	"ip link set macsec0 type macsec encrypt on"
# ethtool's own exit status is not the point: the NIC's fix_features
# drops a bit the request left wanted.
row "switchdev mode: fix_features drops the bit at the next update of features" \
	h0 off none offload-unreachable seq=none/offload-unreachable -- \
	"ip link set mtn0 alias switchdev && { ethtool -K mtn0 gro off; bit_is mtn0 off; }"
row "a key change fails before the NIC: nothing announced" \
	h0 off none offload-unreachable seq= -- \
	"eopnotsupp ip macsec add macsec0 tx sa 1 pn 1 on key 02 $MB_KEY"
row "legacy mode again, the bit back: unsettled" \
	h0 off none unsettled seq=none/unsettled -- \
	"ip link set mtn0 alias '' && ethtool -K mtn0 gro on && bit_is mtn0 on"
row "a key change (SA 1 added, made the encoding SA): offload-mac" \
	h0 on offload-mac "" seq=offload-mac/none -- \
	"rotate macsec0 1"
row "unbound, macsec0 deleted: no SecY" \
	h0 off none no-secy seq=none/no-secy -- \
	"dpu_unbind h0 && ip link del macsec0"
row "a SecY offloaded on the VLAN mtn0.5, h0 bound to it: offload-mac" \
	h0 on offload-mac "" relation=bound seq=offload-mac/none -- \
	"ip link add link mtn0 name mtn0.5 type vlan id 5 && ip link set mtn0.5 up &&
	 bit_is mtn0.5 on &&
	 ip link add link mtn0.5 macsec1 type macsec port 5 encrypt on offload mac &&
	 ip link set macsec1 up &&
	 ip macsec add macsec1 tx sa 0 pn 1 on key 01 $MB_KEY &&
	 wait_for 50 grep -qx 1 /sys/class/net/mtn0.5/carrier &&
	 bind_here h0 macsec1"
row "ethtool clears the VLAN's macsec-hw-offload: retracted" \
	h0 off none offload-unreachable seq=none/offload-unreachable -- \
	"ethtool -K mtn0.5 macsec-hw-offload off && bit_is mtn0.5 off && bit_is mtn0 on"
row "the VLAN's bit back: unsettled" \
	h0 off none unsettled seq=none/unsettled -- \
	"ethtool -K mtn0.5 macsec-hw-offload on && bit_is mtn0.5 on"
row "an update through the VLAN: offload-mac" \
	h0 on offload-mac "" seq=offload-mac/none -- \
	"ip link set macsec1 type macsec encrypt on"
# The VLAN takes the change from the NIC in a work item of its own.
row "ethtool clears mtn0's bit: the VLAN loses it too, retracted" \
	h0 off none offload-unreachable seq=none/offload-unreachable -- \
	"ethtool -K mtn0 macsec-hw-offload off && wait_for 50 bit_is mtn0.5 off"
row "mtn0's bit back, the VLAN's with it: unsettled" \
	h0 off none unsettled seq=none/unsettled -- \
	"ethtool -K mtn0 macsec-hw-offload on && wait_for 50 bit_is mtn0.5 on"
row "a key change through the VLAN: offload-mac" \
	h0 on offload-mac "" seq=offload-mac/none -- \
	"rotate macsec1 1"
row "unbound, RXE deleted: the port is gone" \
	h0 off absent "" -- \
	"dpu_unbind h0 && rdma link del mb_rxe0"
table_end
check "unload" rmmod macsec_bridge

ktap_finished
