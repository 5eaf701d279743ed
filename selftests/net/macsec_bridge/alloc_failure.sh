#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Out of memory. Each allocation of a request is failed in turn (failslab
# through the task's fail-nth knob), and whatever the request returns, the
# port must be left as that result says: bound with its feature bit set,
# or untracked with the bit clear. The bit is the module's (h0 is the host
# end of a veth pair, bound to the DPU's offloaded SecY with an active TX
# SA), so a feature write lost to a failed allocation shows as a bit left
# set: after an unbind, permanently after an unload. Unload cannot fail;
# each of its allocations is failed in turn too. A monitor listener
# follows bind and unbind: every try that changed the port reaches it as
# a notification or as ENOBUFS (a notification the module could not
# allocate), and some try must end with ENOBUFS.
set -u
. "$(dirname "$0")/lib.sh"

dpu_bed veth
failslab_require

ktap_print_header
ktap_set_plan 6

sweep() {
	/usr/bin/python3 "$lib_dir/mb_genl.py" faults "$1" "/run/netns/$DPU" \
		"$(ifindex macsec0 "$DPU")" h0 "$MODULE_KO" >"$ROW_DIR/$1" 2>&1
	local rc=$?
	sed 's/^/# /' "$ROW_DIR/$1"
	return $rc
}

check "load" insmod_bridge "$MODULE_KO"
# The SecY predates the module: a change of nothing hands its driver the
# whole SecY, which the module sees (until then it says unsettled).
check "DPU: an active TX SA on its offloaded SecY, settled by an update" \
	bash -c "ip -n $DPU macsec add macsec0 tx sa 0 pn 1 on key 01 $MB_KEY &&
		ip -n $DPU link set macsec0 type macsec encrypt on"
check "bind, each allocation failed in turn: bound and set, or neither; the monitor told" \
	sweep bind
check "unbind, each allocation failed in turn: unbound and clear, or neither; the monitor told" \
	sweep unbind
check "unload, each allocation failed in turn: gone, the bit cleared" sweep unload
unloaded_clean() { [ ! -d /sys/module/macsec_bridge ] && [ "$(hw_macsec h0)" = off ]; }
check "after the last unload: no module, h0's bit clear" unloaded_clean

ktap_finished
