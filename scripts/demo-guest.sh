#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of `make demo`.  Each step prints what it does and what the
# kernel answered.
set -eu
ko=$1

step() { printf '\n\033[1m%s\033[0m\n' "$*"; }
show() {
	if [ "$1" = sh ] && [ "$2" = -c ]; then
		printf '  $ %s\n' "$3"
	else
		printf '  $ %s\n' "$*"
	fi
	"$@" 2>&1 | sed 's/^/    /'
}

cleanup() {
	rdma link del rxe0 2>/dev/null || true
	ip link del macsec0 2>/dev/null || true
	echo 1 > /sys/bus/netdevsim/del_device 2>/dev/null || true
	rmmod macsec_bridge 2>/dev/null || true
}
trap cleanup EXIT

step "1. A Rust kernel module on a Rust-enabled $(uname -r) kernel"
show insmod "$ko"
show sh -c "dmesg | grep macsec_bridge | tail -1"
show modinfo -F description "$ko"

step "2. A netdevsim port: a NIC model whose MACsec ops are offload bookkeeping"
echo "1 1" > /sys/bus/netdevsim/new_device
udevadm settle 2>/dev/null || sleep 1
port=$(ls /sys/bus/netdevsim/devices/netdevsim1/net/)
show sh -c "ethtool -k $port | grep macsec-hw-offload"

step "3. A SecY offloaded to it, with an active encoding TX SA"
ip link set "$port" up
show ip link add link "$port" macsec0 type macsec port 4 encrypt on offload mac
show ip macsec add macsec0 tx sa 0 pn 1 on key 01 12345678901234567890123456789012
ip link set macsec0 up
show sh -c "ip macsec show macsec0 | grep -E 'offload|TXSC|^ +0:'"

step "4. RXE (soft-RoCE) on the MACsec netdev: RDMA traffic crosses the SecY"
show rdma link add rxe0 type rxe netdev macsec0
show rdma link show rxe0/1

step "5. Unload: the module leaves nothing behind"
cleanup
trap - EXIT
show sh -c "lsmod | grep -c macsec_bridge || true"
echo
echo "Next: the module keeps macsec-hw-offload on rxe0's netdev and a genetlink"
echo "object in lockstep with this SecY (issues 3-5)."
