#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# RXE binds to an offloaded MACsec netdev (the `self` relation): its traffic
# must cross the SecY, so it sits on macsec0, not on the lower port.
#
# It runs in init_net and deletes everything it made.
set -u
. "$(dirname "$0")/lib.sh"

require_root
require_cmd ip rdma

cleanup() {
	rdma link del rxe_mb0 2>/dev/null
	ip link del mb_macsec0 2>/dev/null
	nsim_del_all
}
on_exit cleanup

require_rxe
nsim_require
nsim_new 1 || bed_broken "a netdevsim port"
id=$NSIM_ID
port=$(nsim_port "$id" 0)

ktap_print_header
ktap_set_plan 5

ip link set "$port" up
ip link add link "$port" mb_macsec0 type macsec port 4 offload mac
ip link set mb_macsec0 up
check "rdma link add rxe on the MACsec netdev" \
	rdma link add rxe_mb0 type rxe netdev mb_macsec0
check "rdma link show names the MACsec netdev" \
	bash -c "rdma link show | grep -q 'rxe_mb0/1.*netdev mb_macsec0'"
check "the RDMA device is registered" [ -d /sys/class/infiniband/rxe_mb0 ]
check "rdma link del" rdma link del rxe_mb0
check "the RDMA device is gone" [ ! -d /sys/class/infiniband/rxe_mb0 ]

ktap_finished
