#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The lockstep table, `self` relation: RXE sits on an offloaded MACsec
# netdev (macsec0 on a netdevsim port). Every row changes one thing and
# checks the port three ways: `ethtool -k` (macsec-hw-offload), a ynl dump
# and the notifications on the `monitor` group, with the generation growing
# by one per change (lockstep_check.py).
#
# netdevsim's offload is bookkeeping (it encrypts nothing): what this proves
# is the state tracking, not the crypto.
set -u
. "$(dirname "$0")/lib.sh"

lockstep_bed
A=$NSIM_A

ktap_print_header
ktap_set_plan 37

check "load" insmod_bridge "$MODULE_KO"
check "a monitor subscribes" table_begin

check "the netdevsim port's own bit is on (driver-owned)" [ "$(hw_macsec "$A")" = on ]
ip link add link "$A" macsec0 type macsec port 4 encrypt on offload mac
ip link set macsec0 up
no_port() {
	! ynl --dump dev-get | grep -q "\"ifname\": \"$1\""
}
check "an offloaded MACsec netdev without RDMA is no port" no_port macsec0

row "RXE on macsec0: a port, relation self, no active TX SA" \
	macsec0 off none no-active-tx-sa relation=self owner=bridge -- \
	rdma link add mb_rxe0 type rxe netdev macsec0
row "TX SA added inactive: nothing changes" \
	macsec0 off none no-active-tx-sa -- \
	ip macsec add macsec0 tx sa 0 pn 1 off key 01 $MB_KEY
row "TX SA activated: offload-mac, bit set" \
	macsec0 on offload-mac "" -- \
	ip macsec set macsec0 tx sa 0 on
row "encrypt off: retracted" \
	macsec0 off none encrypt-off -- \
	ip link set macsec0 type macsec encrypt off
row "encrypt on: offload-mac" \
	macsec0 on offload-mac "" -- \
	ip link set macsec0 type macsec encrypt on
row "protect off: retracted" \
	macsec0 off none protect-off -- \
	ip link set macsec0 type macsec protect off
row "protect on: offload-mac" \
	macsec0 on offload-mac "" -- \
	ip link set macsec0 type macsec protect on
# Ingress is reported beside the claim, not in it: an update (retracted
# while it runs, as any) that weakens validation leaves egress protected.
row "validate check: still offload-mac, the object says check" \
	macsec0 on offload-mac "" seq=none/unsettled,offload-mac/none validate=check -- \
	ip link set macsec0 type macsec validate check
row "validate disabled: still offload-mac, the object says disabled" \
	macsec0 on offload-mac "" seq=none/unsettled,offload-mac/none validate=disabled -- \
	ip link set macsec0 type macsec validate disabled
row "validate strict again" \
	macsec0 on offload-mac "" seq=none/unsettled,offload-mac/none validate=strict -- \
	ip link set macsec0 type macsec validate strict
row "MACsec netdev down: retracted" \
	macsec0 off none secy-down -- \
	ip link set macsec0 down
row "MACsec netdev up: offload-mac" \
	macsec0 on offload-mac "" -- \
	ip link set macsec0 up
row "lower link down: retracted" \
	macsec0 off none lower-down -- \
	ip link set "$A" down
row "lower link up: offload-mac" \
	macsec0 on offload-mac "" -- \
	ip link set "$A" up
row "ethtool -K strips the bit through fix_features: put back at once" \
	macsec0 on offload-mac "" -- \
	ethtool -K macsec0 gro off
row "ethtool -K macsec-hw-offload off is refused (fixed)" \
	macsec0 on offload-mac "" -- \
	! ethtool -K macsec0 macsec-hw-offload off
row "TX SA deactivated and deleted: retracted" \
	macsec0 off none no-active-tx-sa -- \
	"ip macsec set macsec0 tx sa 0 off && ip macsec del macsec0 tx sa 0"
row "MACsec netdev down" \
	macsec0 off none secy-down -- \
	ip link set macsec0 down
row "offload off while down: still secy-down" \
	macsec0 off none secy-down -- \
	ip macsec offload macsec0 off
row "up in software: offload-off (a software SecY's SAs are not observable)" \
	macsec0 off none offload-off -- \
	ip link set macsec0 up
row "offload mac again (down, then up): no active TX SA" \
	macsec0 off none no-active-tx-sa -- \
	"ip link set macsec0 down && ip macsec offload macsec0 mac && ip link set macsec0 up"
row "active TX SA added: offload-mac" \
	macsec0 on offload-mac "" -- \
	ip macsec add macsec0 tx sa 0 pn 1 on key 02 $MB_KEY
row "encoding SA 2, where no SA is: retracted" \
	macsec0 off none no-active-tx-sa -- \
	ip link set macsec0 type macsec encodingsa 2
row "active TX SA 2 added: offload-mac" \
	macsec0 on offload-mac "" -- \
	ip macsec add macsec0 tx sa 2 pn 1 on key 03 $MB_KEY
row "RXE deleted: the port is gone, the bit cleared" \
	macsec0 off absent "" -- \
	rdma link del mb_rxe0
# Extended packet numbers: the cipher suite can only be chosen when the
# SecY is made.
row "an XPN-256 SecY with encoding SA 3 and RXE: a port, no active TX SA" \
	macsec1 off none no-active-tx-sa relation=self owner=bridge -- \
	"ip link add link $A macsec1 type macsec port 5 cipher gcm-aes-xpn-256 encodingsa 3 \
		encrypt on offload mac && ip link set macsec1 up &&
	 rdma link add mb_rxe1 type rxe netdev macsec1"
row "active XPN TX SA 3 added: offload-mac" \
	macsec1 on offload-mac "" -- \
	ip macsec add macsec1 tx sa 3 xpn 1 on ssci 1 salt $MB_SALT key 04 $MB_KEY$MB_KEY
row "its RXE deleted: the port is gone, the bit cleared" \
	macsec1 off absent "" -- \
	rdma link del mb_rxe1
table_end
check "SecYs deleted" bash -c "ip link del macsec0 && ip link del macsec1"
check "netdevsim device deleted: no netdev stays held" \
	bash -c "echo $NSIM_A_ID > /sys/bus/netdevsim/del_device"
NSIM_IDS=("${NSIM_IDS[@]:1}")
check "unload" rmmod macsec_bridge

ktap_finished
