#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The macsec-bridge family, through the kernel's own YNL CLI and the spec:
# every netdev that backs an RDMA device is a port object (dump and do),
# RDMA devices added, removed and renamed while the module runs are
# followed, a port with no SecY says `reason no-secy`, and bad requests get
# an extack, set as C families set theirs (the netlink_extack tracepoint).
set -u
. "$(dirname "$0")/lib.sh"

require_root
require_cmd ip rdma insmod rmmod
require_ko "$MODULE_KO" "module under test (MACSEC_BRIDGE_KO)"
require_ynl
require_rxe
tracefs_require

# jq-free JSON checks.
pyq() { py -c "import json,sys; d=json.load(sys.stdin); sys.exit(0 if ($1) else 1)"; }

cleanup() {
	rdma link del mb_rxe0 2>/dev/null
	rdma link del mb_rxe7 2>/dev/null
	rdma link del mb_rxe1 2>/dev/null
	ip link del mbv0 2>/dev/null
	rmmod macsec_bridge 2>/dev/null
	rm -rf "$ROW_DIR"
}
on_exit cleanup

ip link add mbv0 type veth peer name mbv1
ip link set mbv0 up
ip link set mbv1 up
rdma link add mb_rxe0 type rxe netdev mbv0
idx=$(cat /sys/class/net/mbv0/ifindex)

ktap_print_header
ktap_set_plan 11

check "load the module" insmod_bridge "$MODULE_KO"
# dump_has EXPR / do_is IFINDEX EXPR: over `d`, the dump / the reply.
dump_has() { ynl --dump dev-get | pyq "$1"; }
do_is() { ynl --do dev-get --json "{\"ifindex\": $1}" | pyq "$2"; }
check "dump lists the port that existed before loading, with its RDMA device" \
	dump_has 'any(p["ifname"] == "mbv0" and p["rdma-dev"] == ["mb_rxe0"] for p in d)'
check "a port with no SecY anywhere: protection none, reason no-secy" \
	do_is "$idx" \
		'd["protection"] == "none" and d["reason"] == "no-secy" and d["generation"] >= 1'
rxe1_added() {
	rdma link add mb_rxe1 type rxe netdev mbv1 &&
		dump_has 'any(p["ifname"] == "mbv1" for p in d)'
}
rxe1_gone() { rdma link del mb_rxe1 && dump_has 'not any(p["ifname"] == "mbv1" for p in d)'; }
check "an RDMA device added later is followed" rxe1_added
check "and so is its removal" rxe1_gone
# A rename of the RDMA device (rdma dev set ... name) changes the object:
# one notification, and the dump, name the device anew.
mon_start ren
rdma dev set mb_rxe0 name mb_rxe7
mon_stop ren
check "an RDMA device renamed: the dump names it" \
	dump_has 'any(p["ifname"] == "mbv0" and p["rdma-dev"] == ["mb_rxe7"] for p in d)'
check "and exactly one notification did, with a new generation" py -c "
import json, sys
n = [m['msg'] for m in json.load(open('$ROW_DIR/mon.ren')) if m.get('name') == 'dev-change-ntf']
sys.exit(0 if len(n) == 1 and n[0]['ifname'] == 'mbv0' and n[0]['rdma-dev'] == ['mb_rxe7'] else 1)"
rdma dev set mb_rxe7 name mb_rxe0
# The refusal's message goes through the netlink_extack tracepoint, as
# NL_SET_ERR_MSG() sends every C family's.
ev=$T/events/netlink/netlink_extack
echo >"$T/trace"
echo 1 >"$ev/enable" || bed_broken "the netlink_extack tracepoint"
ynl --do dev-get --json '{"ifindex": 999999}' >"$ROW_DIR/err" 2>&1
echo 0 >"$ev/enable"
msg='no RDMA port with this ifindex in this namespace'
check "unknown ifindex: error with an extack message" \
	grep -q "^Netlink error: $msg: No such device" "$ROW_DIR/err"
check "and the message went through the netlink_extack tracepoint" \
	grep -q "netlink_extack: msg=$msg\$" "$T/trace"
ynl --do dev-get --json '{}' >"$ROW_DIR/err" 2>&1
# As GENL_REQ_ATTR_CHECK() reports it: the missing type, no message.
check "missing ifindex: error naming the missing attribute" \
	grep -q "^Netlink error: Invalid argument {'miss-type': 'ifindex'" "$ROW_DIR/err"
check "unload" rmmod macsec_bridge

ktap_finished
