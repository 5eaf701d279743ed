#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The operator's DPU binding through DRANet-Sec: `dranet-sec bind` binds
# the host port h0 to the DPU's macsec0, naming the DPU's namespace by
# name, by path or by a pid in it, and the SecY by name or ifindex; the
# kernel's refusals come back with its extack message, verbatim; `unbind`
# undoes it.
set -u
. "$(dirname "$0")/lib.sh"

BIN=${DRANET_SEC:-}
dpu_bed veth
require_ko "$BIN" "dranet-sec binary (DRANET_SEC)"
HOLDER=
bind_cleanup() {
	[ -z "$HOLDER" ] || kill "$HOLDER" 2>/dev/null
	dpu_cleanup
}
on_exit bind_cleanup
D=$ROW_DIR
SECY=$(ip netns exec "$DPU" cat /sys/class/net/macsec0/ifindex)

# relation_is VALUE: the kernel's dump says so for h0.
relation_is() {
	"$BIN" status --json >"$D/status" &&
		[ "$(port_field "$D/status" h0 relation)" = "$1" ]
}
# out_is WANT CMD...: CMD fails with status 2 and its stderr is WANT.
refused_with() {
	local want=$1 rc
	shift
	"$@" >"$D/out" 2>"$D/err"
	rc=$?
	[ "$rc" = 2 ] && [ "$(cat "$D/err")" = "$want" ] ||
		{ echo "# rc $rc, stderr: $(cat "$D/err")"; return 1; }
}
# says WANT CMD...: CMD succeeds and its first line is WANT.
says() {
	local want=$1
	shift
	"$@" >"$D/out" 2>"$D/err" && [ "$(head -1 "$D/out")" = "$want" ] ||
		{ echo "# stdout: $(cat "$D/out") stderr: $(cat "$D/err")"; return 1; }
}

ktap_print_header
ktap_set_plan 12

check "load" insmod_bridge "$MODULE_KO"
check "RXE on h0" rdma link add mb_rxe0 type rxe netdev h0
check "bind by namespace name and SecY name" \
	says "h0 bound to macsec0 (ifindex $SECY) in network namespace $DPU" \
	"$BIN" bind --port h0 --secy macsec0 --netns "$DPU"
row_is() {
	grep -Eq "$1" "$D/out" || { echo "# got: $(cat "$D/out")"; return 1; }
}
# The SecY predates the module: never observed, so `unknown`.
check "the row shows the binding" row_is "^mb_rxe0 +h0 +none +unknown +bound +$SECY@nsid[0-9]+ "
check "the kernel agrees: relation bound" relation_is bound
check "bind again: the kernel's extack, verbatim" \
	refused_with "dranet-sec: bind: File exists (os error 17): port is already bound; unbind it first" \
	"$BIN" bind --port h0 --secy macsec0 --netns "$DPU"
check "unbind" says "h0 unbound" "$BIN" unbind --port h0
check "unbind again: not bound" \
	refused_with "dranet-sec: unbind: No such file or directory (os error 2): port is not bound" \
	"$BIN" unbind --port h0
check "bind to d0, which is no SecY" \
	refused_with "dranet-sec: bind: Invalid argument (os error 22): target is not a MACsec netdev" \
	"$BIN" bind --port h0 --secy d0 --netns "$DPU"
check "a namespace that does not exist" \
	refused_with "dranet-sec: network namespace \"nope\" (/run/netns/nope): No such file or directory (os error 2)" \
	"$BIN" bind --port h0 --secy macsec0 --netns nope
ip netns exec "$DPU" sleep 600 </dev/null >/dev/null 2>&1 &
HOLDER=$!
check "bind by a pid in the namespace and the SecY's ifindex" \
	bash -c "wait_pid() { [ \"\$(readlink /proc/$HOLDER/ns/net)\" = \"\$(ip netns exec $DPU readlink /proc/self/ns/net)\" ]; }
		$(declare -f wait_for); wait_for 50 wait_pid &&
		'$BIN' bind --port h0 --secy $SECY --netns $HOLDER >/dev/null"
"$BIN" unbind --port h0 >/dev/null
check "bind by namespace path" \
	says "h0 bound to macsec0 (ifindex $SECY) in network namespace /run/netns/$DPU" \
	"$BIN" bind --port h0 --secy macsec0 --netns "/run/netns/$DPU"

ktap_finished
