#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The lockstep at scale, and that an event costs what it touches. Each of
# N veths (MB_SCALE_PORTS, from `sizes`: 1,024 in the full tier, 128 in
# `make check`; peers in another namespace) carries a software MACsec
# netdev; the veths go in pairs, each bound to the SecY on its partner (a
# SecY over the port itself carries none of the port's own traffic: bind
# refuses it): N
# ports, N SecYs, 3N netdevs. The macsec_bridge_update tracepoint says how
# many port objects each event made the module recompute: none for events
# on netdevs it does not track, for a link event on a port's SecY that
# port and the one of the SecY's real device (which could be `upper` to
# it), whatever the size; and how many slots of its hash tables it
# examined: a few per lookup, where one walk of a table would be
# thousands.
# And the rows: taking one SecY down and up announces that one port, once
# each way, with the right reason, and changes no other port. Last, a dump
# from a namespace holding one port (a veth bound to a SecY here, then
# moved there) lists that port, and its rounds examine that port alone,
# not the N here.
# The counters are the module's own word. A measure it does not report,
# the wall time of events on a dummy elsewhere with and without N ports
# bound, is `make bench`'s (a ratio of times is a benchmark's figure, not
# a test's verdict: under TCG, two measures of the same module in one
# guest have differed by as much as a walk of 128 ports adds).
set -u
. "$(dirname "$0")/lib.sh"

require_root
require_cmd ip insmod rmmod
require_ko "$MODULE_KO" "module under test (MACSEC_BRIDGE_KO)"
tracefs_require
N=$MB_SCALE_PORTS
MID=$((N / 2))
# Slots of the module's hash tables one event may examine: a lookup
# examines one or two on average at any size, an event
# makes a dozen; one walk of a table of N entries examines at least 2N.
# The size must keep a walk at twice the bound or more, or the bound would
# tell nothing: a smaller size is refused.
PROBES=64
[ "$N" -ge "$PROBES" ] ||
	bed_broken "MB_SCALE_PORTS=$N is below $PROBES: a walk would fit the slot bound"
[ $((N % 2)) -eq 0 ] || bed_broken "MB_SCALE_PORTS=$N is odd: the veths go in pairs"

cleanup() {
	local i
	for i in $(seq 0 $((N - 1))); do echo "link del mbv$i"; done |
		ip -force -batch - 2>/dev/null
	ip netns del mbpeer 2>/dev/null
	ip -n mbpod link del mbpv 2>/dev/null
	ip netns del mbpod 2>/dev/null
	[ ! -e "$T/events/macsec_bridge/enable" ] || echo 0 >"$T/events/macsec_bridge/enable"
	echo >"$T/trace" 2>/dev/null
	rmmod macsec_bridge 2>/dev/null
	rm -rf "$ROW_DIR"
}
on_exit cleanup

# verdicts DESC EXPR [DESC EXPR]...: one check per DESC, passing when its
# Python EXPR holds over `d`, scale.py's JSON (`n` is N, `mid` the port in
# the middle, `secys` each port's SecY ifindex). One Python process judges
# them all: under TCG each start costs seconds, and each would parse the
# three dumps again.
verdicts() {
	local descs=() exprs=() res i
	while [ $# -ge 2 ]; do
		descs+=("$1")
		exprs+=("$2")
		shift 2
	done
	mapfile -t res < <(py - "$ROW_DIR" "$N" "mbv$MID" "${exprs[@]}" <<'PY'
import json, sys
rows, n, mid = sys.argv[1], int(sys.argv[2]), sys.argv[3]
d, secys = json.load(open(f'{rows}/scale')), json.load(open(f'{rows}/secy.json'))
for e in sys.argv[4:]:
    try:
        # Parenthesised: an expression may span lines.
        print('holds' if eval(f'({e})') else 'false')
    except Exception as x:  # a broken expression fails its check, saying why
        print(f'error {x!r}'.replace('\n', ' '))
PY
)
	for i in "${!descs[@]}"; do
		[ "${res[$i]:-missing}" = holds ] || echo "# ${descs[$i]}: ${res[$i]:-no verdict}"
		check "${descs[$i]}" [ "${res[$i]:-missing}" = holds ]
	done
}

ktap_print_header
ktap_set_plan 17

# `ip -batch` opens the namespace file for every `netns` it reads and
# keeps it open: one per line.
ulimit -n $((N + 256))
ip netns add mbpeer
{
	for i in $(seq 0 $((N - 1))); do
		echo "link add mbv$i type veth peer name mbp$i netns mbpeer"
	done
} | ip -batch - || bed_broken "cannot make $N veth pairs"
# No IPv6 on the 3,072 netdevs: each one up would make a link-local
# address and run DAD, router solicitations and MLD on it. Under TCG that
# background work grows with the number of interfaces up and made this
# bed take most of the test's time (nothing here needs IPv6).
{
	for i in $(seq 0 $((N - 1))); do
		echo "link set mbp$i addrgenmode none"
		echo "link set mbp$i up"
	done
} | ip -n mbpeer -batch - || bed_broken "cannot set the $N peers up"
{
	for i in $(seq 0 $((N - 1))); do
		echo "link set mbv$i addrgenmode none"
		echo "link set mbv$i up"
	done
	for i in $(seq 0 $((N - 1))); do
		echo "link add link mbv$((i ^ 1)) name mbs$i type macsec port 1"
		echo "link set mbs$i addrgenmode none"
		echo "link set mbs$i up"
	done
} | ip -batch - || bed_broken "cannot make $N MACsec netdevs"

check "load" insmod_bridge "$MODULE_KO"
# In one process: under TCG, 2,048 forks of cat take minutes.
py - "$N" >"$ROW_DIR/pairs" <<'PY'
import sys
idx = lambda n: open(f'/sys/class/net/{n}/ifindex').read().split()[0]
for i in range(int(sys.argv[1])):
    print(idx(f'mbv{i}'), idx(f'mbs{i}'))
PY
check "$N veths bound, each to the MACsec netdev on its partner" \
	/usr/bin/python3 "$lib_dir/mb_genl.py" bind-pairs <"$ROW_DIR/pairs"
# ifindex of each SecY, by port, for the dump's secy-ifindex.
py - "$ROW_DIR/pairs" >"$ROW_DIR/secy.json" <<'PY'
import json, sys
print(json.dumps({f'mbv{i}': int(l.split()[1]) for i, l in enumerate(open(sys.argv[1]))}))
PY
/usr/bin/python3 "$lib_dir/scale.py" "$N" >"$ROW_DIR/scale" 2>"$ROW_DIR/scale.err" ||
	{ cat "$ROW_DIR/scale.err"; bed_broken "scale.py failed"; }

verdicts \
	"dump: $N ports, each bound to its own SecY, none protected (software: offload-off)" \
	"all(len(x) == n and all(p['relation'] == 2 and p['secy-ifindex'] == secys[k]
		and p['protection'] == 0 and p['reason'] == 9 for k, p in x.items())
		for x in [d['dumps'][0]])" \
	"events on untracked netdevs in another namespace: seen" "d['quiet']['events'] >= 20" \
	"... and none recomputed a port" "d['quiet']['visited'] == 0" \
	"... or examined more than $PROBES slots of the tables" \
	"0 < d['quiet']['probes'] <= $PROBES" \
	"... nor announced one" "d['quiet']['notes'] == []" \
	"SecY of $MID down: each event recomputed at most its port, real device's ($PROBES slots)" \
	"d['down']['events'] >= 2 and 1 <= d['down']['visited'] <= 2 and
		0 < d['down']['probes'] <= $PROBES" \
	"... one notification: mbv$MID, none, secy-down" \
	"[(x['ifname'], x['protection'], x['reason'])
	  for x in d['down']['notes']] == [(mid, 0, 4)]" \
	"... as the dump says, with that generation, every other port unchanged" \
	"d['dumps'][1][mid]['reason'] == 4 and
		d['dumps'][1][mid]['generation'] == d['down']['notes'][0]['generation'] >
		d['dumps'][0][mid]['generation'] and
		all(d['dumps'][1][k] == p for k, p in d['dumps'][0].items() if k != mid)" \
	"SecY of $MID up: each event recomputed at most its port, real device's ($PROBES slots)" \
	"d['up']['events'] >= 1 and 1 <= d['up']['visited'] <= 2 and
		0 < d['up']['probes'] <= $PROBES" \
	"... one notification: mbv$MID, none, offload-off" \
	"[(x['ifname'], x['protection'], x['reason']) for x in d['up']['notes']] == [(mid, 0, 9)]" \
	"... as the dump says, every other port unchanged" \
	"d['dumps'][2][mid]['reason'] == 9 and
		d['dumps'][2][mid]['generation'] == d['up']['notes'][0]['generation'] and
		all(d['dumps'][2][k] == p for k, p in d['dumps'][0].items() if k != mid)"


ip netns add mbpod
ip link add mbpv type veth peer name mbpp netns mbpeer
check "a veth bound to mbs0, moved to a namespace of its own" \
	eval '/usr/bin/python3 "$lib_dir/mb_genl.py" bind "$(ifindex mbs0)" "$(ifindex mbpv)" &&
	ip link set mbpv netns mbpod'
E=$T/events/macsec_bridge/macsec_bridge_update/enable
echo >"$T/trace"
echo 1 >"$E"
ip netns exec mbpod /usr/bin/python3 "$lib_dir/mb_genl.py" readers mbpv \
	"$(ifindex mbpv mbpod)" >"$ROW_DIR/pod" 2>"$ROW_DIR/pod.err"
echo 0 >"$E"
# Each round of the dump: the ports it sent (code) and examined (visited).
grep -o 'cause=dump code=[0-9]* .* visited=[0-9]*' "$T/trace" |
	sed 's/cause=dump code=\([0-9]*\) .* visited=\([0-9]*\)/\1 \2/' >"$ROW_DIR/rounds"
check "the dump there lists mbpv, bound, software: none, offload-off" \
	grep -qx "dump none/offload-off" "$ROW_DIR/pod"
check "... its rounds sent one port and examined one, of $((N + 1))" \
	[ "$(awk '{ s += $1; v += $2 } END { print s, v }' "$ROW_DIR/rounds")" = "1 1" ]
check "unload" rmmod macsec_bridge

ktap_finished
