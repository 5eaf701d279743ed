#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Revocation after DRANet moved the port: `taint-rules --watch` keeps a
# port's DeviceTaintRule while a pod holds it. As DRANet allocates a port,
# the host port h0 (bound to the DPU's offloaded SecY) moves into the
# pod's namespace, where the pod renames it net1; the DPU then turns
# encrypt off, and the rule for h0's device, NoExecute, appears; encrypt
# on deletes it again. First the same happens with h0 still on the host,
# which also shows taint-rules is following before h0 moves. The rule
# directory goes through exactly those four events, and nothing else is
# written.
#
# The pod then has an RXE device of its own on the port (RXE leaves with
# its netdev; a NIC keeps its RDMA device, which DRANet moves in exclusive
# mode).
#
# The bed has no PCI function: h0 is a netdevsim port, which DRANet names
# by its interface name as taint-rules does (a PCI function keeps its
# pci-… name, which DRANet goes on publishing while the pod holds it).
set -u
. "$(dirname "$0")/lib.sh"

BIN=${DRANET_SEC:-}
dpu_bed nsim
require_ko "$BIN" "dranet-sec binary (DRANET_SEC)"
setup_ns POD || ns_broken POD
D=$ROW_DIR
DPU_IP=(ip -n "$DPU")
RULE=$D/rules/dranet-sec.n1.h0.yaml

ktap_print_header
ktap_set_plan 16

check "load" insmod_bridge "$MODULE_KO"
check "RXE on h0" rdma link add mb_rxe0 type rxe netdev h0
check "DPU: an active TX SA, settled by an update" \
	bash -c "${DPU_IP[*]} macsec add macsec0 tx sa 0 pn 1 on key 01 $MB_KEY &&
		${DPU_IP[*]} link set macsec0 type macsec encrypt on"
quiet() { "$@" >/dev/null 2>&1; }
check "bind h0 to the DPU's SecY" quiet dpu_bind h0
ynl --dump dev-get >"$D/bound"
check "h0: offload-mac, bound" \
	[ "$(port_field "$D/bound" h0 protection)/$(port_field "$D/bound" h0 relation)" = \
	  offload-mac/bound ]

"$BIN" taint-rules --node n1 --dir "$D/rules" --watch --output json --taint-effect no-execute \
	>"$D/rules.log" 2>"$D/rules.err" &
RULES=$!
rule_is() {
	test -e "$RULE" && grep -q "value: $1" "$RULE" && grep -q 'effect: NoExecute' "$RULE" &&
		grep -q 'device: h0' "$RULE" && grep -q 'pool: n1' "$RULE" &&
		grep -q 'driver: dra.net' "$RULE"
}
no_rule() { ! test -e "$RULE"; }
"${DPU_IP[@]}" link set macsec0 type macsec encrypt off
check "h0 on the host, DPU encrypt off: its rule, NoExecute, selecting DRANet's device h0" \
	wait_for 100 rule_is encrypt-off
"${DPU_IP[@]}" link set macsec0 type macsec encrypt on
check "DPU encrypt on: the rule is gone" wait_for 50 no_rule

into_pod() {
	ip link set h0 netns "$POD" && ip -n "$POD" link set h0 name net1 &&
		ip -n "$POD" link set net1 up
}
check "h0 moved into the pod, named net1 there" into_pod
moved() { [ "$(port_field <(ynl_in "$POD" --dump dev-get) net1 relation)" = bound ]; }
check "the pod's dump: net1 bound" wait_for 50 moved
# RXE went with its netdev's move; the pod's RDMA device is one of its own.
check "the pod's own RXE on net1" ip netns exec "$POD" rdma link add mb_rxe1 type rxe netdev net1
named() { [ "$(port_field <(ynl_in "$POD" --dump dev-get) net1 rdma-dev)" = mb_rxe1 ]; }
check "the pod's dump: net1 names mb_rxe1" wait_for 50 named
check "in the pod and protected: no rule" no_rule

"${DPU_IP[@]}" link set macsec0 type macsec encrypt off
check "in the pod, DPU encrypt off: h0's rule again, NoExecute, encrypt-off" \
	wait_for 50 rule_is encrypt-off
"${DPU_IP[@]}" link set macsec0 type macsec encrypt on
check "DPU encrypt on: the rule is gone" wait_for 50 no_rule
check "taint-rules: create, delete, create, delete of h0's rule, nothing else, no error" \
	py - "$D/rules.log" "$D/rules.err" <<'PY'
import json, sys
events = [(e['event'], e['name']) for e in map(json.loads, open(sys.argv[1]))]
err = open(sys.argv[2]).read()
want = [(e, 'dranet-sec.n1.h0') for e in ('create', 'delete', 'create', 'delete')]
if events != want or err:
    print('# events:', events, 'stderr:', err[-300:])
sys.exit(0 if events == want and not err else 1)
PY
ip netns exec "$POD" rdma link del mb_rxe1 2>/dev/null
kill "$RULES" 2>/dev/null
wait "$RULES" 2>/dev/null
ip -n "$POD" link set net1 netns 1 2>/dev/null
ip link set net1 name h0 2>/dev/null
ynl --do unbind --json "{\"ifindex\": $(ifindex h0)}" >/dev/null 2>&1
check "unload" rmmod macsec_bridge

ktap_finished
