#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A driver that fails an operation. macsec.c undoes some changes when the
# driver refuses them (deactivating an SA, updating the SecY) and
# completes others regardless: a SecY stops whatever mdo_dev_stop returns,
# and is deleted whatever mdo_del_secy returns. Either way the driver may
# have changed what it holds before it failed: mlx5e's mdo_upd_secy deletes
# every TX rule, then fails re-creating the encoding SA's, even for an
# update of nothing; its mdo_upd_txsa writes its record of the SA before
# it can fail, and an update rebuilds the rule from that record. So after
# a failure the port stays retracted, reason unsettled (or an earlier
# reason), until an update hands the driver the whole SecY again and
# succeeds, the encoding SA's record in no doubt (made afresh); it
# must not advertise, even for an instant, the protection of a SecY whose
# driver state the failed call left unknown. (An active SA cannot be
# deleted: deactivating it is the SA teardown that reaches the driver.)
# The NIC is the model NIC, with mlx5e's TX side, told which operation to
# fail through its alias. The SecY is macsec0 on it; the port is a veth,
# h0, with RXE on it, bound to macsec0 (a port the SecY carries whole,
# whose feature bit the module owns; an `upper` port never claims
# protection at all). Each teardown row states every notification the
# port sends, in order.
set -u
. "$(dirname "$0")/lib.sh"

nic_bed
ktap_print_header
ktap_set_plan 19

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
row "mdo_dev_stop fails: the SecY stops anyway; retracted once, never restored" \
	h0 off none secy-down seq=none/secy-down -- \
	"ip link set mtn0 alias fail:mdo_dev_stop && ip link set macsec0 down"
# mdo_dev_open settles nothing: aquantia's programs nothing without
# carrier, and returns 0.
row "the NIC behaves again, SecY up: still unsettled" \
	h0 off none unsettled seq=none/unsettled -- \
	"ip link set mtn0 alias '' && ip link set macsec0 up"
row "deactivating the encoding SA fails after the NIC wrote it: unsettled, nothing announced" \
	h0 off none unsettled seq= -- \
	"ip link set mtn0 alias fail:mdo_upd_txsa && ! ip macsec set macsec0 tx sa 0 off"
# macsec.c put the SA back active; the NIC's record says inactive, and an
# update rebuilds the rule from it: none. SA 0's record is in doubt until
# the SA is made afresh.
row "an update of nothing: the NIC rebuilds no rule from that record; still unsettled" \
	h0 off none unsettled seq= -- \
	"ip link set mtn0 alias '' && ip link set macsec0 type macsec encrypt on"
row "a key change (SA 1 added, made the encoding SA): the NIC makes its rule afresh, offload-mac" \
	h0 on offload-mac "" seq=offload-mac/none -- \
	"ip macsec add macsec0 tx sa 1 pn 1 on key 02 $MB_KEY &&
	 ip link set macsec0 type macsec encodingsa 1"
row "an update of nothing fails after the NIC deleted its TX rules: retracted first, not restored" \
	h0 off none unsettled seq=none/unsettled -- \
	"ip link set mtn0 alias fail:mdo_upd_secy && ! ip link set macsec0 type macsec encrypt on"
row "the update succeeds: the NIC re-created the rule, offload-mac" \
	h0 on offload-mac "" seq=offload-mac/none validate=strict -- \
	"ip link set mtn0 alias '' && ip link set macsec0 type macsec encrypt on"
# validate reaches the NIC as an update, macsec.c's SecY already changed:
# the object reports the weaker of before and after from the retraction
# on, and after a refusal (undone with no event) no more than that.
row "validate check: egress still offload-mac, the object says check" \
	h0 on offload-mac "" seq=none/unsettled,offload-mac/none validate=check -- \
	"ip link set macsec0 type macsec validate check"
row "validate strict refused by the NIC: check stays in force, the object never said strict" \
	h0 off none unsettled seq=none/unsettled validate=check -- \
	"ip link set mtn0 alias fail:mdo_upd_secy && ! ip link set macsec0 type macsec validate strict"
row "validate strict: the update succeeds, offload-mac, strict" \
	h0 on offload-mac "" seq=offload-mac/none validate=strict -- \
	"ip link set mtn0 alias '' && ip link set macsec0 type macsec validate strict"
# Deleting an up SecY: mdo_del_secy (retracted before it, `encrypt` gone
# from the object with the retraction, so the SecY known not offloaded
# after it changes nothing more), then the netdev is closed (mdo_dev_stop,
# which shows the SecY still offloaded but down) and unregistered, which
# leaves the binding stale.
row "mdo_del_secy fails: the SecY is deleted anyway; never restored" \
	h0 off none binding-stale relation=bound \
	seq=none/offload-off,none/secy-down,none/binding-stale -- \
	"ip link set mtn0 alias fail:mdo_del_secy && ip link del macsec0"
row "unbound, RXE deleted: the port is gone" \
	h0 off absent "" -- \
	"ip link set mtn0 alias '' && dpu_unbind h0 && rdma link del mb_rxe0"
table_end
check "unload" rmmod macsec_bridge

ktap_finished
