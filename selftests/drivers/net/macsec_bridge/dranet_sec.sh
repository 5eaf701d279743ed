#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# DRANet-Sec, the real binary against the real module: a port whose SecY
# has no active TX SA publishes macsecEgress false; an active TX SA makes
# it true in the `slice --watch` stream, `monitor` and the webhook; tearing
# it down makes it false again; and `place` picks the node whose slice
# says protected.
set -u
. "$(dirname "$0")/lib.sh"

BIN=${DRANET_SEC:-}
lockstep_bed
require_ko "$BIN" "dranet-sec binary (DRANET_SEC)"
require_cmd curl
A=$NSIM_A
D=$ROW_DIR
DOMAIN=macsec.dranet-sec.io

# egress FILE: macsecEgress of macsec0 in the last slice of FILE (JSON
# lines or one JSON document).
egress() {
	/usr/bin/python3 - "$1" "$DOMAIN" <<'PY'
import json, sys
text = open(sys.argv[1]).read().strip()
try:
    docs = [json.loads(text)]
except ValueError:
    docs = [json.loads(l) for l in text.splitlines() if l.strip()]
for s in docs[-1:]:
    for d in s['spec']['devices']:
        if d['attributes'].get('dra.net/ifName', {}).get('string') == 'macsec0':
            print(str(d['attributes'][sys.argv[2] + '/macsecEgress']['bool']).lower())
PY
}
# watch_says VALUE: the watch stream's last slice says so (within 5 s).
last_is() { [ "$(egress "$D/watch")" = "$1" ]; }

ktap_print_header
ktap_set_plan 17

check "load" insmod_bridge "$MODULE_KO"
# After the load: a SecY offloaded before it would be `unknown`.
ip link add link "$A" macsec0 type macsec port 4 encrypt on offload mac
ip link set macsec0 up
check "RXE on macsec0" rdma link add mb_rxe0 type rxe netdev macsec0
check "status lists the port: none, no-active-tx-sa" \
	bash -c "'$BIN' status | grep -E '^mb_rxe0 +macsec0 +none +no-active-tx-sa +self'"
"$BIN" slice --node plain --output json >"$D/plain.json"
check "slice: macsecEgress false" [ "$(egress "$D/plain.json")" = false ]
check "slice: DRANet's rdma attributes" \
	grep -q '"dra.net/rdmaDevice":{"string":"mb_rxe0"}' <(tr -d ' \n' <"$D/plain.json")

"$BIN" slice --node n1 --output json --watch >"$D/watch" 2>"$D/watch.err" &
WATCH=$!
"$BIN" monitor --json >"$D/monitor" 2>&1 &
MON=$!
"$BIN" webhook --socket "$D/webhook.sock" >"$D/webhook.log" 2>&1 &
HOOK=$!
wait_for 50 test -s "$D/watch"
wait_for 50 test -S "$D/webhook.sock"
# The monitor joins its group before anything changes.
wait_for 50 wait_subscribed "$MON"
ip macsec add macsec0 tx sa 0 pn 1 on key 01 $MB_KEY
check "active TX SA: the watch stream says macsecEgress true" wait_for 50 last_is true
cp "$D/watch" "$D/protected.json"
tail -1 "$D/protected.json" >"$D/protected-last.json"
check "monitor: one line per change, the last offload-mac" \
	wait_for 50 bash -c "tail -1 '$D/monitor' | grep -q '\"protection\":\"offload-mac\"'"
hook() {
	curl -s --unix-socket "$D/webhook.sock" -X POST -H 'Content-Type: application/json' \
		-d "$1" http://localhost/GetDeviceAttributes
}
check "webhook: DRANet's query for macsec0 gets macsecEgress true" \
	bash -c "$(declare -f hook); D=$D; hook '{\"name\":\"macsec0\"}' | grep -q '\"$DOMAIN/macsecEgress\":{\"bool\":true}'"
check "webhook: a malformed body gets 400 and a message" \
	bash -c "curl -s -o /dev/null -w '%{http_code}' --unix-socket '$D/webhook.sock' -X POST -d '{' http://localhost/GetDeviceAttributes | grep -qx 400"
ip link set macsec0 type macsec encrypt off
check "encrypt off: false again" wait_for 50 last_is false
check "slice generations grew with every emission" /usr/bin/python3 -c "
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
kill "$WATCH" "$MON" "$HOOK" 2>/dev/null
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
check "place: the protected node's macsec0 gets it" /usr/bin/python3 -c "
import json, sys
p = json.load(open('$D/place'))
a = p['allocations']
sys.exit(0 if len(a) == 1 and a[0]['node'] == 'protected' and a[0]['request'] == 'nic' else 1)"
check "place: the plain node's macsec0 was rejected, with its reason" /usr/bin/python3 -c "
import json, sys
p = json.load(open('$D/place'))
r = [x for x in p['rejected'] if x['node'] == 'plain' and x['device'] == 'macsec0']
sys.exit(0 if r and 'is false' in r[0]['reason'] else 1)"
rdma link del mb_rxe0
check "unload" rmmod macsec_bridge

ktap_finished
