#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The DPU split with an ops-locked host port: h0 is a dummy device, which
# Linux 7.x runs under its netdev instance lock (netdev_need_ops_lock()),
# as it does mlx5e, so its features may only be written with RTNL and that
# lock. The module owns h0's bit, and writes it from every context it has:
# a request (bind, unbind), an offload operation's observer (SA changes on
# the DPU's SecY), the deferred work item (for a notifier of another
# device, the SecY or its uplink going down, and for mdo_upd_secy, which a
# bond may call inside another device's locked section), the port's own
# feature change, and unload. Each row is checked three ways as in
# every lockstep table; its kernel log scan (splat_scan) finds no lockdep report.
set -u
. "$(dirname "$0")/lib.sh"

dpu_bed dummy
D=(ip -n "$DPU")

# bit_is PORT on|off: a bit written by the deferred work lands moments
# after the operation; the notification is immediate.
bit_is() { [ "$(hw_macsec "$1")" = "$2" ]; }

ktap_print_header
ktap_set_plan 20

check "load" insmod_bridge "$MODULE_KO"
check "a monitor subscribes" table_begin

row "bound to the DPU's macsec0, offloaded before the module loaded: unknown" \
	h0 off none unknown relation=bound owner=bridge -- \
	dpu_bind h0
# The SecY predates the module: an update settles its driver once the
# encoding SA's record is made afresh (added).
row "DPU: TX SA 0 added inactive, then a change of nothing: settled, no active TX SA" \
	h0 off none no-active-tx-sa -- \
	"${D[*]} macsec add macsec0 tx sa 0 pn 1 off key 01 $MB_KEY &&
	 ${D[*]} link set macsec0 type macsec encrypt on"
row "DPU: TX SA 0 activated: offload-mac, set by the observer" \
	h0 on offload-mac "" relation=bound -- \
	"${D[@]}" macsec set macsec0 tx sa 0 on
row "DPU: encrypt off: retracted (mdo_upd_secy: bit by the deferred work)" \
	h0 off none encrypt-off -- \
	"${D[*]} link set macsec0 type macsec encrypt off && wait_for 50 bit_is h0 off"
row "DPU: encrypt on: offload-mac (mdo_upd_secy: bit by the deferred work)" \
	h0 on offload-mac "" -- \
	"${D[*]} link set macsec0 type macsec encrypt on && wait_for 50 bit_is h0 on"
row "DPU: MACsec netdev down: retracted (bit by the deferred work)" \
	h0 off none secy-down -- \
	"${D[*]} link set macsec0 down && wait_for 50 bit_is h0 off"
row "DPU: MACsec netdev up: offload-mac (bit by the deferred work)" \
	h0 on offload-mac "" -- \
	"${D[*]} link set macsec0 up && wait_for 50 bit_is h0 on"
row "DPU: uplink down: retracted (bit by the deferred work)" \
	h0 off none lower-down -- \
	"${D[*]} link set $UPLINK down && wait_for 50 bit_is h0 off"
row "DPU: uplink up: offload-mac (bit by the deferred work)" \
	h0 on offload-mac "" -- \
	"${D[*]} link set $UPLINK up && wait_for 50 bit_is h0 on"
row "host: ethtool -K h0 recomputes features under its lock: the bit stays" \
	h0 on offload-mac "" -- \
	ethtool -K h0 tx-checksumming off
row "unbind: retracted by the request; with no RDMA device, no port" \
	h0 off absent "" -- \
	dpu_unbind h0
row "bound again: offload-mac at once (the SecY is known), set by the request" \
	h0 on offload-mac "" relation=bound owner=bridge -- \
	dpu_bind h0
row "DPU: TX SA deactivated: retracted by the observer" \
	h0 off none no-active-tx-sa -- \
	"${D[@]}" macsec set macsec0 tx sa 0 off
row "DPU: TX SA activated: offload-mac" \
	h0 on offload-mac "" -- \
	"${D[@]}" macsec set macsec0 tx sa 0 on
table_end
check "unload" rmmod macsec_bridge
check "unload cleared h0's bit" bit_is h0 off

ktap_finished
