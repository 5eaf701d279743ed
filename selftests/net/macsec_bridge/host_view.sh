#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The host's view: the host's administrator, from the initial namespace,
# dumps (all-netns) and monitors (monitor-all) the ports of every
# namespace, each naming its namespace (netnsid); nobody else does.
#
# As DRANet allocates a port: the host port h0, bound to the DPU's
# offloaded SecY, moves into a pod's namespace; the DPU turns encrypt off
# and on; h0 comes back. The host's view follows h0 through all of it,
# with the ids `ip netns list-id` shows and the same port-id throughout,
# and monitor-all hears exactly what the port's namespaces heard, in the
# same order, with the host's ids. A reader in the pod, a root of a user
# namespace of its own and a task without CAP_NET_ADMIN are refused, with
# the reason.
set -u
. "$(dirname "$0")/lib.sh"

dpu_bed nsim
require_cmd setpriv unshare
setup_ns POD || ns_broken POD
D=(ip -n "$DPU")
OUT=$ROW_DIR/out

ktap_print_header
ktap_set_plan 26

# The ids the initial namespace has for the DPU and the pod, set here and
# read back from rtnetlink: what the host's view must say.
ip netns set "$DPU" 7 && ip netns set "$POD" 11
list_id() { ip netns list-id | awk -v n="$1" '$0 ~ "name: " n "\\)" {print $2}'; }
check "rtnetlink: the host's ids for the DPU (7) and the pod (11)" \
	[ "$(list_id "$DPU")/$(list_id "$POD")" = 7/11 ]

all() { ynl --dump dev-get --json '{"all-netns": true}'; }
field() { port_field "$1" h0 "$2"; }
# fields FILE FIELD...: h0's FIELDs in dump FILE, joined by slashes.
fields() {
	local file=$1 sep= f
	shift
	for f; do
		printf '%s%s' "$sep" "$(field "$file" "$f")"
		sep=/
	done
}
quiet() { "$@" >/dev/null 2>&1; }

check "load" insmod_bridge "$MODULE_KO"
check "RXE on h0" rdma link add mb_rxe0 type rxe netdev h0
check "DPU: an active TX SA, settled by an update" \
	bash -c "${D[*]} macsec add macsec0 tx sa 0 pn 1 on key 01 $MB_KEY &&
		${D[*]} link set macsec0 type macsec encrypt on"
check "bind h0 to the DPU's SecY" quiet dpu_bind h0
S=$(ifindex macsec0 "$DPU")

ynl --dump dev-get >"$ROW_DIR/own"
all >"$ROW_DIR/all0"
check "host, own and all-netns: h0 the same, no netnsid, secy-netnsid 7" \
	py - "$ROW_DIR/own" "$ROW_DIR/all0" "$(ifindex h0)" "$S" <<'PY'
import json, sys
own, allv = (json.load(open(p)) for p in sys.argv[1:3])
ifindex, secy = int(sys.argv[3]), int(sys.argv[4])
o = [p for p in own if p['ifname'] == 'h0']
a = [p for p in allv if p['ifname'] == 'h0']
ok = (len(o) == 1 and o == a and 'netnsid' not in a[0] and a[0]['ifindex'] == ifindex
      and a[0]['secy-ifindex'] == secy and a[0]['secy-netnsid'] == 7
      and a[0]['protection'] == 'offload-mac' and a[0]['relation'] == 'bound')
if not ok:
    print('# own:', json.dumps(o), 'all:', json.dumps(a))
sys.exit(0 if ok else 1)
PY
port_id=$(field "$ROW_DIR/all0" port-id)
gen0=$(field "$ROW_DIR/all0" generation)

mon_start host && mon_start pod "$POD" && mon_start all "" monitor-all
check "monitors: the host's and the pod's own, and monitor-all" [ $? = 0 ]
check "h0 moved into the pod" ip link set h0 netns "$POD"
in_pod() { [ "$(port_field <(ynl_in "$POD" --dump dev-get) h0 relation)" = bound ]; }
check "the pod's own dump lists h0" wait_for 50 in_pod
check "the host's own dump no longer does" \
	[ "$(port_field <(ynl --dump dev-get) h0 protection)" = absent ]
all >"$ROW_DIR/all1"
check "all-netns: h0 in the pod (netnsid 11), its ifindex there, bound to secy 7/$S" \
	[ "$(fields "$ROW_DIR/all1" netnsid ifindex relation secy-netnsid secy-ifindex)" = \
	  "11/$(ifindex h0 "$POD")/bound/7/$S" ]
check "all-netns: the same port-id ($port_id)" [ "$(field "$ROW_DIR/all1" port-id)" = "$port_id" ]

"${D[@]}" link set macsec0 type macsec encrypt off
all >"$ROW_DIR/off"
check "DPU encrypt off: all-netns says encrypt-off for the pod's h0" \
	[ "$(fields "$ROW_DIR/off" reason netnsid)" = encrypt-off/11 ]
"${D[@]}" link set macsec0 type macsec encrypt on
check "DPU encrypt on: offload-mac again" [ "$(field <(all) protection)" = offload-mac ]

# Everyone else: a root in the pod (CAP_NET_ADMIN, not in the initial
# namespace), a root of a user namespace of its own over the initial
# namespace, a task without CAP_NET_ADMIN.
EINVAL=": Invalid argument" EPERM=": Operation not permitted"
# refused DESC ERRNO MESSAGE-PART CMD...: CMD fails with ERRNO and the
# extack message.
refused() {
	local desc=$1 err=$2 msg=$3
	shift 3
	"$@" >"$OUT" 2>&1
	refusal "$desc" $? "$OUT" "$err" "$msg"
}
cli=(/usr/bin/python3 "$YNL_CLI" --no-schema --spec "$YNL_SPEC" --output-json)
refused "the pod's root: EINVAL, the initial namespace only" "$EINVAL" "initial network namespace" \
	ip netns exec "$POD" "${cli[@]}" --dump dev-get --json '{"all-netns": true}'
refused "a user namespace's root over init_net: EPERM" "$EPERM" \
	"CAP_NET_ADMIN in the initial user namespace" \
	unshare --user --map-root-user "${cli[@]}" --dump dev-get --json '{"all-netns": true}'
refused "without CAP_NET_ADMIN: EPERM" "$EPERM" "CAP_NET_ADMIN in the initial user namespace" \
	setpriv --inh-caps=-all --bounding-set=-net_admin \
	"${cli[@]}" --dump dev-get --json '{"all-netns": true}'
refused "a user namespace's root joins monitor-all: EPERM" "Operation not permitted" "" \
	unshare --user --map-root-user "${cli[@]}" --subscribe monitor-all --sleep 1
check "... where monitor stays open to it" \
	unshare --user --map-root-user "${cli[@]}" --subscribe monitor --sleep 1
check "the DPU's own dump: no h0" \
	[ "$(port_field <(ynl_in "$DPU" --dump dev-get) h0 protection)" = absent ]

check "h0 back to the host" ip -n "$POD" link set h0 netns 1
ip link set h0 up
all >"$ROW_DIR/all2"
check "all-netns: h0 here again, no netnsid, the same port-id" \
	[ "$(fields "$ROW_DIR/all2" netnsid port-id secy-netnsid)" = "/$port_id/7" ]
mon_stop host
mon_stop pod
mon_stop all

# monitor-all heard exactly the notifications the port's namespaces heard
# (the host's and the pod's own monitors), in generation order, each the
# same object but for the ids: netnsid 11 while h0 was in the pod,
# secy-netnsid the host's 7. The pod heard encrypt off; the host did not.
check "monitor-all: what h0's namespaces heard, in order, with the host's ids" \
	py - "$ROW_DIR" "$gen0" "$port_id" <<'PY'
import json, sys
d, gen0, port_id = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def notes(name):
    return [n['msg'] for n in json.load(open(f'{d}/mon.{name}'))
            if n.get('name') == 'dev-change-ntf']
host, pod, allv = notes('host'), notes('pod'), notes('all')
own = sorted([(n['generation'], None, n) for n in host] +
             [(n['generation'], 11, n) for n in pod], key=lambda t: t[0])
bad = []
if [n['generation'] for n in allv] != [g for g, _, _ in own]:
    bad.append('generations differ')
for (g, nsid, o), a in zip(own, allv):
    want = {k: v for k, v in o.items() if k != 'secy-netnsid'}
    if 'secy-ifindex' in o:
        want['secy-netnsid'] = 7
    if nsid is not None:
        want['netnsid'] = nsid
    if a != want:
        bad.append(f'{g}: {json.dumps(a)} != {json.dumps(want)}')
if any(n['port-id'] != port_id or n['ifname'] != 'h0' or n['generation'] <= gen0 for n in allv):
    bad.append('another port, or an old generation')
reasons = [n['reason'] for n in pod]
if 'encrypt-off' not in reasons or reasons[-1] != 'none' or not host:
    bad.append(f'pod heard {reasons}, host {len(host)}')
if 'encrypt-off' in [n['reason'] for n in host]:
    bad.append('the host heard the pod')
for b in bad:
    print('#', b)
sys.exit(1 if bad else 0)
PY

rdma link del mb_rxe0 2>/dev/null
check "unbind" quiet dpu_unbind h0
check "all-netns: h0 is no port any more" [ "$(field <(all) protection)" = absent ]
check "unload" rmmod macsec_bridge

ktap_finished
