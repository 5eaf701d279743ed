#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The module's references on netdevs are tracked (netdev_hold()): each
# shows in the device's reference tracker (debugfs ref_tracker/netdev@...)
# with a stack in macsec_bridge, for exactly as long as the module keeps
# what it holds the device for. A device whose unregistration waits for
# the module's references then names the module as their holder.
#
# The DPU's SecY macsec0 (offloaded, on netdevsim port UPLINK) and the
# host's port h0 (a dummy, with no RDMA device: tracked only while bound).
# The module holds:
#   - a SecY and its real device, once each (its record of the SecY);
#   - a port, once (its record of the port);
#   - a bound port's SecY twice more: the binding, and the port's SecY.
# So at load macsec0 1, UPLINK 1, h0 0; bound: 3, 1, 1; unbound: 1, 1, 0;
# macsec0 deleted: UPLINK 0, and the deletion did not wait for the module.
set -u
. "$(dirname "$0")/lib.sh"

RT=/sys/kernel/debug/ref_tracker
[ -d "$RT" ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null

bed_require
refs_cleanup() {
	ip link del mb_probe0 2>/dev/null
	ip link del h0 2>/dev/null
	cleanup_ns
	nsim_del_all
	rmmod macsec_bridge 2>/dev/null
	rm -rf "$ROW_DIR"
}
on_exit refs_cleanup
setup_ns DPU || ns_broken DPU
nsim_require
dmesg_mark

# new_file VAR CMD...: runs CMD (in this shell), which makes one netdev;
# VAR names that netdev's tracker file, the one netdev@ file CMD added.
new_file() {
	local var=$1 f
	shift
	local -A before=()
	local added=()
	for f in "$RT"/netdev@*; do before[$f]=1; done
	"$@" || return 1
	for f in "$RT"/netdev@*; do [ -n "${before[$f]:-}" ] || added+=("$f"); done
	[ ${#added[@]} -eq 1 ] || return 1
	printf -v "$var" %s "${added[0]}"
}

# mb_refs FILE: the references the module holds, as the tracker lists
# them: the users of each stack that passes through macsec_bridge.
mb_refs() {
	awk '
		function flush() { if (mb) sum += n; mb = 0; n = 0 }
		/ has [0-9]+\/[0-9]+ users at$/ { flush(); split($3, u, "/"); n = u[1]; next }
		/\[macsec_bridge\]/ { mb = 1 }
		END { flush(); print sum + 0 }
	' "$1"
}

# expect_refs WHAT SECY UPLINK H0: the module's references on each.
expect_refs() {
	local got
	got="$(mb_refs "$F_SECY") $(mb_refs "$F_UP") $(mb_refs "$F_H0")"
	if [ "$got" != "$2 $3 $4" ]; then
		echo "# $1: macsec0, $UPLINK, h0 hold $got of the module's, not $2 $3 $4"
		grep -h -A16 ' users at$' "$F_SECY" "$F_UP" "$F_H0" | sed 's/^/#   /' | head -80
		return 1
	fi
}

# A device made before debugfs was (lo) has no file: whether netdev
# references are tracked shows on a new one.
if ! new_file F_PROBE ip link add mb_probe0 type dummy; then
	ktap_skip_all "netdev references are not tracked (CONFIG_NET_DEV_REFCNT_TRACKER)"
	exit "$KSFT_SKIP"
fi
# Its file goes when its tracker does, after it is freed: a later device
# at the same address would otherwise find its name taken.
ip link del mb_probe0 && wait_for 100 test ! -e "$F_PROBE" ||
	bed_broken "the probe device's tracker file gone"

ktap_print_header
ktap_set_plan 12

new_file F_UP nsim_new 1 "$DPU" && UPLINK=$(nsim_port "$NSIM_ID" 0 "$DPU") ||
	bed_broken "a netdevsim port in the DPU namespace, with a tracker file of its own"
new_file F_SECY ip -n "$DPU" link add link "$UPLINK" macsec0 type macsec port 4 encrypt on offload mac ||
	bed_broken "the DPU's offloaded SecY, with a tracker file of its own"
new_file F_H0 ip link add h0 type dummy || bed_broken "h0, with a tracker file of its own"
ip link set h0 up && ip -n "$DPU" link set macsec0 up || bed_broken "devices up"

check "no reference of the module's before it loads" expect_refs "before load" 0 0 0
check "load" insmod_bridge "$MODULE_KO"
check "loaded: the SecY and its real device, once each" expect_refs loaded 1 1 0
check "bind h0 to macsec0" quiet dpu_bind h0
check "bound: h0 once, macsec0 twice more" expect_refs bound 3 1 1
check "unbind h0" quiet dpu_unbind h0
check "unbound: h0's and the binding's given back" expect_refs unbound 1 1 0
check "macsec0 deleted, without waiting for the module" \
	timeout 30 ip -n "$DPU" link del macsec0
uplink_free() { [ "$(mb_refs "$F_UP")" = 0 ]; }
check "its real device's reference given back" uplink_free
check "unload" rmmod macsec_bridge
check "h0 deleted, without waiting" timeout 30 ip link del h0
dmesg_clean_since "the kernel log has no warning or leaked reference from this test"

ktap_finished
