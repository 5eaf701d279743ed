#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# DRANet-Sec, the real binary against the real module: a port whose SecY
# has no active TX SA publishes macsecEgress false; an active TX SA makes
# it true in the `slice --watch` stream, `monitor` and the webhook; tearing
# it down makes it false again, and the webhook's profile then refuses to
# prepare the port; and `place` picks the node whose slice says protected.
set -u
. "$(dirname "$0")/lib.sh"

BIN=${DRANET_SEC:-}
lockstep_bed
require_ko "$BIN" "dranet-sec binary (DRANET_SEC)"
require_cmd curl
A=$NSIM_A
D=$ROW_DIR
DOMAIN=macsec.dranet-sec.io

# egress FILE [ATTR]: macsecEgress (or ATTR) of macsec0 in the last slice
# of FILE (JSON lines or one JSON document), its value lowercase.
egress() {
	py - "$1" "$DOMAIN" "${2:-macsecEgress}" <<'PY'
import json, sys
text = open(sys.argv[1]).read().strip()
try:
    docs = [json.loads(text)]
except ValueError:
    docs = [json.loads(l) for l in text.splitlines() if l.strip()]
for s in docs[-1:]:
    for d in s['spec']['devices']:
        if d['attributes'].get('dra.net/ifName', {}).get('string') == 'macsec0':
            v = d['attributes'][sys.argv[2] + '/' + sys.argv[3]]
            print(str(v.get('bool', v.get('string'))).lower())
PY
}
# taint FILE: "KEY VALUE EFFECT" of macsec0's taint in the last slice of
# FILE, or "none".
taint() {
	py - "$1" <<'PY'
import json, sys
text = open(sys.argv[1]).read().strip()
try:
    docs = [json.loads(text)]
except ValueError:
    docs = [json.loads(l) for l in text.splitlines() if l.strip()]
for d in docs[-1]['spec']['devices']:
    if d['attributes'].get('dra.net/ifName', {}).get('string') == 'macsec0':
        t = d.get('taints', [])
        assert all(x['timeAdded'].endswith('Z') for x in t), t
        print(' '.join(f"{x['key']} {x['value']} {x['effect']}" for x in t) or 'none')
PY
}
# says_evict SLICES CLAIMS LINE: `place --evict` prints exactly LINE.
says_evict() {
	local got
	got=$("$BIN" place --evict --allocated "$2" --slices "$1")
	[ "$got" = "$3" ] || { echo "# place --evict: got '$got'"; return 1; }
}
# watch_says VALUE: the watch stream's last slice says so (within 5 s).
last_is() { [ "$(egress "$D/watch")" = "$1" ]; }

ktap_print_header
ktap_set_plan 37

check "load" insmod_bridge "$MODULE_KO"
# After the load: a SecY offloaded before it would be `unknown`.
ip link add link "$A" macsec0 type macsec port 4 encrypt on offload mac
ip link set macsec0 up
check "RXE on macsec0" rdma link add mb_rxe0 type rxe netdev macsec0
check "status lists the port: none, no-active-tx-sa" \
	bash -c "'$BIN' status | grep -E '^mb_rxe0 +macsec0 +none +no-active-tx-sa +self'"
"$BIN" slice --node plain --output json >"$D/plain.json"
check "slice: macsecEgress false" [ "$(egress "$D/plain.json")" = false ]
check "slice: no active TX SA, macsec0 tainted NoSchedule" \
	[ "$(taint "$D/plain.json")" = "$DOMAIN/unprotected no-active-tx-sa NoSchedule" ]
check "slice: DRANet's rdma attributes" \
	grep -q '"dra.net/rdmaDevice":{"string":"mb_rxe0"}' <(tr -d ' \n' <"$D/plain.json")

"$BIN" slice --node n1 --output json --watch >"$D/watch" 2>"$D/watch.err" &
WATCH=$!
"$BIN" monitor --json >"$D/monitor" 2>&1 &
MON=$!
"$BIN" taint-rules --node n1 --dir "$D/rules" --watch --output json \
	>"$D/rules.log" 2>"$D/rules.err" &
RULES=$!
RULE=$D/rules/dranet-sec.n1.macsec0.yaml
# rule_events: the event sequence for macsec0's rule, space-separated.
rule_events() {
	py -c "
import json, sys
print(' '.join(e['event'] for e in map(json.loads, open('$D/rules.log'))
               if e['name'] == 'dranet-sec.n1.macsec0'))"
}
"$BIN" webhook --enforce --socket "$D/webhook.sock" >"$D/webhook.log" 2>&1 &
HOOK=$!
wait_for 50 test -s "$D/watch"
wait_for 50 test -S "$D/webhook.sock"
check "taint-rules: a rule for macsec0, no-active-tx-sa, selecting DRANet's device" \
	wait_for 50 bash -c "grep -q 'value: no-active-tx-sa' '$RULE' && grep -q 'device: macsec0' '$RULE' && grep -q 'pool: n1' '$RULE'"
# The monitor joins its group before anything changes.
wait_for 50 wait_subscribed "$MON"
ip macsec add macsec0 tx sa 0 pn 1 on key 01 $MB_KEY
check "active TX SA: the watch stream says macsecEgress true" wait_for 50 last_is true
cp "$D/watch" "$D/protected.json"
check "active TX SA: validate strict, but ingress not strict (netdevsim marks no received frame)" \
	[ "$(egress "$D/protected.json" macsecValidate)/$(egress "$D/protected.json" macsecIngressStrict)" = \
	  strict/false ]
tail -1 "$D/protected.json" >"$D/protected-last.json"
check "active TX SA: the taint is gone" [ "$(taint "$D/protected-last.json")" = none ]
check "active TX SA: the rule file is gone" wait_for 50 bash -c "! test -e '$RULE'"
check "monitor: one line per change, the last offload-mac" \
	wait_for 50 bash -c "tail -1 '$D/monitor' | grep -q '\"protection\":\"offload-mac\"'"
# hook METHOD PATH [BODY]: "STATUS BODY" of one request, as DRANet's
# client sends it (pkg/cloudprovider/webhook/webhook.go).
hook() {
	curl -s --unix-socket "$D/webhook.sock" -X "$1" -w ' %{http_code}' \
		${3:+-H 'Content-Type: application/json' -d "$3"} "http://localhost$2" |
		sed -E 's/^(.*) ([0-9]{3})$/\2 \1/'
}
# says WANT METHOD PATH [BODY]: the reply is exactly WANT.
says() {
	local want=$1 got
	shift
	got=$(hook "$@")
	[ "$got" = "$want" ] || { echo "# $2: got '$got', want '$want'"; return 1; }
}
# DRANet's two bodies (pkg/cloudprovider/webhook/webhook.go): preparing
# sends the whole ResourceClaim, releasing only its UID.
PROFILE_CONF='{"profile":"'$DOMAIN'/protected","interface":{"name":"net1"}}'
PROFILE_REQ='{"device":{"name":"macsec0"},"claim":{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"rdma","namespace":"default","uid":"c1"},"spec":{"devices":{"requests":[{"name":"nic","exactly":{"deviceClassName":"dranet.net"}}]}}},"config":'$PROFILE_CONF'}'
RELEASE_REQ='{"device":{"name":"macsec0"},"claim_uid":"c1","config":'$PROFILE_CONF'}'
check "webhook: /health declares a cloud and a profile provider" \
	says '200 {"cloudProvider":true,"profileProvider":true}' GET /health
check "webhook: DRANet's query for macsec0 gets macsecEgress true" \
	bash -c "$(declare -f hook); D=$D; hook POST /GetDeviceAttributes '{\"name\":\"macsec0\"}' | grep -q '^200 .*\"$DOMAIN/macsecEgress\":{\"bool\":true}'"
check "webhook --enforce: the port's baseline config names the profile" \
	says '200 {"profile":"'$DOMAIN'/protected"}' POST /GetDeviceConfig '{"name":"macsec0"}'
check "webhook: the profile prepares the protected port" \
	says '200 {}' POST /GetProfileConfig "$PROFILE_REQ"
check "webhook: a malformed body gets 400 and a message" \
	bash -c "$(declare -f hook); D=$D; hook POST /GetDeviceAttributes '{' | grep -q '^400 {\"error\":\"malformed request: '"
ip link set macsec0 type macsec encrypt off
check "encrypt off: false again" wait_for 50 last_is false
check "encrypt off: tainted again, with the reason" \
	[ "$(taint "$D/watch")" = "$DOMAIN/unprotected encrypt-off NoSchedule" ]
check "encrypt off: the rule is back, with the reason" \
	wait_for 50 grep -q 'value: encrypt-off' "$RULE"
check "taint-rules: events create, delete, create and nothing else" \
	[ "$(rule_events)" = "create delete create" ]
check "webhook: encrypt off, the profile refuses with the reason" \
	says '409 {"error":"macsec0: RDMA egress is not hardware-MACsec protected (protection none, reason encrypt-off)"}' \
	POST /GetProfileConfig "$PROFILE_REQ"
check "webhook: the release succeeds" says '200 {}' POST /ReleaseProfileConfig "$RELEASE_REQ"
check "slice generations grew with every emission" py -c "
import json, sys
g = [json.loads(l)['spec']['pool']['generation'] for l in open('$D/watch') if l.strip()]
sys.exit(0 if g == sorted(set(g)) and len(g) >= 3 else 1)"
# A burst: every change is a notification and then a dump on the watch's
# sockets, while the next notification arrives.
ip link set macsec0 type macsec encrypt on
for _ in $(seq 20); do
	ip macsec set macsec0 tx sa 0 off
	ip macsec set macsec0 tx sa 0 on
done
ip macsec set macsec0 tx sa 0 off
check "41 back-to-back changes: the watch stream ends false" wait_for 300 last_is false
check "41 back-to-back changes: the watch is alive, its stderr empty" \
	bash -c "kill -0 $WATCH && ! test -s '$D/watch.err'"
check "41 back-to-back changes: the rule directory ends with macsec0's rule alone" \
	wait_for 300 bash -c "grep -q 'value: no-active-tx-sa' '$RULE' && [ \$(ls '$D/rules' | wc -l) -eq 1 ] && kill -0 $RULES && ! test -s '$D/rules.err'"
# A netdev that is no port changes no port and sends no notification: the
# watch follows it through rtnetlink's link messages, one set of slices
# per change that shows.
sets() { py -c "
import json
print(len({json.loads(l)['spec']['pool']['generation'] for l in open('$D/watch') if l.strip()}))"; }
# dummy_is WHAT: mbw0 in the watch's last slice: "absent" or its MTU.
dummy_is() {
	[ "$(py - "$D/watch" <<'PY'
import json, sys
last = [json.loads(l) for l in open(sys.argv[1]) if l.strip()][-1]
mtu = [d['attributes']['dra.net/mtu']['int'] for d in last['spec']['devices']
       if d['attributes']['dra.net/ifName']['string'] == 'mbw0']
print(mtu[0] if mtu else 'absent')
PY
)" = "$1" ]
}
before=$(sets)
ip link add mbw0 address 02:00:00:00:00:77 mtu 1500 type dummy
check "watch: a new netdev that is no port appears" wait_for 50 dummy_is 1500
ip link set mbw0 mtu 1400
check "watch: its MTU change shows" wait_for 50 dummy_is 1400
ip link del mbw0
check "watch: deleted, it is gone" wait_for 50 dummy_is absent
sleep 1
check "watch: three changes, three new sets of slices" [ $(($(sets) - before)) -eq 3 ]
kill "$WATCH" "$MON" "$HOOK" "$RULES" 2>/dev/null
wait 2>/dev/null

# Two nodes' slices: one published while protected, one while not.
cat >"$D/claim.yaml" <<YAML
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: rdma.dra.net}
spec:
  selectors:
  - cel: {expression: 'device.driver == "dra.net" && device.attributes["dra.net"].rdma'}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: protected-rdma}
spec:
  devices:
    requests:
    - name: nic
      exactly:
        deviceClassName: rdma.dra.net
        selectors:
        - cel: {expression: 'device.attributes["$DOMAIN"].?macsecEgress.orValue(false)'}
YAML
sed 's/"nodeName":"n1"/"nodeName":"protected"/; s/"name":"n1"/"name":"protected"/' \
	"$D/protected-last.json" >"$D/node-protected.json"
"$BIN" place --claim "$D/claim.yaml" --slices "$D/plain.json" "$D/node-protected.json" --json >"$D/place" 2>&1
rc=$?
check "place: satisfied (exit 0)" [ $rc -eq 0 ]
check "place: the protected node's macsec0 gets it" py -c "
import json, sys
p = json.load(open('$D/place'))
a = p['allocations']
sys.exit(0 if len(a) == 1 and a[0]['node'] == 'protected' and a[0]['request'] == 'nic' else 1)"
check "place: the plain node's macsec0 was rejected, with its reason" py -c "
import json, sys
p = json.load(open('$D/place'))
r = [x for x in p['rejected'] if x['node'] == 'plain' and x['device'] == 'macsec0']
sys.exit(0 if r and 'is false' in r[0]['reason'] else 1)"

# The TX SA is off: with NoExecute, the running claim on macsec0 is evicted.
"$BIN" slice --node protected --taint-effect no-execute --output json >"$D/noexec.json"
check "slice --taint-effect no-execute: macsec0 tainted NoExecute" \
	[ "$(taint "$D/noexec.json")" = "$DOMAIN/unprotected no-active-tx-sa NoExecute" ]
cat >"$D/held.yaml" <<YAML
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: held, namespace: ml}
spec:
  devices:
    requests:
    - {name: nic, exactly: {deviceClassName: rdma.dra.net}}
status:
  allocation:
    devices:
      results:
      - {request: nic, driver: dra.net, pool: protected, device: macsec0}
YAML
check "place --evict: the claim holding macsec0 is evicted at once" \
	says_evict "$D/noexec.json" "$D/held.yaml" \
	"evict ml/held (request nic, node protected device macsec0): $DOMAIN/unprotected=no-active-tx-sa:NoExecute not tolerated, at once"
rdma link del mb_rxe0
check "unload" rmmod macsec_bridge

ktap_finished
