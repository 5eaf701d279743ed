#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A binding across namespaces, as DRANet uses it: the host port h0 (bound
# to the DPU's SecY) is moved into a pod's namespace and back. The binding
# and the state move with the device; the object, dumps and notifications
# are visible only where the port is; secy-netnsid is relative to the
# reader. Then the DPU namespace is deleted (the binding turns stale, the
# protection is retracted), the port is deleted, and a new device that
# reuses its ifindex inherits nothing.
#
# All of it in exclusive RDMA namespace mode, where it matters most: there
# an RDMA device belongs to one namespace. RXE is removed when its netdev
# leaves the namespace, and the bound port stays tracked without it; the
# pod then creates an RXE device of its own on the port, from inside, and
# is given it.
set -u
. "$(dirname "$0")/lib.sh"

bed_require

# The mode can only change while no namespace but init_net exists
# (rdma_compatdev_set); the namespaces of earlier tests may still be dying.
rdma_mode() {
	local i
	for i in $(seq 100); do
		rdma system set netns "$1" 2>/dev/null && return 0
		nap 0.1
	done
	return 1
}
EXCL=0
rdma_mode exclusive && EXCL=1
dpu_bed nsim
setup_ns POD || ns_broken POD
netns_cleanup() {
	dpu_cleanup
	[ "$EXCL" = 1 ] && rdma_mode shared
}
on_exit netns_cleanup
D=(ip -n "$DPU")
dump() { ynl_in "${1:-}" --dump dev-get; }
field() { port_field "$ROW_DIR/dump" h0 "$1"; }
# The id namespace NS (default: this one) has for the DPU namespace.
dpu_id() {
	ip ${1:+-n "$1"} netns list-id | awk -v n="$DPU" '$0 ~ "name: " n "\\)" {print $2}'
}

ktap_print_header
ktap_set_plan 38

check "rdma netns mode exclusive" bash -c "rdma system show | grep -q 'netns exclusive'"
check "load" insmod_bridge "$MODULE_KO"
check "RXE on h0 (host end of a netdevsim host link)" \
	rdma link add mb_rxe0 type rxe netdev h0
# The SecY predates the module: a change of nothing hands its driver the
# whole SecY, which the module sees (until then it says unsettled).
check "DPU: an active TX SA on its offloaded SecY, settled by an update" \
	bash -c "${D[*]} macsec add macsec0 tx sa 0 pn 1 on key 01 $MB_KEY &&
		${D[*]} link set macsec0 type macsec encrypt on"
ip netns set "$DPU" 7
quiet() { "$@" >/dev/null 2>&1; }
check "bind by netns id" \
	quiet ynl --do bind --json "{\"ifindex\": $(ifindex h0),
		\"secy-ifindex\": $(ifindex macsec0 "$DPU"), \"secy-netnsid\": 7}"
dump >"$ROW_DIR/dump"
check "host: offload-mac, bound, secy-netnsid 7, mb_rxe0" \
	[ "$(field protection)/$(field relation)/$(field secy-netnsid)/$(field rdma-dev)" = \
	  "offload-mac/bound/7/mb_rxe0" ]
check "host: h0 keeps its driver-owned bit" [ "$(hw_macsec h0)/$(field feature-owner)" = on/driver ]
check "the DPU namespace sees no port" [ "$(dump "$DPU")" = "[]" ]
check "the pod namespace sees no port" [ "$(dump "$POD")" = "[]" ]
gen0=$(field generation)

mon_start host && mon_start pod "$POD"
check "monitors in the host and the pod" [ $? = 0 ]
check "h0 moved into the pod" ip link set h0 netns "$POD"
rxe_gone() { ! rdma dev show mb_rxe0 >/dev/null 2>&1; }
check "RXE was removed with its netdev" wait_for 50 rxe_gone
no_rdma() { [ "$(port_field <(dump "$POD") h0 rdma-dev)" = "" ]; }
check "pod: h0 still bound, without an RDMA device" wait_for 50 no_rdma
dump "$POD" >"$ROW_DIR/dump"
check "pod: offload-mac, bound" [ "$(field protection)/$(field relation)" = "offload-mac/bound" ]
check "pod: an RXE device of its own on h0, created inside the pod" \
	ip netns exec "$POD" rdma link add mb_rxe1 type rxe netdev h0
check "pod: the port names it (mb_rxe1), still offload-mac" \
	[ "$(port_field <(dump "$POD") h0 rdma-dev)/$(port_field <(dump "$POD") h0 protection)" = \
	  "mb_rxe1/offload-mac" ]
# `rdma link add` registers the device in init_net's RDMA namespace, from
# wherever it is called: in exclusive mode the pod is given it.
check "exclusive mode: the host moves mb_rxe1 into the pod" rdma dev set mb_rxe1 netns "$POD"
check "pod: sees mb_rxe1, the host no longer" \
	bash -c "ip netns exec $POD rdma dev show mb_rxe1 >/dev/null &&
		 ! rdma dev show mb_rxe1 >/dev/null 2>&1"
named() { [ "$(port_field <(dump "$POD") h0 rdma-dev)" = mb_rxe1 ]; }
check "pod: the port still names it" wait_for 50 named
pod_id=$(dpu_id "$POD")
check "pod: secy-netnsid is the pod's own id for the DPU (${pod_id:-none})" \
	[ "${pod_id:-none}" = "$(field secy-netnsid)" ]
check "pod: ethtool still shows the bit" [ "$(hw_macsec h0 "$POD")" = on ]
check "host: no h0" [ "$(port_field <(dump) h0 protection)" = absent ]
"${D[@]}" link set macsec0 type macsec encrypt off
check "DPU encrypt off: the pod's dump retracts" \
	[ "$(port_field <(dump "$POD") h0 reason)" = encrypt-off ]
"${D[@]}" link set macsec0 type macsec encrypt on
check "DPU encrypt on: offload-mac again" \
	[ "$(port_field <(dump "$POD") h0 protection)" = offload-mac ]
check "pod: its RXE device deleted" ip netns exec "$POD" rdma link del mb_rxe1
check "h0 back to the host" ip -n "$POD" link set h0 netns 1
ip link set h0 up
dump >"$ROW_DIR/dump"
check "host: state intact (offload-mac, bound, secy-netnsid 7)" \
	[ "$(field protection)/$(field relation)/$(field secy-netnsid)" = "offload-mac/bound/7" ]
gen1=$(field generation)
check "pod: no h0 any more" [ "$(dump "$POD")" = "[]" ]
mon_stop host
mon_stop pod
# The pod heard the arrival, encrypt off and on; the host the return only.
check "notifications went only where h0 was" py - "$ROW_DIR" "$gen0" "$gen1" <<'PY'
import json, sys
d, gen0, gen1 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def notes(name):
    return [n['msg'] for n in json.load(open(f'{d}/mon.{name}'))
            if n.get('name') == 'dev-change-ntf']
pod, host = notes('pod'), notes('host')
pr = [n['reason'] for n in pod]
gens = [n['generation'] for n in pod + host]
ok = (pr[:1] == ['none'] and 'encrypt-off' in pr and pr[-1] == 'none'
      and all(n['ifname'] == 'h0' for n in pod + host)
      and 'encrypt-off' not in [n['reason'] for n in host]
      and host and host[-1]['generation'] == gen1
      and gens == sorted(set(gens)) and gens[0] > gen0)
if not ok:
    print('# pod:', json.dumps(pod))
    print('# host:', json.dumps(host))
sys.exit(0 if ok else 1)
PY

check "RXE on h0 again" rdma link add mb_rxe0 type rxe netdev h0
check "DPU namespace deleted" ip netns del "$DPU"
NS_LIST=("$POD")
stale() { [ "$(port_field <(dump) h0 reason)" = binding-stale ]; }
check "host: binding stale (the SecY died with its namespace)" wait_for 100 stale
dump >"$ROW_DIR/dump"
check "host: retracted, still bound, no SecY reported" \
	[ "$(field protection)/$(field relation)/$(field secy-ifindex)" = "none/bound/" ]
idx=$(ifindex h0)
dpu_unbind h0 >/dev/null
check "unbind: no SecY" [ "$(port_field <(dump) h0 reason)" = no-secy ]
rdma link del mb_rxe0
# h0 is a netdevsim port: deleting its device deletes it.
echo "${NSIM_IDS[2]}" > /sys/bus/netdevsim/del_device
check "h0 deleted: gone" [ "$(port_field <(dump) h0 protection)" = absent ]
ip link add h0r index "$idx" type veth peer name h0p && ip link set h0r up && ip link set h0p up
check "a new device takes h0's ifindex ($idx), with RXE" \
	bash -c "[ \$(cat /sys/class/net/h0r/ifindex) = $idx ] &&
		 rdma link add mb_rxe0 type rxe netdev h0r"
check "it inherits nothing: no relation, no SecY" \
	[ "$(port_field <(dump) h0r relation)/$(port_field <(dump) h0r reason)" = "/no-secy" ]
rdma link del mb_rxe0
check "unload" rmmod macsec_bridge

ktap_finished
