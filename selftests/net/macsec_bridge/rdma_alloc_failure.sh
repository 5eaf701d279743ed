#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Out of memory while an RDMA device appears. The RDMA core ignores a
# client whose add fails, and never calls its remove: whatever the module
# made for the device before the failure must go with it. Each of the
# last allocations of `rdma link add ... type rxe` is failed in turn
# (failslab through the task's fail-nth knob), from the last backwards,
# past the module's own. After each try the netdev may be a port only
# naming the RXE device that exists, and it must be no port once the RXE
# device is deleted.
set -u
. "$(dirname "$0")/lib.sh"

require_root
require_cmd ip rdma insmod rmmod
require_ko "$MODULE_KO" "module under test (MACSEC_BRIDGE_KO)"
failslab_require

cleanup() {
	rdma link delete mb_rf0 2>/dev/null
	ip link del mbrf0 2>/dev/null
	rmmod macsec_bridge 2>/dev/null
	rm -rf "$ROW_DIR"
}
on_exit cleanup

ktap_print_header
ktap_set_plan 3

ip link add mbrf0 type veth peer name mbrf1 || bed_broken "cannot make a veth pair"
ip link set mbrf0 up
ip link set mbrf1 up
check "load" insmod_bridge "$MODULE_KO"
sweep() {
	/usr/bin/python3 "$lib_dir/mb_genl.py" rdma-faults mbrf0 mb_rf0 >"$ROW_DIR/sweep" 2>&1
	local rc=$?
	sed 's/^/# /' "$ROW_DIR/sweep"
	return $rc
}
check "rdma link add, its last allocations failed in turn: a port only with its device" sweep
check "unload" rmmod macsec_bridge

ktap_finished
