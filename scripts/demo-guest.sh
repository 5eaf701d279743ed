#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of `make demo`.  Each step prints what it does and what the
# kernel answered.
set -eu
ko=$1
kdir=$2
# DRANet-Sec's binary, run by name as an operator would.
PATH=$(dirname "$3"):$PATH
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

# The kernel tree's YNL CLI: tools/net/ynl/pyynl/ in 7.x, tools/net/ynl/ in 6.12.
cli=$kdir/tools/net/ynl/pyynl/cli.py
[ -r "$cli" ] || cli=$kdir/tools/net/ynl/cli.py
ynl() {
	/usr/bin/python3 "$cli" --no-schema --spec "$spec" "$@"
}

# The ports as the macsec_bridge family reports them, through the kernel's
# YNL CLI, and as ethtool sees the feature bit of port DEV.
view() {
	local dev=${1:-macsec0}
	printf '  $ ethtool -k %s | grep macsec-hw-offload\n' "$dev"
	ethtool -k "$dev" | grep macsec-hw-offload | sed 's/^/    /'
	printf '  $ cli.py --spec macsec_bridge.yaml --dump dev-get\n'
	ynl --dump dev-get --output-json | /usr/bin/python3 -c '
import json, sys
for p in json.load(sys.stdin):
    secy = ""
    if "secy-ifindex" in p:
        secy = ", secy %d%s" % (p["secy-ifindex"],
            " in netns %d" % p["secy-netnsid"] if "secy-netnsid" in p else "")
    print("    %s (%s): protection %s, reason %s, relation %s%s, generation %d" % (
        p["ifname"], ",".join(p.get("rdma-dev", [])), p["protection"],
        p["reason"], p.get("relation", "-"), secy, p["generation"]))'
}

cleanup() {
	rdma link del rxe0 2>/dev/null || true
	rdma link del rxe1 2>/dev/null || true
	ip link del macsec0 2>/dev/null || true
	ip link del h0 2>/dev/null || true
	ip netns del dpu 2>/dev/null || true
	echo 1 > /sys/bus/netdevsim/del_device 2>/dev/null || true
	echo 2 > /sys/bus/netdevsim/del_device 2>/dev/null || true
	rmmod macsec_bridge 2>/dev/null || true
}
trap cleanup EXIT

step "1. A Rust kernel module on a Rust-enabled $(uname -r) kernel"
# The RDMA core and MACsec are modules, as distributions build them.
show modprobe -a ib_core macsec
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

step "6. DRANet-Sec: the port as a Kubernetes DRA device"
show dranet-sec status
printf '  $ dranet-sec slice --node n1   # the device macsec0, its MACsec attributes\n'
dranet-sec slice --node n1 --output json | /usr/bin/python3 -c '
import json, sys
for d in json.load(sys.stdin)["spec"]["devices"]:
    if d["name"] == "macsec0":
        for k, v in sorted(d["attributes"].items()):
            if "/macsec" in k:
                print("    %s: %s" % (k, json.dumps(list(v.values())[0])))'

step "7. The DPU split: the SecY lives on the DPU (namespace dpu), the host has h0"
rdma link del rxe0
ip netns add dpu
ip netns exec dpu sh -c 'echo "2 1" > /sys/bus/netdevsim/new_device'
sleep 0.5
uplink=$(ip netns exec dpu ls /sys/bus/netdevsim/devices/netdevsim2/net/)
show ip link add h0 type veth peer name d0 netns dpu
ip link set h0 up
ip -n dpu link set d0 up
ip -n dpu link set "$uplink" up
show rdma link add rxe1 type rxe netdev h0
echo "  The host port is unprotected: nothing protects its egress yet."
view h0

step "8. The DPU configures and offloads its SecY; the host binds h0 to it"
show ip -n dpu link add link "$uplink" macsec1 type macsec port 4 encrypt on offload mac
ip -n dpu link set macsec1 up
secy=$(ip netns exec dpu cat /sys/class/net/macsec1/ifindex)
printf "  \$ cli.py --do bind --json '{\"ifindex\": %s, \"secy-ifindex\": %s, \"secy-netns-fd\": 9}' 9</run/netns/dpu\n" \
	"$(cat /sys/class/net/h0/ifindex)" "$secy"
ynl --do bind --json "{\"ifindex\": $(cat /sys/class/net/h0/ifindex), \"secy-ifindex\": $secy, \"secy-netns-fd\": 9}" \
	9</run/netns/dpu >/dev/null
echo "  Bound, but the DPU's SecY has no TX SA yet:"
view h0
show ip -n dpu macsec add macsec1 tx sa 0 pn 1 on key 01 12345678901234567890123456789012
echo "  The host port is protected by the DPU's offloaded SecY:"
view h0

step "9. The DPU tears its SecY down: the host port is retracted"
show ip -n dpu link del macsec1
view h0

step "10. Unload: the bits it set are cleared, macsec_ops restored"
rmmod macsec_bridge
show sh -c "ethtool -k macsec0 | grep macsec-hw-offload"
show sh -c "ip macsec show macsec0 | grep -o 'offload: mac'"
cleanup
trap - EXIT
