#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The contract's order, as the kernel saw it: a teardown is retracted from
# every port before the driver is asked to make it, and a setup is
# advertised only after the driver returned success. The witnesses are in
# one trace buffer, ordered by the `counter` trace clock: the module's
# tracepoints (macsec_bridge_announce when a port's object changes, right
# before its dev-change-ntf is sent; macsec_bridge_feature when the port's
# NETIF_F_HW_MACSEC is written, or left to the deferred writer) and the
# model NIC's record of every MACsec operation it gets, as it starts and as
# it returns. No user-space timestamps.
#
# Two ports share the SecY macsec0 offloaded to the model NIC mtn0: macsec0
# itself (RXE on it, relation self) and a veth h0 bound to it (relation
# bound); the module owns both bits. Each row states the whole sequence the
# kernel recorded, so what was announced, in which order, and that nothing
# else was. Finally the monitor's notifications are exactly the traced
# announcements (name, generation, protection, reason), in order.
#
# Then RXE goes on mtn0 as well: an upper port, which never claims
# protection but lists the GIDs of macsec0 (one, for an IPv4 address) while
# the SecY protects them. Their retraction is an announcement of mtn0 before
# the driver's call, their listing one after it returned.
set -u
. "$(dirname "$0")/lib.sh"

nic_bed
tracefs_require
on_exit ordering_cleanup

ordering_cleanup() {
	[ ! -e "$T/events/macsec_bridge/enable" ] || echo 0 >"$T/events/macsec_bridge/enable"
	echo local >"$T/trace_clock" 2>/dev/null
	echo >"$T/trace" 2>/dev/null
	rdma link del mb_rxe1 2>/dev/null
	rdma link del mb_rxe2 2>/dev/null
	ip link del h0 2>/dev/null
	nic_cleanup
}

NAMES=$ROW_DIR/names
ANNOUNCED=$ROW_DIR/announced
: >"$NAMES"
: >"$ANNOUNCED"

# Remember every netdev's ifindex, so that a row's events still name a
# device that the row deleted.
# (Builtins only: three processes a netdev, twice a row, were half of
# this test's time under TCG.)
names_refresh() {
	local f i d
	for f in /sys/class/net/*/ifindex; do
		read -r i <"$f" || continue
		d=${f%/ifindex}
		echo "$i ${d##*/}"
	done >>"$NAMES"
}

# orow DESC KIND EXPECTED -- CMD: empties the trace buffer, runs CMD (which
# must succeed) and passes if the kernel recorded exactly EXPECTED.
#   KIND teardown: besides, every retraction (`none/...`, `bit-off`) comes
#     before the first driver call;
#   KIND setup: every advertisement (`offload-...`, `bit-on`) after the
#     last driver call returned 0;
#   KIND other: the sequence alone.
orow() {
	local desc=$1 kind=$2 want got rc bad=
	# The sequence may span lines, continued with a tab.
	want=${3//$'\n'/ }
	want=${want//$'\t'/}
	shift 4
	names_refresh
	echo >"$T/trace"
	eval "$*" >"$ROW_DIR/out" 2>&1
	rc=$?
	names_refresh
	cp "$T/trace" "$ROW_DIR/trace"
	got=$(py "$lib_dir/trace_seq.py" "$ROW_DIR/trace" "$NAMES" "$ANNOUNCED")
	[ $rc -eq 0 ] || bad="the command failed ($rc): $(tr '\n' ' ' <"$ROW_DIR/out")"
	[ -n "$bad" ] || [ "$got" = "$want" ] || bad="sequence differs"
	[ -n "$bad" ] || bad=$(order_violation "$kind" "$got")
	if [ -n "$bad" ]; then
		ktap_print_msg "$bad"
		ktap_print_msg "want: $want"
		ktap_print_msg " got: $got"
		ktap_test_fail "$desc"
	else
		ktap_test_pass "$desc"
	fi
}

# order_violation KIND SEQUENCE: what breaks the contract, or nothing.
# A teardown's retraction is each port's first announcement in the row
# (later ones may only update other fields of a retracted object).
order_violation() {
	local kind=$1 t i=0 first_mdo= last_ok= port
	local -a s
	local -A seen
	read -r -a s <<<"$2"
	for t in "${s[@]}"; do
		case "$t" in
		mdo_*) [ -n "$first_mdo" ] || first_mdo=$i ;;
		ret=0) last_ok=$i ;;
		esac
		i=$((i + 1))
	done
	i=0
	for t in "${s[@]}"; do
		port=${t%%:*}
		case "$kind:$t" in
		teardown:*/*)
			if [ -z "${seen[$port]:-}" ]; then
				seen[$port]=1
				case "$t" in
				*:none/*) ;;
				*) echo "$t: the first announcement is no retraction"; return ;;
				esac
				[ -z "$first_mdo" ] || [ "$i" -lt "$first_mdo" ] ||
					{ echo "$t after the driver was called"; return; }
			fi ;;
		teardown:*:bit-off*)
			[ -z "$first_mdo" ] || [ "$i" -lt "$first_mdo" ] ||
				{ echo "$t after the driver was called"; return; } ;;
		setup:*:offload-* | setup:*:bit-on*)
			# With no driver call there is nothing to wait for.
			[ -z "$first_mdo" ] || { [ -n "$last_ok" ] && [ "$i" -gt "$last_ok" ]; } ||
				{ echo "$t before the driver returned success"; return; } ;;
		esac
		case "$t" in
		*-deferred) echo "$t: the bit was not written with the announcement"; return ;;
		esac
		i=$((i + 1))
	done
}

ktap_print_header
ktap_set_plan 45

check "load" insmod_bridge "$MODULE_KO"
check "trace: counter clock, the module's events on" \
	bash -c "echo counter >$T/trace_clock && echo 1 >$T/events/macsec_bridge/enable"

orow "SecY offloaded to the model NIC, up, active TX SA: no port yet" other \
	"mdo_add_secy ret=0 mdo_dev_open ret=0 mdo_add_txsa tx:sa0 ret=0" -- \
	"ip link add link mtn0 macsec0 type macsec port 4 encrypt on offload mac &&
	 ip link set macsec0 up &&
	 ip macsec add macsec0 tx sa 0 pn 1 on key 01 $MB_KEY"
check "a monitor subscribes" mon_start all
orow "RXE on macsec0: port macsec0 advertised" setup \
	"macsec0:offload-mac/none macsec0:bit-on" -- \
	"rdma link add mb_rxe0 type rxe netdev macsec0"
orow "RXE on veth h0: a port with no SecY" other \
	"h0:none/no-secy" -- \
	"ip link add h0 type veth peer name h0p && ip link set h0p up && ip link set h0 up &&
	 rdma link add mb_rxe1 type rxe netdev h0"
orow "h0 bound to macsec0: advertised" other \
	"h0:offload-mac/none h0:bit-on" -- \
	"py $lib_dir/mb_genl.py bind $(ifindex macsec0) $(ifindex h0)"

orow "TX SA deactivated: both ports retracted before mdo_upd_txsa" teardown \
	"macsec0:none/no-active-tx-sa h0:none/no-active-tx-sa h0:bit-off macsec0:bit-off
	mdo_upd_txsa tx:none ret=0" -- \
	"ip macsec set macsec0 tx sa 0 off"
orow "TX SA activated: advertised after mdo_upd_txsa returned 0" setup \
	"mdo_upd_txsa tx:sa0 ret=0 macsec0:offload-mac/none h0:offload-mac/none h0:bit-on
	macsec0:bit-on" -- \
	"ip macsec set macsec0 tx sa 0 on"
orow "TX SA deactivated and deleted: retracted before either call" teardown \
	"macsec0:none/no-active-tx-sa h0:none/no-active-tx-sa h0:bit-off macsec0:bit-off
	mdo_upd_txsa tx:none ret=0 mdo_del_txsa ret=0" -- \
	"ip macsec set macsec0 tx sa 0 off && ip macsec del macsec0 tx sa 0"
orow "TX SA 2 added active, made the encoding SA: advertised after both calls" setup \
	"mdo_add_txsa ret=0 mdo_upd_secy tx:sa2 ret=0 macsec0:offload-mac/none
	h0:offload-mac/none h0:bit-on macsec0:bit-on" -- \
	"ip macsec add macsec0 tx sa 2 pn 1 on key 02 $MB_KEY &&
	 ip link set macsec0 type macsec encodingsa 2"
orow "encrypt off: retracted before mdo_upd_secy" teardown \
	"macsec0:none/encrypt-off h0:none/encrypt-off h0:bit-off macsec0:bit-off mdo_upd_secy
	tx:none tx:sa2 ret=0" -- \
	"ip link set macsec0 type macsec encrypt off"
orow "encrypt on: advertised after mdo_upd_secy" setup \
	"mdo_upd_secy tx:none tx:sa2 ret=0 macsec0:offload-mac/none h0:offload-mac/none
	h0:bit-on macsec0:bit-on" -- \
	"ip link set macsec0 type macsec encrypt on"
orow "protect off: retracted before mdo_upd_secy" teardown \
	"macsec0:none/protect-off h0:none/protect-off h0:bit-off macsec0:bit-off mdo_upd_secy
	tx:none tx:sa2 ret=0" -- \
	"ip link set macsec0 type macsec protect off"
orow "protect on: advertised after mdo_upd_secy" setup \
	"mdo_upd_secy tx:none tx:sa2 ret=0 macsec0:offload-mac/none h0:offload-mac/none
	h0:bit-on macsec0:bit-on" -- \
	"ip link set macsec0 type macsec protect on"
# mlx5e's mdo_upd_secy deletes every TX rule before it re-creates the
# encoding SA's, even when nothing changes: retracted before it, and
# advertised again only after it returned 0. Failing between leaves the
# NIC with no rule: never advertised again until an update succeeds.
orow "encrypt on again (no change): retracted while mdo_upd_secy re-creates the rule" other \
	"macsec0:none/unsettled h0:none/unsettled h0:bit-off macsec0:bit-off mdo_upd_secy
	tx:none tx:sa2 ret=0 macsec0:offload-mac/none h0:offload-mac/none h0:bit-on
	macsec0:bit-on" -- \
	"ip link set macsec0 type macsec encrypt on"
orow "the same, the NIC failing between: retracted before, never restored" teardown \
	"macsec0:none/unsettled h0:none/unsettled h0:bit-off macsec0:bit-off mdo_upd_secy
	tx:none ret=-5" -- \
	"ip link set mtn0 alias fail:mdo_upd_secy && ! ip link set macsec0 type macsec encrypt on &&
	 ip link set mtn0 alias ''"
orow "an SA added: the NIC still has no rule, nothing advertised" other \
	"mdo_add_txsa ret=0" -- \
	"ip macsec add macsec0 tx sa 3 pn 1 off key 03 $MB_KEY"
orow "the SA deleted; the update again, succeeding: advertised after the NIC re-created the rule" \
	setup \
	"mdo_del_txsa ret=0 mdo_upd_secy tx:sa2 ret=0 macsec0:offload-mac/none
	h0:offload-mac/none h0:bit-on macsec0:bit-on" -- \
	"ip macsec del macsec0 tx sa 3 && ip link set macsec0 type macsec encrypt on"
orow "SecY down: retracted before mdo_dev_stop" teardown \
	"macsec0:none/secy-down h0:none/secy-down h0:bit-off macsec0:bit-off mdo_dev_stop
	ret=0" -- \
	"ip link set macsec0 down"
orow "SecY up: advertised after mdo_dev_open" setup \
	"mdo_dev_open ret=0 macsec0:offload-mac/none h0:offload-mac/none h0:bit-on
	macsec0:bit-on" -- \
	"ip link set macsec0 up"
orow "lower down: retracted; the driver is not called" teardown \
	"macsec0:none/lower-down h0:none/lower-down h0:bit-off macsec0:bit-off" -- \
	"ip link set mtn0 down"
orow "lower up: advertised" setup \
	"macsec0:offload-mac/none h0:offload-mac/none h0:bit-on macsec0:bit-on" -- \
	"ip link set mtn0 up"
orow "SecY down, its SA deleted, offload off: retracted before any call" teardown \
	"macsec0:none/secy-down h0:none/secy-down h0:bit-off macsec0:bit-off mdo_dev_stop
	ret=0 mdo_upd_txsa tx:none ret=0 mdo_del_txsa ret=0 macsec0:none/secy-down
	h0:none/secy-down mdo_del_secy ret=0" -- \
	"ip link set macsec0 down && ip macsec set macsec0 tx sa 2 off &&
	 ip macsec del macsec0 tx sa 2 && ip macsec offload macsec0 off"
orow "offload on, SA added, SecY up: advertised after the last call" setup \
	"mdo_add_secy ret=0 macsec0:none/secy-down h0:none/secy-down mdo_add_txsa tx:sa2 ret=0
	mdo_dev_open ret=0 macsec0:offload-mac/none h0:offload-mac/none h0:bit-on
	macsec0:bit-on" -- \
	"ip macsec offload macsec0 mac && ip macsec add macsec0 tx sa 2 pn 1 on key 02 $MB_KEY &&
	 ip link set macsec0 up"
orow "RXE on macsec0 deleted: port macsec0 retracted and gone; the driver is not called" teardown \
	"macsec0:none/unknown macsec0:bit-off" -- \
	"rdma link del mb_rxe0"
orow "SecY deleted: h0 retracted before mdo_del_secy and mdo_dev_stop" teardown \
	"h0:none/offload-off h0:bit-off mdo_del_secy tx:none ret=0 mdo_dev_stop ret=0
	h0:none/secy-down h0:none/binding-stale" -- \
	"ip link del macsec0"
orow "RXE on h0 deleted: h0 stays a port (it is bound), its rdma-dev list empties" other \
	"h0:none/binding-stale" -- \
	"rdma link del mb_rxe1"
orow "RXE on h0 again" other \
	"h0:none/binding-stale" -- \
	"rdma link add mb_rxe1 type rxe netdev h0"
orow "a new offloaded SecY, h0 unbound and bound to it: advertised after the driver set it up" \
	setup \
	"mdo_add_secy ret=0 mdo_dev_open ret=0 mdo_add_txsa tx:sa0 ret=0 h0:none/no-secy
	h0:offload-mac/none h0:bit-on" -- \
	"ip link add link mtn0 macsec0 type macsec port 4 encrypt on offload mac &&
	 ip link set macsec0 up && ip macsec add macsec0 tx sa 0 pn 1 on key 01 $MB_KEY &&
	 ynl --do unbind --json '{\"ifindex\": '$(ifindex h0)'}' &&
	 py $lib_dir/mb_genl.py bind \$(</sys/class/net/macsec0/ifindex) $(ifindex h0)"
# gids_of: port mtn0's protected GIDs in a dump, as `RDMA-DEV INDEX GID`.
# (A dump takes a second or two here: the rows wait 40 of them at most.)
gids_of() {
	ynl --dump dev-get | py -c '
import json, sys
for p in json.load(sys.stdin):
    if p.get("ifname") == "mtn0":
        for g in p.get("protected-gid", []):
            print(g.get("rdma-dev"), g.get("index"), g.get("gid"))'
}
gids_listed() {
	[ "$(gids_of | wc -l)" -eq "$1" ]
}
# sysfs_gids DEV NETDEV: the GIDs of DEV's port 1 whose netdev is NETDEV,
# from sysfs, as gids_of prints them.
sysfs_gids() {
	py - "$1" "$2" <<'PY'
import os, sys
dev, ndev = sys.argv[1:3]
base = f'/sys/class/infiniband/{dev}/ports/1'
for i in sorted(map(int, os.listdir(f'{base}/gid_attrs/ndevs'))):
    try:
        with open(f'{base}/gid_attrs/ndevs/{i}') as f:
            if f.read().strip() != ndev:
                continue
    except OSError:  # an empty entry
        continue
    with open(f'{base}/gids/{i}') as f:
        print(dev, i, f.read().strip())
PY
}

# No IPv6 link-local address on macsec0: its GIDs are the ones a row adds.
orow "RXE on the model NIC: an upper port, partial; macsec0 has no address, so no GID" other \
	"mtn0:none/partial" -- \
	"sysctl -qw net.ipv6.conf.macsec0.addr_gen_mode=1 && ip -6 addr flush dev macsec0 &&
	 rdma link add mb_rxe2 type rxe netdev mtn0 && gids_listed 0"
orow "an IPv4 address on macsec0: its GID listed, once the RDMA core has it" other \
	"mtn0:none/partial" -- \
	"ip addr add 192.0.2.1/24 dev macsec0 && wait_for 40 gids_listed 1"
gid_is_sysfs() {
	[ "$(gids_of)" = "$(sysfs_gids mb_rxe2 macsec0)" ] &&
		gids_of | grep -qx "mb_rxe2 [0-9]* 0000:0000:0000:0000:0000:ffff:c000:0201"
}
check "the GID listed is macsec0's in sysfs, its IPv4-mapped address" gid_is_sysfs
orow "TX SA deactivated: the GID unlisted before mdo_upd_txsa" teardown \
	"h0:none/no-active-tx-sa mtn0:none/partial h0:bit-off mdo_upd_txsa tx:none ret=0
	mtn0:none/no-active-tx-sa" -- \
	"ip macsec set macsec0 tx sa 0 off"
orow "TX SA activated: the GID listed after mdo_upd_txsa returned 0" setup \
	"mdo_upd_txsa tx:sa0 ret=0 h0:offload-mac/none mtn0:none/partial h0:bit-on" -- \
	"ip macsec set macsec0 tx sa 0 on && gids_listed 1"
orow "the address deleted: the GID unlisted" other \
	"mtn0:none/partial" -- \
	"ip addr del 192.0.2.1/24 dev macsec0 && wait_for 40 gids_listed 0"
# mlx5 protects only the GIDs its add_gid saw while the SecY was offloaded:
# an address made while it was not keeps its GID entry when offload comes
# on (offload changes only while the SecY is down), and is never listed.
orow "SecY down, its SA deactivated and deleted, offload off: mtn0 secy-down after the driver" \
	other \
	"h0:none/secy-down h0:bit-off mdo_dev_stop ret=0 mtn0:none/secy-down mdo_upd_txsa
	tx:none ret=0 mdo_del_txsa ret=0 h0:none/secy-down mtn0:none/secy-down mdo_del_secy
	ret=0" -- \
	"ip link set macsec0 down && ip macsec set macsec0 tx sa 0 off &&
	 ip macsec del macsec0 tx sa 0 && ip macsec offload macsec0 off"
in_table() {
	[ "$(sysfs_gids mb_rxe2 macsec0 | wc -l)" -eq "$1" ]
}
orow "an address, not offloaded, then offload, SA, up: its GID, made before offload, unlisted" \
	other \
	"mdo_add_secy ret=0 h0:none/secy-down mtn0:none/secy-down mdo_add_txsa tx:sa0 ret=0
	mdo_dev_open ret=0 h0:offload-mac/none mtn0:none/partial h0:bit-on" -- \
	"ip addr add 192.0.2.1/24 dev macsec0 && wait_for 40 in_table 1 &&
	 ip macsec offload macsec0 mac && ip macsec add macsec0 tx sa 0 pn 1 on key 01 $MB_KEY &&
	 ip link set macsec0 up && gids_listed 0"
orow "another address, made while offloaded: its GID is listed" other \
	"mtn0:none/partial" -- \
	"ip addr del 192.0.2.1/24 dev macsec0 && ip addr add 192.0.2.2/24 dev macsec0 &&
	 wait_for 40 gids_listed 1 && gids_of | grep -q ' 0000:0000:0000:0000:0000:ffff:c000:0202$'"
orow "RXE on the model NIC deleted: port mtn0 gone; the driver is not called" other \
	"mtn0:none/unknown" -- \
	"rdma link del mb_rxe2"
orow "the model NIC removed: h0 retracted before mdo_del_secy" teardown \
	"h0:none/lower-down h0:bit-off h0:none/lower-down mdo_del_secy tx:none ret=0
	mdo_dev_stop ret=0 h0:none/secy-down h0:none/binding-stale" -- \
	"ip link set mtn0 alias '' && rmmod macsec_test_nic"

mon_stop all
# The monitor's notifications, as NAME GENERATION PROTECTION REASON.
ntf_lines() {
	py - "$ROW_DIR/mon.all" <<'PY'
import json, sys
for n in json.load(open(sys.argv[1])):
    if n.get('name') != 'dev-change-ntf':
        continue
    m = n['msg']
    print(m['ifname'], m['generation'], m['protection'], m.get('reason', 'none'))
PY
}
check "every traced announcement was notified, in order, and nothing else" \
	diff -u "$ANNOUNCED" <(ntf_lines)
# Every field follows the announcement: a retraction's object never says
# why it is unprotected and, at once, claims what that reason denies.
self_consistent() {
	py - "$ROW_DIR/mon.all" <<'PY'
import json, sys
bad = 0
for n in json.load(open(sys.argv[1])):
    m = n.get('msg', {})
    if n.get('name') != 'dev-change-ntf':
        continue
    r = m.get('reason')
    if (r == 'encrypt-off' and m.get('encrypt') != 0) or \
       (r == 'offload-off' and 'encrypt' in m):
        print(f"# {m['ifname']} generation {m['generation']}: reason {r},",
              f"encrypt {m.get('encrypt')}")
        bad += 1
sys.exit(1 if bad else 0)
PY
}
check "no notification contradicts itself (encrypt-off with encrypt 1, offload-off with encrypt)" \
	self_consistent
# mtn0's notifications, as REASON:GIDS (how many it lists).
upper_gids() {
	py - "$ROW_DIR/mon.all" <<'PY'
import json, sys
print(' '.join(f"{n['msg'].get('reason')}:{len(n['msg'].get('protected-gid', []))}"
               for n in json.load(open(sys.argv[1]))
               if n.get('name') == 'dev-change-ntf' and n['msg'].get('ifname') == 'mtn0'))
PY
}
want_gids="partial:0 partial:1 partial:0 no-active-tx-sa:0 partial:1 partial:0"
want_gids+=" secy-down:0 secy-down:0 secy-down:0 partial:0 partial:1 unknown:0"
check "the upper port listed the GID exactly while the SecY protected it" \
	[ "$(upper_gids)" = "$want_gids" ]
check "unload" rmmod macsec_bridge

ktap_finished
