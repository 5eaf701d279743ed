#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The torture run: torture.py draws random operations from a seed
# (MB_TORTURE_SEED, default 1; MB_TORTURE_OPS of them, from `sizes`, and
# 10,000 in `make torture` and `make check-debug`) against everything
# the module follows, and checks the contract after each. The bed: in this
# namespace a netdevsim pair (offloaded SecYs, an RXE device on the lower:
# an `upper` port), a
# veth tv0 into namespace POD (software SecYs), h0 (an RXE port bound to the
# DPU's SecY) and a dummy tw0 (flapped by a concurrent writer); in namespace
# DPU a netdevsim pair with the offloaded SecY dpu0 on tup0.
set -u
. "$(dirname "$0")/lib.sh"

SEED=${MB_TORTURE_SEED:-1}
OPS=$MB_TORTURE_OPS

bed_require
nsim_require
on_exit torture_cleanup
torture_cleanup() {
	local r
	for r in /sys/class/infiniband/tx* /sys/class/infiniband/ty* \
		/sys/class/infiniband/mb_t_*; do
		[ -e "$r" ] && rdma link del "$(basename "$r")" 2>/dev/null
	done
	for r in mst0 mst1 mst2 mst3 mst4 tvl0 tv0 h0 tw0; do
		ip link del "$r" 2>/dev/null
	done
	cleanup_ns
	nsim_del_all
	rmmod macsec_bridge 2>/dev/null
	rm -rf "$ROW_DIR"
}

setup_ns DPU POD || ns_broken DPU POD
nsim_pair || bed_broken "a linked pair of netdevsim ports"
HOST_NSIM=$NSIM_A
nsim_pair "$DPU" || bed_broken "a linked pair of netdevsim ports in the DPU namespace"
{
	ip -n "$DPU" link set "$NSIM_A" down &&
	ip -n "$DPU" link set "$NSIM_A" name tup0 &&
	ip -n "$DPU" link set tup0 up &&
	ip -n "$DPU" link add link tup0 dpu0 type macsec port 4 encrypt on offload mac &&
	ip -n "$DPU" macsec add dpu0 tx sa 0 pn 1 on key 01 "$MB_KEY" &&
	ip -n "$DPU" link set dpu0 up &&
	ip link add h0 type veth peer name d0 netns "$DPU" &&
	ip -n "$DPU" link set d0 up && ip link set h0 up &&
	ip link add tv0 type veth peer name tvp netns "$POD" &&
	ip -n "$POD" link set tvp up && ip link set tv0 up &&
	ip link add tw0 type dummy &&
	rdma link add mb_t_up type rxe netdev "$HOST_NSIM" &&
	rdma link add mb_t_h0 type rxe netdev h0
} || bed_broken "cannot build the torture bed"
dmesg_mark

ktap_print_header
ktap_set_plan 6

check "load the module" insmod_bridge "$MODULE_KO"
# torture.py reloads the module with finit_module() itself: a module
# installed compressed (a distribution's .ko.xz) goes to it decompressed,
# as insmod would hand it to the kernel.
KO=$MODULE_KO
case "$KO" in
*.xz) KO=$ROW_DIR/macsec_bridge.ko && xz -dc "$MODULE_KO" >"$KO" ;;
*.zst) KO=$ROW_DIR/macsec_bridge.ko && zstd -qdc "$MODULE_KO" >"$KO" ;;
*.gz) KO=$ROW_DIR/macsec_bridge.ko && gzip -dc "$MODULE_KO" >"$KO" ;;
esac || bed_broken "cannot decompress $MODULE_KO"
/usr/bin/python3 "$lib_dir/torture.py" "$SEED" "$OPS" "$KO" "$HOST_NSIM" tv0 h0 \
	"$DPU" "$POD" >"$ROW_DIR/torture" 2>&1
rc=$?
sed 's/^/# /' "$ROW_DIR/torture"
# field EXPR: a Python expression over the summary (d), the first JSON line.
field() { json_field "$ROW_DIR/torture" "$1"; }
ran() { [ "$rc" -eq 0 ] && [ "$(field "d['operations']")" = "$OPS" ]; }
check "seed $SEED: $OPS operations, no violation (make torture SEED=$SEED OPS=$OPS replays it)" ran
# Each kind of operation both ran through and was refused somewhere (a
# SecY that is not there, an SA that exists): both paths were exercised.
check "every kind of operation ran through at least once" \
	[ "$(field "all(d['done'].get(k, 0) > 0 for k in ('secy_add', 'secy_del', 'txsa_add',
		'txsa_del', 'txsa_upd', 'secy_set', 'offload', 'link', 'bind', 'unbind', 'move',
		'vlan', 'rxe', 'reload'))")" = True ]
check "verdicts judged from notifications before any dump; offload seen where the SecY gives it" \
	[ "$(field "d['strict_checks'] > 0 and d['offload_checks'] > 0")" = True ]
check "a concurrent writer and reader ran throughout" \
	[ "$(field "d['concurrent_flaps'] > 0 and d['concurrent_dumps'] > 0")" = True ]
dmesg_clean_since "the kernel log has no warning from the run"

ktap_finished
