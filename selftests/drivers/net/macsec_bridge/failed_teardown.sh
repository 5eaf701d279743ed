#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A driver that fails a teardown. macsec.c undoes some changes when the
# driver refuses them (deactivating an SA: the port is retracted, then
# restored) and completes others regardless: a SecY stops whatever
# mdo_dev_stop returns, and is deleted whatever mdo_del_secy returns. After those the
# port must stay retracted; it must not advertise, even for an instant, the
# protection of a SecY that is going or gone, on hardware whose state the
# failed call left unknown. (An active SA cannot be deleted: deactivating
# it is the SA teardown that reaches the driver, and macsec.c undoes it on
# failure.) The NIC is the model NIC, told which operation to fail through
# its alias; RXE sits on it (relation upper). Each teardown row states
# every notification the port sends, in order.
set -u
. "$(dirname "$0")/lib.sh"

nic_bed

ktap_print_header
ktap_set_plan 12

check "load" insmod_bridge "$MODULE_KO"
check "a monitor subscribes" table_begin
row "RXE on the model NIC: no SecY; the bit is the driver's" \
	mtn0 on none no-secy owner=driver -- \
	rdma link add mb_rxe0 type rxe netdev mtn0
row "offloaded SecY up, active TX SA: offload-mac" \
	mtn0 on offload-mac "" relation=upper -- \
	"ip link add link mtn0 macsec0 type macsec port 4 encrypt on offload mac &&
	 ip link set macsec0 up &&
	 ip macsec add macsec0 tx sa 0 pn 1 on key 01 $MB_KEY"
row "mdo_dev_stop fails: the SecY stops anyway; retracted once, never restored" \
	mtn0 on none secy-down seq=none/secy-down -- \
	"ip link set mtn0 alias fail:mdo_dev_stop && ip link set macsec0 down"
row "the NIC behaves again, SecY up: offload-mac" \
	mtn0 on offload-mac "" seq=offload-mac/none -- \
	"ip link set mtn0 alias '' && ip link set macsec0 up"
row "deactivating the encoding SA fails: macsec.c puts it back; retracted, then restored" \
	mtn0 on offload-mac "" seq=none/no-active-tx-sa,offload-mac/none -- \
	"ip link set mtn0 alias fail:mdo_upd_txsa && ! ip macsec set macsec0 tx sa 0 off"
# Deleting an up SecY: mdo_del_secy (retracted before it, `encrypt` gone
# from the object with the retraction, so the SecY known not offloaded
# after it changes nothing more), then the netdev is closed (mdo_dev_stop,
# which shows the SecY still offloaded but down) and unregistered.
row "mdo_del_secy fails: the SecY is deleted anyway; never restored" \
	mtn0 on none no-secy relation=none \
	seq=none/offload-off,none/secy-down,none/no-secy -- \
	"ip link set mtn0 alias fail:mdo_del_secy && ip link del macsec0"
row "RXE deleted: the port is gone" \
	mtn0 on absent "" -- \
	"ip link set mtn0 alias '' && rdma link del mb_rxe0"
table_end
check "unload" rmmod macsec_bridge

ktap_finished
