#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of `make demo`.  Each step prints what it does and what the
# kernel answered.
set -eu
ko=$1
kdir=$2
spec=$(cd "$(dirname "$0")/.." && pwd)/Documentation/netlink/specs/macsec_bridge.yaml

step() { printf '\n\033[1m%s\033[0m\n' "$*"; }
show() {
	if [ "$1" = sh ] && [ "$2" = -c ]; then
		printf '  $ %s\n' "$3"
	else
		printf '  $ %s\n' "$*"
	fi
	"$@" 2>&1 | sed 's/^/    /'
}

# The port as the macsec_bridge family reports it, through the kernel's YNL
# CLI, and as ethtool sees its feature bit.
view() {
	printf '  $ ethtool -k macsec0 | grep macsec-hw-offload\n'
	ethtool -k macsec0 | grep macsec-hw-offload | sed 's/^/    /'
	printf '  $ cli.py --spec macsec_bridge.yaml --dump dev-get\n'
	/usr/bin/python3 "$kdir/tools/net/ynl/cli.py" --no-schema --spec "$spec" \
		--dump dev-get --output-json | /usr/bin/python3 -c '
import json, sys
for p in json.load(sys.stdin):
    print("    %s (%s): protection %s, reason %s, relation %s, generation %d" % (
        p["ifname"], ",".join(p.get("rdma-dev", [])), p["protection"],
        p["reason"], p.get("relation", "-"), p["generation"]))'
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

step "3. A SecY offloaded to it, and RXE (soft-RoCE) on the MACsec netdev"
ip link set "$port" up
show ip link add link "$port" macsec0 type macsec port 4 encrypt on offload mac
ip link set macsec0 up
show rdma link add rxe0 type rxe netdev macsec0
echo "  No TX SA yet: the RDMA port is not protected, and says why."
view

step "4. An active encoding TX SA: the port is hardware-protected"
show ip macsec add macsec0 tx sa 0 pn 1 on key 01 12345678901234567890123456789012
view

step "5. Encryption switched off: retracted before the driver sees the change"
show ip link set macsec0 type macsec encrypt off
view
show ip link set macsec0 type macsec encrypt on
view

step "6. Unload: the bit it set is cleared, macsec_ops restored"
rdma link del rxe0
rmmod macsec_bridge
show sh -c "ethtool -k macsec0 | grep macsec-hw-offload"
show sh -c "ip macsec show macsec0 | grep -o 'offload: mac'"
cleanup
trap - EXIT
echo
echo "Next: the DPU split, where the SecY lives in another namespace (issue 5)."
