#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# RXE binds to an offloaded MACsec netdev (the `self` relation): its traffic
# must cross the SecY, so it sits on macsec0, not on the lower port. The
# module, loaded before the SecY (so it sees the SecY's every operation),
# finds the port through the RDMA core and follows its SecY: no claim
# without an active TX SA, offload-mac (and ethtool's macsec-hw-offload)
# once one is added; the port leaves its dump with the RDMA device. Each
# expectation is what this test did, read against rdma's and ethtool's own
# view.
#
# It runs in init_net and deletes everything it made.
set -u
. "$(dirname "$0")/lib.sh"

cleanup() {
	rdma link del rxe_mb0 2>/dev/null
	ip link del mb_macsec0 2>/dev/null
	nsim_del_all
	rmmod macsec_bridge 2>/dev/null
	rm -rf "$ROW_DIR"
}
bed_require
on_exit cleanup
nsim_require
nsim_new 1 || bed_broken "a netdevsim port"
id=$NSIM_ID
port=$(nsim_port "$id" 0)

ktap_print_header
ktap_set_plan 9

check "load" insmod_bridge "$MODULE_KO"
ip link set "$port" up
ip link add link "$port" mb_macsec0 type macsec port 4 encrypt on offload mac
ip link set mb_macsec0 up
check "rdma link add rxe on the MACsec netdev" \
	rdma link add rxe_mb0 type rxe netdev mb_macsec0
check "rdma link show names the MACsec netdev" \
	bash -c "rdma link show | grep -q 'rxe_mb0/1.*netdev mb_macsec0'"
check "the RDMA device is registered" [ -d /sys/class/infiniband/rxe_mb0 ]

# port_is WANT...: mb_macsec0's dump object has FIELD=VALUE for each WANT.
port_is() {
	local dump=$ROW_DIR/dump w f got ok=0
	ynl --dump dev-get >"$dump" || return 1
	for w in "$@"; do
		f=${w%%=*}
		got=$(port_field "$dump" mb_macsec0 "$f")
		[ "$got" = "${w#*=}" ] || { echo "# mb_macsec0 $f: $got, not ${w#*=}"; ok=1; }
	done
	return $ok
}
check "no TX SA: rxe_mb0's port, self, none (no-active-tx-sa), bit off" \
	eval 'port_is rdma-dev=rxe_mb0 relation=self protection=none reason=no-active-tx-sa &&
		[ "$(hw_macsec mb_macsec0)" = off ]'
check "an active TX SA: offload-mac, bit on" \
	eval 'ip macsec add mb_macsec0 tx sa 0 pn 1 on key 01 "$MB_KEY" &&
		port_is rdma-dev=rxe_mb0 relation=self protection=offload-mac reason=none &&
		[ "$(hw_macsec mb_macsec0)" = on ]'
check "rdma link del" rdma link del rxe_mb0
check "the RDMA device is gone, and the port from the dump" \
	eval '[ ! -d /sys/class/infiniband/rxe_mb0 ] && port_is protection=absent'
check "unload" rmmod macsec_bridge

ktap_finished
