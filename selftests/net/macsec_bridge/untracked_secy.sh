#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# An offload operation on a SecY the module could not track (no memory when
# the SecY appeared) must not hold its ports down after it ran. macsec.c
# calls the module before and after the driver; before() holds every port
# bound to the SecY at what the operation leads to, and after() must let go
# of them even though it learns nothing of an untracked SecY. h0 (with RXE,
# so that it stays tracked when unbound) is bound to such a SecY, the
# operation runs, and h0 is bound to a SecY that protects: it must say
# offload-mac. The untracked SecY is made by failing the allocations of its
# creation one at a time, from the last backwards (failslab through the
# task's fail-nth knob), until one is the module's.
set -u
. "$(dirname "$0")/lib.sh"

dpu_bed veth
[ -d /sys/kernel/debug/failslab ] && [ -e /proc/self/fail-nth ] ||
	ktap_exit_fail_msg "no failslab or fail-nth: the kernel lacks CONFIG_FAILSLAB or" \
		"CONFIG_FAULT_INJECTION_DEBUG_FS"

ktap_print_header
ktap_set_plan 5

sweep() {
	/usr/bin/python3 "$lib_dir/mb_genl.py" secy-faults "/run/netns/$DPU" "$UPLINK" h0 \
		"$(ifindex macsec0 "$DPU")" >"$ROW_DIR/sweep" 2>&1
	local rc=$?
	sed 's/^/# /' "$ROW_DIR/sweep"
	return $rc
}

check "load" insmod_bridge "$MODULE_KO"
check "RXE on h0" rdma link add mb_rxe0 type rxe netdev h0
# The SecY predates the module: a change of nothing hands its driver the
# whole SecY, which the module sees (until then it says unsettled).
check "DPU: an active TX SA on its offloaded SecY macsec0, settled by an update" \
	bash -c "ip -n $DPU macsec add macsec0 tx sa 0 pn 1 on key 01 $MB_KEY &&
		ip -n $DPU link set macsec0 type macsec encrypt on"
check "an operation on an untracked SecY holds h0 down no longer than it runs" sweep
check "unload" rmmod macsec_bridge

ktap_finished
