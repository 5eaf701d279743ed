#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Whose NETIF_F_HW_MACSEC is it? On a device with macsec_ops the MACsec
# core reads the bit to allow offload, so it is the driver's, even where the
# driver left it off. h0 is VLAN 100 over a host netdevsim port: like every
# VLAN it has macsec_ops, and netdevsim puts no MACsec in its vlan_features,
# so the VLAN offers no offload. Bound to the DPU's protected SecY, h0
# advertises offload-mac, but its bit stays off and a SecY on it still
# cannot be offloaded (were it allowed, netdevsim would run with the VLAN
# in its context). (A port without macsec_ops, whose bit the module owns,
# is dpu_ops_locked.sh's.)
set -u
. "$(dirname "$0")/lib.sh"

dpu_bed vlan
D=(ip -n "$DPU")

bit_is() { [ "$(hw_macsec "$1")" = "$2" ]; }
# no_offload DEV: a MACsec netdev on DEV with offload mac is refused.
no_offload() {
	if ip link add link "$1" mb_probe type macsec port 9 offload mac 2>/dev/null; then
		ip link del mb_probe
		return 1
	fi
}

ktap_print_header
ktap_set_plan 12

check "h0 (a VLAN over netdevsim) offers no MACsec offload" bit_is h0 off
check "a SecY on h0 cannot be offloaded" no_offload h0
check "load" insmod_bridge "$MODULE_KO"
check "a monitor subscribes" table_begin
row "h0 bound to the DPU's macsec0: unknown; a VLAN's bit is its driver's" \
	h0 off none unknown relation=bound owner=driver -- \
	dpu_bind h0
# The SecY predates the module: unsettled until an update hands its driver
# the whole SecY.
row "DPU: active TX SA, then a change of nothing: offload-mac, and h0's bit is left off" \
	h0 off offload-mac "" relation=bound owner=driver -- \
	"${D[*]} macsec add macsec0 tx sa 0 pn 1 on key 01 $MB_KEY &&
	 ${D[*]} link set macsec0 type macsec encrypt on"
table_end
check "a SecY on h0 still cannot be offloaded" no_offload h0
check "unbind h0" dpu_unbind h0
check "unload" rmmod macsec_bridge
check "h0's bit is still off" bit_is h0 off

ktap_finished
