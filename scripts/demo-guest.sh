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

# The kernel tree's YNL CLI.
cli=$kdir/tools/net/ynl/pyynl/cli.py
ynl() {
	/usr/bin/python3 "$cli" --no-schema --spec "$spec" "$@"
}

# The ports as the macsec-bridge family reports them, through the kernel's
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
	ip netns del pa 2>/dev/null || true
	ip netns del pb 2>/dev/null || true
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
k8s=$(mktemp -d)
# excerpt FILE: macsec0's MACsec attributes and taints in the slice FILE.
excerpt() {
	/usr/bin/python3 - "$1" <<'PY'
import json, sys
for d in json.load(open(sys.argv[1]))["spec"]["devices"]:
    if d["name"] == "macsec0":
        for k, v in sorted(d["attributes"].items()):
            if "/macsec" in k:
                print("    %s: %s" % (k, json.dumps(list(v.values())[0])))
        for t in d.get("taints", []):
            print("    taint %s=%s:%s (since %s)" % (t["key"], t["value"], t["effect"], t["timeAdded"]))
        if not d.get("taints"):
            print("    (no taints)")
PY
}
printf '  $ dranet-sec slice --node n1   # the device macsec0\n'
dranet-sec slice --node n1 --output json >"$k8s/n1.json"
excerpt "$k8s/n1.json"
echo "  A second node, n2, whose port has encryption off:"
ip link set macsec0 type macsec encrypt off
dranet-sec slice --node n2 --output json >"$k8s/n2.json"
ip link set macsec0 type macsec encrypt on
excerpt "$k8s/n2.json"
cat >"$k8s/claim.yaml" <<'YAML'
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: rdma.dra.net}
spec:
  selectors:
  - cel: {expression: 'device.driver == "dra.net" && device.attributes["dra.net"].rdma'}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: training, namespace: ml}
spec:
  devices:
    requests:
    - name: nic
      exactly:
        deviceClassName: rdma.dra.net
        selectors:
        - cel: {expression: 'device.attributes["macsec.dranet-sec.io"].?macsecEgress.orValue(false)'}
YAML
echo "  A claim for an RDMA NIC with protected egress is placed as the scheduler would:"
show dranet-sec place --claim "$k8s/claim.yaml" --slices "$k8s/n1.json" "$k8s/n2.json"

step "7. The SecY loses its TX SA under the running claim: tainted, evicted"
cat >"$k8s/held.yaml" <<'YAML'
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: training, namespace: ml}
spec:
  devices:
    requests:
    - {name: nic, exactly: {deviceClassName: rdma.dra.net}}
status:
  allocation:
    devices:
      results:
      - {request: nic, driver: dra.net, pool: n1, device: macsec0}
YAML
show ip macsec set macsec0 tx sa 0 off
printf '  $ dranet-sec slice --node n1 --taint-effect no-execute\n'
dranet-sec slice --node n1 --taint-effect no-execute --output json >"$k8s/n1.json"
excerpt "$k8s/n1.json"
echo "  For DRANet's own devices, a DeviceTaintRule appears in the rule directory:"
show dranet-sec taint-rules --node n1 --taint-effect no-execute --dir "$k8s/rules"
show sh -c "grep -A4 'taint:' $k8s/rules/dranet-sec.n1.macsec0.yaml"
echo "  The running claim's pod is evicted, as the device taint eviction controller decides:"
show dranet-sec place --evict --allocated "$k8s/held.yaml" --slices "$k8s/n1.json"
show ip macsec set macsec0 tx sa 0 on
echo "  Protection restored: the taint and the rule are gone."
dranet-sec slice --node n1 --output json >"$k8s/n1.json"
excerpt "$k8s/n1.json"
show dranet-sec taint-rules --node n1 --taint-effect no-execute --dir "$k8s/rules"
rm -rf "$k8s"

step "8. Advertised vs on the wire: dranet-sec audit counts the RoCE frames"
echo "  Two pods over a veth wire, each with RXE on a software MACsec netdev:"
ip netns add pa
ip netns add pb
ip link add va netns pa type veth peer name vb netns pb
# pod NS WIRE DEV ADDR ME PEER-WIRE-MAC: DEV, a software SecY on WIRE
# that encrypts with key ME and takes the peer's frames with the other.
pod() {
	ip -n "$1" link set "$2" up
	ip -n "$1" link add link "$2" "$3" type macsec port 1 encrypt on
	ip -n "$1" macsec add "$3" tx sa 0 pn 1 on key "$5" 12345678901234567890123456789012
	ip -n "$1" macsec add "$3" rx port 1 address "$6"
	ip -n "$1" macsec add "$3" rx port 1 address "$6" sa 0 pn 1 on \
		key "$([ "$5" = 01 ] && echo 02 || echo 01)" 12345678901234567890123456789012
	ip -n "$1" addr add "$4/24" dev "$3"
	ip -n "$1" link set "$3" up
	ip netns exec "$1" rdma link add "rxe$1" type rxe netdev "$3"
}
pod pa va maca 10.8.0.1 01 "$(ip netns exec pb cat /sys/class/net/vb/address)"
pod pb vb macb 10.8.0.2 02 "$(ip netns exec pa cat /sys/class/net/va/address)"
ip netns exec pb timeout 60 rping -s -a 10.8.0.2 -C 3 >/dev/null 2>&1 &
# in_ns NS CMD...: CMD in the network namespace NS, or in this one for "-".
in_ns() {
	local ns=$1
	shift
	if [ "$ns" = - ]; then "$@"; else ip netns exec "$ns" "$@"; fi
}
# audit_while NS WIRE CMD...: `dranet-sec audit WIRE` in NS while CMD runs
# there; then the audit's report and its exit status.
audit_while() {
	local ns=$1 wire=$2 out pid rc=0
	shift 2
	out=$(mktemp)
	# Started as itself (not in a subshell, which would ignore SIGINT).
	if [ "$ns" = - ]; then
		dranet-sec audit "$wire" >"$out" 2>"$out.err" &
	else
		ip netns exec "$ns" dranet-sec audit "$wire" >"$out" 2>"$out.err" &
	fi
	pid=$!
	# It says so on stderr once its program is attached, or exits.
	until grep -q "audit: on" "$out.err" || ! kill -0 "$pid" 2>/dev/null; do
		sleep 0.2
	done
	in_ns "$ns" "$@" >/dev/null 2>&1 || true
	kill -INT "$pid" 2>/dev/null || true
	wait "$pid" || rc=$?
	sed 's/^/    /' "$out" "$out.err" | grep -v "audit: on"
	echo "    (exit status $rc)"
	rm -f "$out" "$out.err"
}
printf '  $ ip netns exec pa dranet-sec audit va   # while pod A rpings pod B\n'
# The server may still be coming up: the client retries.
audit_while pa va sh -c \
	'for i in $(seq 30); do timeout 20 rping -c -a 10.8.0.2 -C 3 && exit; sleep 0.5; done; exit 1'
wait
echo "  Only encrypted frames crossed the wire. (maca advertises none: its SecY is"
echo "  software, which the module never counts as hardware protection.)"
rdma link del rxepa
rdma link del rxepb
ip netns del pa
ip netns del pb
echo "  macsec0 on netdevsim, whose offload only keeps the books, advertises"
echo "  offload-mac; rping tries 10.7.0.2, a neighbour that never answers:"
ip addr add 10.7.0.1/24 dev macsec0
ip neigh add 10.7.0.2 lladdr 02:00:00:00:00:99 dev macsec0 nud permanent
printf '  $ dranet-sec audit %s   # while rping tries 10.7.0.2 for 5 s\n' "$port"
audit_while - "$port" timeout 5 rping -c -a 10.7.0.2 -C 1

step "9. The DPU split: the SecY lives on the DPU (namespace dpu), the host has h0"
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

step "10. The DPU configures and offloads its SecY; the host binds h0 to it"
show ip -n dpu link add link "$uplink" macsec1 type macsec port 4 encrypt on offload mac
ip -n dpu link set macsec1 up
show dranet-sec bind --port h0 --secy macsec1 --netns dpu
echo "  Bound, but the DPU's SecY has no TX SA yet:"
view h0
show ip -n dpu macsec add macsec1 tx sa 0 pn 1 on key 01 12345678901234567890123456789012
echo "  The host port is protected by the DPU's offloaded SecY:"
view h0

step "11. The DPU tears its SecY down: the host port is retracted"
show ip -n dpu link del macsec1
view h0

step "12. Unload: the bits it set are cleared, macsec_ops restored"
rmmod macsec_bridge
show sh -c "ethtool -k macsec0 | grep macsec-hw-offload"
show sh -c "ip macsec show macsec0 | grep -o 'offload: mac'"
cleanup
trap - EXIT
