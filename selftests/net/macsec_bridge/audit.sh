#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `dranet-sec audit`: its tcx program on the wire, judged by what crossed
# it, and its verdicts judged against what the ports advertise.
#
# 1. Classes. Crafted frames of every class, malformed ones among them,
#    sent with a packet socket on a quiet veth: each is counted exactly as
#    what it is, nothing else is counted, and the capture holds exactly
#    those frames, outbound, their first 192 bytes byte for byte.
#    audit_wire.py builds the frames and reads the capture with a
#    classifier of its own.
# 2. Verified. Two pods, each with its own RXE on a software MACsec netdev
#    over a veth wire: rping runs, and pod A's wire says `verified` for its
#    port. The capture has SecTAG'ed frames with the E bit and no RoCE in
#    the clear.
#    `slice --audit` publishes macsecWireVerified true, and the taint stays
#    the kernel's (a software SecY: offload-off).
# 3. Plaintext on the wire. netdevsim's `offload mac` with an active SA:
#    the port advertises offload-mac, yet netdevsim encrypts nothing. The
#    audit says `plaintext-on-wire` for that port, flags the contradiction
#    and exits 1; the capture shows the connection request's BTH in the
#    clear, to the GSI QP (1). `slice --audit` keeps macsecEgress true (the
#    kernel's claim), publishes macsecWireVerified false, and taints the
#    device `unprotected=plaintext-on-wire`.
# 4. The DPU split. A host namespace's port h0 is bound to the SecY of a
#    DPU namespace, whose uplink is netdevsim's `offload mac`; the DPU
#    routes the host's traffic out through that SecY. The audit of the
#    uplink, given as DPU:IFNAME from the host, finds the bound port's
#    wire through its SecY and says `plaintext-on-wire`.
set -u
. "$(dirname "$0")/lib.sh"

BIN=${DRANET_SEC:-}
WIRE=$(dirname "$0")/audit_wire.py
KEY_A=0123456789abcdef0123456789abcdef
KEY_B=fedcba9876543210fedcba9876543210
D=$(mktemp -d)
AUDIT=

cleanup() {
	[ -n "$AUDIT" ] && kill "$AUDIT" 2>/dev/null
	[ -n "${SRV:-}" ] && kill "$SRV" 2>/dev/null
	ip netns exec "${pa:-none}" rdma link del mb_aud_rxea 2>/dev/null
	ip netns exec "${pb:-none}" rdma link del mb_aud_rxeb 2>/dev/null
	ip netns exec "${pn:-none}" rdma link del mb_aud_rxen 2>/dev/null
	ip netns exec "${ph:-none}" rdma link del mb_aud_rxeh 2>/dev/null
	cleanup_ns
	nsim_del_all
	rmmod macsec_bridge 2>/dev/null
	rm -rf "$D"
}
on_exit cleanup

require_root
require_cmd ip rdma rping
require_ko "$MODULE_KO" "module under test (MACSEC_BRIDGE_KO)"
require_ko "$BIN" "dranet-sec binary (DRANET_SEC)"
# The YNL CLI's bed (python3 among it) starts the server the Python
# helpers (q, device, audit_wire.py) run in.
require_ynl
# /proc/sys/kernel/unprivileged_bpf_disabled exists iff bpf() does.
if [ ! -e /proc/sys/kernel/unprivileged_bpf_disabled ]; then
	ktap_skip_all "the kernel has no bpf() (CONFIG_BPF_SYSCALL)"
	exit "$KSFT_SKIP"
fi
require_pod_rxe
nsim_require
insmod_bridge "$MODULE_KO" || bed_broken "cannot load the module"
setup_ns pq pa pb pn ph DPU || ns_broken pq pa pb pn ph DPU

# audit_start NS DEV NAME: `audit --json --pcap` on DEV in NS, output in
# $D/NAME.{json,err,pcap}; returns once the program is attached.
audit_start() {
	ip netns exec "$1" "$BIN" audit --json --pcap "$D/$3.pcap" "$2" \
		>"$D/$3.json" 2>"$D/$3.err" &
	AUDIT=$!
	wait_for 600 grep -q "audit: on $2 " "$D/$3.err" ||
		{ sed 's/^/# /' "$D/$3.err"; return 1; }
}
# audit_stop: SIGINT, then its status (0: no port contradicted).
audit_stop() {
	local rc
	kill -INT "$AUDIT"
	wait "$AUDIT"
	rc=$?
	AUDIT=
	return $rc
}
# offload_secy NS LOWER NAME ADDR/LEN PEER: the SecY NAME offloaded (MAC)
# on LOWER in NS, with an active TX SA and the address ADDR; PEER resolves
# to a made-up MAC, so RoCE to it leaves with nobody to answer.
offload_secy() {
	ip -n "$1" link add link "$2" "$3" type macsec port 4 encrypt on offload mac &&
		ip -n "$1" macsec add "$3" tx sa 0 pn 1 on key 01 "$MB_KEY" &&
		ip -n "$1" addr add "$4" dev "$3" && ip -n "$1" link set "$3" up &&
		ip -n "$1" neigh add "$5" lladdr 02:00:00:00:00:99 dev "$3" nud permanent
}
# wire_out NS DEV: the frames DEV in NS has sent or dropped. netdevsim
# counts a frame after the egress hook has seen it.
wire_out() {
	local d=/sys/class/net/$2/statistics
	ip netns exec "$1" cat "$d/tx_packets" "$d/tx_dropped" | awk '{ n += $1 } END { print n }'
}
# advertised_yet_plain NS WIRE NAME PEER PORT RELATION: PORT, the only port
# in NS, advertises offload-mac as RELATION; the audit of WIRE (a device as
# `audit` takes it) while rping tries PEER exits 1. Three results; the
# report is $D/NAME.json.
advertised_yet_plain() {
	local wns=$1 wdev=$2 before rp
	case "$2" in *:*) wns=${2%%:*} wdev=${2#*:} ;; esac
	ip netns exec "$1" "$BIN" status --json >"$D/status.json"
	same "$5 advertises offload-mac ($6)" \
		"$(q "$D/status.json" '[(p["ifname"], p["protection"], p["relation"]) for p in r]')" \
		"[[\"$5\", \"offload-mac\", \"$6\"]]"
	check "audit attaches to the wire ($3)" audit_start "$1" "$2" "$3"
	# Nobody answers: the connection request is enough, and the wire
	# carries nothing else (no IPv6 in the wire's namespace, the peer's
	# MAC is a permanent neighbour), so its first frame out is the
	# request. Waiting for rping to give up took 10 s.
	before=$(wire_out "$wns" "$wdev")
	ip netns exec "$1" rping -c -a "$4" -C 1 >/dev/null 2>&1 &
	rp=$!
	wait_for 200 eval '[ "$(wire_out "$wns" "$wdev")" -gt "$before" ]'
	kill "$rp" 2>/dev/null
	wait "$rp"
	check_fail "audit exits 1: $5 is contradicted" audit_stop
}
# q JSON-FILE PYTHON-EXPRESSION: the expression's value, with the file's
# document as `r`; "ERROR" if it cannot be had.
q() {
	py -c 'import json, sys
r = json.load(open(sys.argv[1]))
try:
    v = eval(sys.argv[2])
except Exception as e:
    v = "ERROR: %r" % e
print(json.dumps(v, sort_keys=True) if not isinstance(v, str) else v)' "$1" "$2"
}
DOMAIN=macsec.dranet-sec.io
# device SLICE-JSON IFNAME: [(macsecEgress, macsecWireVerified, taints as
# KEY=VALUE:EFFECT)] of the device of IFNAME in a slice (one, in JSON).
device() {
	py - "$1" "$2" "$DOMAIN" <<'PY'
import json, sys
path, ifname, dom = sys.argv[1:4]
out = []
for d in json.load(open(path))["spec"]["devices"]:
    a = d["attributes"]
    if a.get("dra.net/ifName", {}).get("string") != ifname:
        continue
    out.append((a.get(dom + "/macsecEgress", {}).get("bool"),
                a.get(dom + "/macsecWireVerified", {}).get("bool"),
                ["%s=%s:%s" % (t["key"], t["value"], t["effect"]) for t in d.get("taints", [])]))
print(json.dumps(out))
PY
}
# slice_says WHAT NS NAME IFNAME WANT: one KTAP line, whether `slice
# --audit` in NS with the report $D/NAME.json gives IFNAME's device WANT
# (as `device` prints it).
slice_says() {
	ip netns exec "$2" "$BIN" slice --node n1 --output json --audit "$D/$3.json" >"$D/$3.slice"
	same "$1" "$(device "$D/$3.slice" "$4")" "$5"
}
# same WHAT GOT WANT: one KTAP line, with both on a mismatch.
same() {
	if [ "$2" = "$3" ]; then
		ktap_test_pass "$1"
	else
		ktap_test_fail "$1"
		echo "#   got:  $2"
		echo "#   want: $3"
	fi
}

ktap_print_header
ktap_set_plan 25

# 1. Classes, on a wire with nothing else on it.
ip netns exec "$pq" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
ip -n "$pq" link add qa type veth peer name qb &&
	ip -n "$pq" link set qa up && ip -n "$pq" link set qb up ||
	bed_broken "a veth pair in a namespace"
check "audit attaches to both directions of a veth" audit_start "$pq" qa classes
py_in "$pq" "$WIRE" send qa >"$D/sent.json"
check "audit exits 0 with no port on the wire" audit_stop
same "every crafted frame counted in its class, egress" \
	"$(q "$D/classes.json" '[d["egress"] for d in r["devices"] if d["device"] == "qa"]')" \
	"$(q "$D/sent.json" '[r["counts"]]')"
same "nothing counted on ingress" \
	"$(q "$D/classes.json" 'sorted(set(r["devices"][0]["ingress"].values()))')" "[0]"
py "$WIRE" read "$D/classes.pcap" >"$D/classes.cap" 2>&1
same "capture: one interface, qa" "$(q "$D/classes.cap" 'r["interfaces"]')" '["qa"]'
# The program keeps the first 192 bytes of a frame.
same "capture: the frames sent, in order, outbound, their first 192 bytes" \
	"$(q "$D/classes.cap" '[(f["dir"], f["len"], f["data"]) for f in r["frames"]]')" \
	"$(q "$D/sent.json" '[("out", len(f) // 2, f[:384]) for f in r["frames"]]')"
same "capture and counters agree, class by class" \
	"$(q "$D/classes.cap" 'sorted(f["class"] for f in r["frames"])')" \
	"$(q "$D/sent.json" 'sorted(k for k, n in r["counts"].items() for _ in range(n))')"

# 2. Two pods over software MACsec: RoCE crosses the wire encrypted.
ip link add va netns "$pa" type veth peer name vb netns "$pb"
mac_a=$(ip netns exec "$pa" cat /sys/class/net/va/address)
mac_b=$(ip netns exec "$pb" cat /sys/class/net/vb/address)
sw_macsec_pod "$pa" va maca 10.1.0.1 "$KEY_A" "$mac_b" "$KEY_B" &&
	sw_macsec_pod "$pb" vb macb 10.1.0.2 "$KEY_B" "$mac_a" "$KEY_A" &&
	ip netns exec "$pa" rdma link add mb_aud_rxea type rxe netdev maca &&
	ip netns exec "$pb" rdma link add mb_aud_rxeb type rxe netdev macb ||
	bed_broken "two pods with RXE on software MACsec"
check "audit attaches to pod A's wire" audit_start "$pa" va pods
ip netns exec "$pb" timeout 120 rping -s -a 10.1.0.2 -C 10 >/dev/null 2>&1 &
SRV=$!
rping_client() {
	local end=$((SECONDS + 60))
	until ip netns exec "$pa" timeout 20 rping -c -a 10.1.0.2 -C 10 >/dev/null 2>&1; do
		[ "$SECONDS" -lt "$end" ] || return 1
		nap 0.5
	done
}
check "rping: 10 round trips from pod A to pod B" rping_client
wait "$SRV"
SRV=
check "audit exits 0: no port contradicted" audit_stop
same "pod A's port: its wire, and verified" \
	"$(q "$D/pods.json" '[(p["ifname"], p["relation"], p["wire"], p["verdict"], p["contradicts"], p["hook-before-offload"]) for p in r["ports"]]')" \
	'[["maca", "self", "va", "verified", false, false]]'
same "the wire: encrypted frames both ways, no RoCE outside them, none malformed" \
	"$(q "$D/pods.json" '[(d[k]["macsec-encrypted"] > 20, d[k]["roce"], d[k]["macsec-integrity-roce"], d[k]["malformed"]) for d in r["devices"] for k in ("egress", "ingress")]')" \
	'[[true, 0, 0, 0], [true, 0, 0, 0]]'
py "$WIRE" read "$D/pods.pcap" >"$D/pods.cap" 2>&1
same "capture: SecTAG'ed frames with E both ways, and no cleartext BTH" \
	"$(q "$D/pods.cap" '(len([f for f in r["frames"] if f["class"] == "macsec-encrypted" and f["e"] and f["dir"] == "out"]) > 20, len([f for f in r["frames"] if f["class"] == "macsec-encrypted" and f["dir"] == "in"]) > 20, [f for f in r["frames"] if "dqpn" in f])')" \
	'[true, true, []]'
slice_says "slice --audit: wire verified, the kernel's taint (software SecY)" "$pa" pods maca \
	"[[false, true, [\"$DOMAIN/unprotected=offload-off:NoSchedule\"]]]"

# 3. netdevsim's offload: advertised, yet RoCE leaves in the clear. The
# wire's namespace has no IPv6 (advertised_yet_plain counts its frames).
no_ipv6() {
	ip netns exec "$1" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
}
no_ipv6 "$pn" && nsim_pair "$pn" || bed_broken "a linked pair of netdevsim ports"
offload_secy "$pn" "$NSIM_A" macn 10.3.0.1/24 10.3.0.2 &&
	ip netns exec "$pn" rdma link add mb_aud_rxen type rxe netdev macn ||
	bed_broken "RXE on an offloaded MACsec netdev over netdevsim"
advertised_yet_plain "$pn" "$NSIM_A" nsim 10.3.0.2 macn self
same "the port: plaintext-on-wire, contradicting offload-mac" \
	"$(q "$D/nsim.json" '[(p["ifname"], p["protection"], p["wire"], p["verdict"], p["contradicts"], p["hook-before-offload"]) for p in r["ports"]]')" \
	"[[\"macn\", \"offload-mac\", \"$NSIM_A\", \"plaintext-on-wire\", true, true]]"
same "the wire: RoCE in the clear on egress, no MACsec frame" \
	"$(q "$D/nsim.json" '[(d["egress"]["roce"] > 0, d["egress"]["macsec-encrypted"], d["egress"]["macsec-integrity-roce"]) for d in r["devices"]]')" \
	'[[true, 0, 0]]'
py "$WIRE" read "$D/nsim.pcap" >"$D/nsim.cap" 2>&1
same "capture: the connection request's BTH in the clear, to QP 1" \
	"$(q "$D/nsim.cap" 'sorted(set((f["dir"], f["dqpn"]) for f in r["frames"] if "dqpn" in f))')" \
	'[["out", 1]]'
slice_says "slice --audit: the kernel's claim, the wire's denial, and the taint" "$pn" nsim macn \
	"[[true, false, [\"$DOMAIN/unprotected=plaintext-on-wire:NoSchedule\"]]]"

# 4. The DPU split: the host's RoCE leaves through the DPU's uplink.
no_ipv6 "$DPU" && nsim_pair "$DPU" || bed_broken "a linked pair of netdevsim ports in the DPU"
ip link add h0 netns "$ph" type veth peer name d0 netns "$DPU" &&
	ip netns exec "$DPU" sysctl -qw net.ipv4.ip_forward=1 &&
	ip -n "$DPU" addr add 10.5.0.2/24 dev d0 && ip -n "$DPU" link set d0 up &&
	offload_secy "$DPU" "$NSIM_A" macsec0 10.6.0.1/24 10.6.0.2 &&
	ip -n "$ph" addr add 10.5.0.1/24 dev h0 && ip -n "$ph" link set h0 up &&
	ip -n "$ph" route add 10.6.0.0/24 via 10.5.0.2 &&
	ip netns exec "$ph" "$BIN" bind --port h0 --secy macsec0 --netns "$DPU" >/dev/null &&
	ip netns exec "$ph" rdma link add mb_aud_rxeh type rxe netdev h0 ||
	bed_broken "the DPU split with RXE on the bound port"
advertised_yet_plain "$ph" "$DPU:$NSIM_A" dpu 10.6.0.2 h0 bound
same "the bound port: its wire is the DPU's uplink, plaintext-on-wire" \
	"$(q "$D/dpu.json" '[(p["ifname"], p["relation"], p["wire"], p["verdict"], p["contradicts"], d["egress"]["roce"] > 0) for p in r["ports"] for d in r["devices"]]')" \
	"[[\"h0\", \"bound\", \"$DPU:$NSIM_A\", \"plaintext-on-wire\", true, true]]"

ktap_finished
