#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The lockstep table, `bound` relation (the DPU split): the SecY lives in
# namespace DPU (macsec0, offloaded to a netdevsim uplink), the RDMA port
# in the host namespace (veth h0 with RXE on it) is bound to it. Every row
# is driven from the DPU side and checked on the host side three ways:
# `ethtool -k h0`, a ynl dump and the host's `monitor` notifications
# (lockstep_check.py). h0 is a veth: the module owns its feature bit.
set -u
. "$(dirname "$0")/lib.sh"

dpu_bed
D=(ip -n "$DPU")

ktap_print_header
ktap_set_plan 28

check "load" insmod_bridge "$MODULE_KO"
check "a monitor subscribes" table_begin

row "RXE on h0: a port with no SecY" \
	h0 off none no-secy relation=none owner=bridge -- \
	rdma link add mb_rxe0 type rxe netdev h0
row "bound (netns fd) to the DPU's macsec0, offloaded before the module loaded: unknown" \
	h0 off none unknown relation=bound owner=bridge -- \
	dpu_bind h0
row "DPU: TX SA added inactive: the operation shows the SecY, no active TX SA" \
	h0 off none no-active-tx-sa -- \
	"${D[@]}" macsec add macsec0 tx sa 0 pn 1 off key 01 $MB_KEY
# The SecY predates the module: what its driver was handed before is not
# known, and no SA operation settles it; an update does (encrypt on, below).
row "DPU: TX SA activated: the driver not settled since the module loaded" \
	h0 off none unsettled relation=bound -- \
	"${D[@]}" macsec set macsec0 tx sa 0 on
row "DPU: encrypt off: retracted" \
	h0 off none encrypt-off -- \
	"${D[@]}" link set macsec0 type macsec encrypt off
row "DPU: encrypt on: offload-mac" \
	h0 on offload-mac "" -- \
	"${D[@]}" link set macsec0 type macsec encrypt on
row "DPU: protect off: retracted" \
	h0 off none protect-off -- \
	"${D[@]}" link set macsec0 type macsec protect off
row "DPU: protect on: offload-mac" \
	h0 on offload-mac "" -- \
	"${D[@]}" link set macsec0 type macsec protect on
row "DPU: MACsec netdev down: retracted" \
	h0 off none secy-down -- \
	"${D[@]}" link set macsec0 down
row "DPU: MACsec netdev up: offload-mac" \
	h0 on offload-mac "" -- \
	"${D[@]}" link set macsec0 up
row "DPU: uplink down: retracted" \
	h0 off none lower-down -- \
	"${D[@]}" link set "$UPLINK" down
row "DPU: uplink up: offload-mac" \
	h0 on offload-mac "" -- \
	"${D[@]}" link set "$UPLINK" up
row "host: ethtool -K h0 recomputes features: the bit stays" \
	h0 on offload-mac "" -- \
	ethtool -K h0 gro off
row "host: ethtool -K h0 macsec-hw-offload off is refused (fixed)" \
	h0 on offload-mac "" -- \
	! ethtool -K h0 macsec-hw-offload off
row "DPU: TX SA deactivated and deleted: retracted" \
	h0 off none no-active-tx-sa -- \
	"${D[*]} macsec set macsec0 tx sa 0 off && ${D[*]} macsec del macsec0 tx sa 0"
row "DPU: down, offload off: secy-down" \
	h0 off none secy-down -- \
	"${D[*]} link set macsec0 down && ${D[*]} macsec offload macsec0 off"
row "DPU: up in software: offload-off" \
	h0 off none offload-off -- \
	"${D[@]}" link set macsec0 up
row "DPU: offload mac again, active TX SA: offload-mac" \
	h0 on offload-mac "" -- \
	"${D[*]} link set macsec0 down && ${D[*]} macsec offload macsec0 mac &&
	 ${D[*]} link set macsec0 up && ${D[*]} macsec add macsec0 tx sa 0 pn 1 on key 02 $MB_KEY"
row "unbind: retracted, no SecY" \
	h0 off none no-secy relation=none -- \
	dpu_unbind h0
row "bound again: offload-mac at once (the SecY is known)" \
	h0 on offload-mac "" relation=bound -- \
	dpu_bind h0
row "DPU: SecY deleted: retracted, binding stale" \
	h0 off none binding-stale relation=bound -- \
	"${D[@]}" link del macsec0
row "unbind the stale binding: no SecY" \
	h0 off none no-secy relation=none -- \
	dpu_unbind h0
row "RXE deleted: the port is gone" \
	h0 off absent "" -- \
	rdma link del mb_rxe0
table_end
check "unload" rmmod macsec_bridge

ktap_finished
