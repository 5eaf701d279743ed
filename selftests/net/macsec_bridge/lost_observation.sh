#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A device whose offload operations the module can no longer observe: the
# SecYs over it claim nothing (reason unknown) until it is observed again,
# and then only once an update settles their driver. That can happen only
# where the module interposes each device's macsec_ops (a kernel without
# the MACsec core's offload notifier); with the notifier, the same faults
# must never reach the module, and h0 must stay protected through them
# all. Which path the module must take is the kernel's to say (whether it
# has the notifier, offload_path); the module's load line must agree. The
# model NIC mtn0
# carries a VLAN, mv0, and on it the offloaded SecY macsec0 (the VLAN
# forwards macsec0's operations to mtn0's macsec_ops, where the module
# observes them); h0 is bound to macsec0 and says offload-mac. mtn0 moves
# to another network namespace and back, mv0 and macsec0 staying, with the
# allocations of the move failed one at a time from the last backwards
# (failslab through the task's fail-nth knob) until one is the module's
# interposer at mtn0's REGISTER there, which the kernel log reports. From
# then on macsec0's operations would reach the driver unseen: h0 must say
# none, reason unknown, with mtn0 up there; still unknown once mtn0 is
# back and observed again; offload-mac only after a key change settles
# the driver. Every fault that missed the module must leave h0
# offload-mac.
set -u
. "$(dirname "$0")/lib.sh"

nic_bed
if [ ! -d /sys/kernel/debug/failslab ] || [ ! -e /proc/self/fail-nth ]; then
	ktap_skip_all "the kernel has no failslab or fail-nth (CONFIG_FAILSLAB," \
		"CONFIG_FAULT_INJECTION_DEBUG_FS)"
	exit "$KSFT_SKIP"
fi
setup_ns LOST || ns_broken LOST
lost_cleanup() {
	ip -n "$LOST" link set mtn0 netns 1 2>/dev/null
	ip link del h0 2>/dev/null
	ip link del macsec0 2>/dev/null
	ip link del mv0 2>/dev/null
	cleanup_ns
	nic_cleanup
}
on_exit lost_cleanup

path=$(offload_path)
ktap_print_header
ktap_set_plan 5

dmesg_mark
check "load" insmod_bridge "$MODULE_KO"
said=$(dmesg_since | grep -o 'macsec_bridge: loaded: .*' | tail -1)
case "$said" in
*"offload seen through interposed macsec_ops") said=interposer ;;
*"offload seen through the MACsec offload notifier") said=notifier ;;
esac
check "the module's load line names the kernel's path, $path (it says: $said)" \
	[ "$said" = "$path" ]
bed() {
	ip link add link mtn0 name mv0 type vlan id 100 && ip link set mv0 up &&
		ip link add link mv0 macsec0 type macsec port 4 encrypt on offload mac &&
		ip link set macsec0 up &&
		ip macsec add macsec0 tx sa 0 pn 1 on key 01 "$MB_KEY" &&
		ip link add h0 type veth peer name h0p && ip link set h0 up &&
		ynl --do bind \
			--json "{\"ifindex\": $(ifindex h0),
				 \"secy-ifindex\": $(ifindex macsec0)}" \
			>/dev/null &&
		[ "$(port_field <(ynl --dump dev-get) h0 protection)" = offload-mac ]
}
check "h0 bound to macsec0, on a VLAN over the model NIC: offload-mac" bed
sweep() {
	/usr/bin/python3 "$lib_dir/mb_genl.py" lower-faults "/run/netns/$LOST" mtn0 h0 macsec0 \
		"$path" >"$ROW_DIR/sweep" 2>&1
	local rc=$?
	sed 's/^/# /' "$ROW_DIR/sweep"
	return $rc
}
if [ "$path" = interposer ]; then
	check "the moved NIC not observed: h0 unknown, then unknown until a key change settles it" \
		sweep
else
	check "offload notifier: no fault of the NIC's move reaches the module, h0 offload-mac" \
		sweep
fi
check "unload" rmmod macsec_bridge

ktap_finished
