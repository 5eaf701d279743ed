#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Reload under load: the module is unloaded and loaded again
# (MB_RELOAD_CYCLES times, from `sizes`: 100 in the full tier), while
# RDMA traffic runs between two pods through software MACsec, the DPU's
# keys are changed as MKA changes them
# (the next TX SA added and made the encoding SA, the old one deleted:
# that settles the driver after each load), and a process binds, unbinds
# and dumps without pause. Every unload clears the
# feature bit the module set; after every load the host's port is tracked
# again and every generation is above all that came before; nothing leaks
# (kmemleak), no netdev reference is left behind (the netdevs can be
# deleted), and the kernel log stays clean.
set -u
. "$(dirname "$0")/lib.sh"

CYCLES=$MB_RELOAD_CYCLES
KEY_A=0123456789abcdef0123456789abcdef
KEY_B=fedcba9876543210fedcba9876543210
GENL="/usr/bin/python3 $lib_dir/mb_genl.py"

dpu_bed veth
require_pod_rxe
require_cmd rping
PIDS=()
on_exit reload_cleanup
reload_cleanup() {
	touch "$ROW_DIR/stop"
	kill "${SRV:-}" "${PIDS[@]}" 2>/dev/null
	wait 2>/dev/null
	ip netns exec "${pa:-none}" rdma link del mb_rl_rxea 2>/dev/null
	ip netns exec "${pb:-none}" rdma link del mb_rl_rxeb 2>/dev/null
	dpu_cleanup
}

setup_ns pa pb || ns_broken pa pb
ip link add va netns "$pa" type veth peer name vb netns "$pb" &&
	sw_macsec_pod "$pa" va maca 10.1.0.1 "$KEY_A" \
		"$(ip netns exec "$pb" cat /sys/class/net/vb/address)" "$KEY_B" &&
	sw_macsec_pod "$pb" vb macb 10.1.0.2 "$KEY_B" \
		"$(ip netns exec "$pa" cat /sys/class/net/va/address)" "$KEY_A" &&
	ip netns exec "$pa" rdma link add mb_rl_rxea type rxe netdev maca &&
	ip netns exec "$pb" rdma link add mb_rl_rxeb type rxe netdev macb &&
	rdma link add mb_rxe0 type rxe netdev h0 &&
	ip -n "$DPU" macsec add macsec0 tx sa 0 pn 1 on key 01 "$MB_KEY" ||
	bed_broken "cannot build the pods and the DPU"

kml=/sys/kernel/debug/kmemleak
[ -e "$kml" ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null
# What was reported before this test is not this test's.
[ -w "$kml" ] && echo clear > "$kml"
dmesg_mark

ktap_print_header
ktap_set_plan 11

check "load the module" insmod_bridge "$MODULE_KO"

# The load: a persistent rping server in pod B and clients from pod A, one
# after another; the DPU's TX SA off and on; binds, unbinds and dumps.
PIDS=()
ip netns exec "$pb" rping -s -P -a 10.1.0.2 >/dev/null 2>&1 &
SRV=$!
(
	ok=0 failed=0
	while [ ! -e "$ROW_DIR/stop" ]; do
		if ip netns exec "$pa" timeout 30 rping -c -a 10.1.0.2 -C 20 >/dev/null 2>&1; then
			ok=$((ok + 1))
		else
			failed=$((failed + 1))
			nap 0.2
		fi
	done
	echo "$ok $failed" > "$ROW_DIR/rping"
) &
PIDS+=($!)
(
	# Key changes, as MKA makes them: the next SA added, made the
	# encoding SA, the old one deactivated and deleted (one process each:
	# under TCG a process costs more than the change).
	n=0 a=0
	while [ ! -e "$ROW_DIR/stop" ]; do
		b=$((1 - a))
		printf '%s\n' "macsec add macsec0 tx sa $b pn 1 on key 0$((b + 1)) $MB_KEY" \
			"link set macsec0 type macsec encodingsa $b" \
			"macsec set macsec0 tx sa $a off" "macsec del macsec0 tx sa $a" |
			ip -n "$DPU" -batch - || break
		n=$((n + 1)) a=$b
	done
	echo "$n" > "$ROW_DIR/flips"
) &
PIDS+=($!)
$GENL churn "/run/netns/$DPU" "$(ifindex macsec0 "$DPU")" h0 "$ROW_DIR/stop" \
	>"$ROW_DIR/churn" 2>&1 &
PIDS+=($!)

$GENL reload "$MODULE_KO" "$CYCLES" h0 >"$ROW_DIR/reload" 2>&1
rc=$?
touch "$ROW_DIR/stop"
wait "${PIDS[@]}"
kill "$SRV" 2>/dev/null
wait "$SRV" 2>/dev/null
SRV=

sed 's/^/# reload: /' "$ROW_DIR/reload"
sed 's/^/# churn: /' "$ROW_DIR/churn"
echo "# rping runs (ok, failed): $(cat "$ROW_DIR/rping" 2>/dev/null)"
echo "# key changes: $(cat "$ROW_DIR/flips" 2>/dev/null)"

reloaded() {
	[ "$rc" -eq 0 ] && [ "$(json_field "$ROW_DIR/reload" "d['cycles']")" = "$CYCLES" ]
}
check "$CYCLES reloads: h0 cleared at each unload, tracked after each load, generations grow" \
	reloaded
check "some unloads found h0's bit set (the clearing was exercised)" \
	[ "$(json_field "$ROW_DIR/reload" "d['bit_set_at_unload']")" -gt 0 ]
check "binds, unbinds and dumps went through between the reloads" \
	[ "$(json_field "$ROW_DIR/churn" "min(d['done'].values())")" -gt 0 ]
check "RDMA traffic ran between the pods throughout" \
	[ "$(cut -d' ' -f1 "$ROW_DIR/rping" 2>/dev/null || echo 0)" -gt 0 ]
check "the keys were changed throughout" [ "$(cat "$ROW_DIR/flips" 2>/dev/null || echo 0)" -gt 0 ]

# After all that, the module still follows the SecY.
follows() {
	dpu_unbind h0 >/dev/null 2>&1
	dpu_bind h0 >/dev/null &&
		ip -n "$DPU" macsec add macsec0 tx sa 2 pn 1 on key 03 "$MB_KEY" &&
		ip -n "$DPU" link set macsec0 type macsec encodingsa 2 &&
		wait_for 50 [ "$(hw_macsec h0)" = on ] &&
		ip -n "$DPU" macsec set macsec0 tx sa 2 off &&
		wait_for 50 [ "$(hw_macsec h0)" = off ]
}
check "after the last load, h0 follows the DPU's SecY" follows

# rping -s listens once its id is bound; until then a client is refused at
# once: bounded tries for a minute.
last_rping() {
	local end=$((SECONDS + 60))
	ip netns exec "$pb" timeout 90 rping -s -a 10.1.0.2 -C 5 >/dev/null 2>&1 &
	SRV=$!
	until ip netns exec "$pa" timeout 20 rping -c -a 10.1.0.2 -C 5 >/dev/null 2>&1; do
		[ "$SECONDS" -lt "$end" ] || return 1
		nap 0.5
	done
	wait "$SRV" && SRV=
}
check "a last rping between the pods" last_rping

# Every netdev the module saw can go: a reference left behind would hold
# `ip link del` in netdev_wait_allrefs() and print "waiting for".
gone() {
	rmmod macsec_bridge &&
		ip -n "$DPU" link del macsec0 &&
		rdma link del mb_rxe0 && timeout 120 ip link del h0 &&
		ip netns exec "$pa" rdma link del mb_rl_rxea &&
		ip netns exec "$pb" rdma link del mb_rl_rxeb &&
		timeout 120 ip -n "$pa" link del maca &&
		timeout 120 ip -n "$pb" link del macb
}
check "unload, then every netdev deletes (no reference left)" gone
if [ -w "$kml" ]; then
	echo scan > "$kml"
	sleep 6
	echo scan > "$kml"
	leaks=$(grep -c '^unreferenced object' "$kml")
	[ "$leaks" -eq 0 ] || head -40 "$kml" | sed 's/^/# /'
	check "kmemleak: nothing unreferenced after $CYCLES reloads (found $leaks)" \
		[ "$leaks" -eq 0 ]
else
	check "kmemleak is there to ask" false
fi
dmesg_clean_since "the kernel log has no warning from this test"

ktap_finished
