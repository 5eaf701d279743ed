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
#   - the SecY once more once an offload operation showed it (its view,
#     read again later);
#   - a port, once (its record of the port);
#   - a bound port's SecY twice more: the binding, and the port's SecY.
# So, as macsec0, UPLINK, h0: at load 1 1 0; after a TX SA is added 2 1 0;
# bound 4 1 1; unbound 2 1 0; bound again 4 1 1. Deleted while h0 is
# bound, macsec0 leaves UPLINK 0 and h0 1 (bound to a SecY that is gone);
# unbound, h0 0. On a kernel without the MACsec core's offload notifier
# the module also interposes UPLINK's macsec_ops, holding UPLINK once more
# from its load to its unload (I below: 1 there, 0 with the notifier).
# Deleting a device the module holds must not wait for it:
# the kernel log would say "waiting for" (and the hung task detector
# would report the stuck `ip`).
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
# No IPv6 on the bed's devices: its neighbour and multicast work holds
# them too, under as many stacks as the tracker lists at most (16).
ip netns exec "$DPU" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
	net.ipv6.conf.default.disable_ipv6=1 || bed_broken "IPv6 off in the DPU namespace"
nsim_require
dmesg_mark

# new_file VAR UNDO CMD...: runs CMD (in this shell), which makes one
# netdev; VAR names that netdev's tracker file, the one netdev@ file CMD
# added. The file is named after the device's address: a device at the
# address of one freed a moment before finds the name still taken (a work
# item removes the old file) and gets none. Then UNDO deletes it and CMD
# runs again, three times at most.
new_file() {
	local var=$1 undo=$2 f try
	shift 2
	local -A before=()
	local added=()
	for f in "$RT"/netdev@*; do before[$f]=1; done
	for try in 1 2 3; do
		"$@" || return 1
		added=()
		for f in "$RT"/netdev@*; do [ -n "${before[$f]:-}" ] || added+=("$f"); done
		if [ ${#added[@]} -eq 1 ]; then
			printf -v "$var" %s "${added[0]}"
			return 0
		fi
		"$undo" || return 1
		nap 0.5
	done
	return 1
}
undo_probe() { ip link del mb_probe0; }
undo_uplink() { echo "$NSIM_ID" >/sys/bus/netdevsim/del_device; }
undo_secy() { ip -n "$DPU" link del macsec0; }
undo_h0() { ip link del h0; }

# mb_refs FILE: the references the module holds, as the tracker lists
# them: the users of each stack that passes through macsec_bridge. "?" if
# the file cannot tell: a stack left out (it lists 16 at most) or not
# printed (no memory for it).
mb_refs() {
	awk '
		function flush() {
			if (mb) sum += n; if (hdr && !lines) bad = 1; mb = 0; n = 0; hdr = 0
		}
		/ has [0-9]+\/[0-9]+ users at$/ {
			flush(); split($3, u, "/"); n = u[1]; hdr = 1; lines = 0; next
		}
		/ skipped reports about / { bad = 1 }
		/^ +[^ ]/ { lines++ }
		/\[macsec_bridge\]/ { mb = 1 }
		END { flush(); if (bad) print "?"; else print sum + 0 }
	' "$1"
}

# expect_refs WHAT SECY UPLINK H0: the module's references on each; "-"
# for a device that is gone.
expect_refs() {
	local what=$1 want got="" f n
	shift
	want="$*"
	for f in "$F_SECY" "$F_UP" "$F_H0"; do
		if [ "$1" = - ]; then n=-; else n=$(mb_refs "$f"); fi
		got+="${got:+ }$n"
		shift
	done
	if [ "$got" != "$want" ]; then
		echo "# $what: macsec0, $UPLINK, h0 hold $got of the module's, not $want"
		grep -h -A16 ' users at$' "$F_SECY" "$F_UP" "$F_H0" 2>/dev/null |
			sed 's/^/#   /' | head -80
		return 1
	fi
}

# A device made before debugfs was (lo) has no file: whether netdev
# references are tracked shows on a new one. Without the tracker no device
# has a file; a probe that found none of its own beside others' is this
# test's failure, never a skip.
if ! new_file F_PROBE undo_probe ip link add mb_probe0 type dummy; then
	if compgen -G "$RT/netdev@*" >/dev/null; then
		bed_broken "the probe device got no tracker file of its own in three tries"
	fi
	ktap_skip_all "netdev references are not tracked (CONFIG_NET_DEV_REFCNT_TRACKER)"
	exit "$KSFT_SKIP"
fi
ip link del mb_probe0

I=0
[ "$(offload_path)" = notifier ] || I=1

ktap_print_header
ktap_set_plan 17

new_file F_UP undo_uplink nsim_new 1 "$DPU" && UPLINK=$(nsim_port "$NSIM_ID" 0 "$DPU") ||
	bed_broken "a netdevsim port in the DPU namespace, with a tracker file of its own"
new_file F_SECY undo_secy \
	ip -n "$DPU" link add link "$UPLINK" macsec0 type macsec port 4 encrypt on offload mac ||
	bed_broken "the DPU's offloaded SecY, with a tracker file of its own"
new_file F_H0 undo_h0 ip link add h0 type dummy || bed_broken "h0, with a tracker file of its own"
sysctl -qw net.ipv6.conf.h0.disable_ipv6=1 && ip link set h0 up &&
	ip -n "$DPU" link set macsec0 up || bed_broken "devices up"

check "no reference of the module's before it loads" expect_refs "before load" 0 0 0
check "load" insmod_bridge "$MODULE_KO"
check "loaded: the SecY and its real device, once each (and an interposer's: $I)" \
	expect_refs loaded 1 $((1 + I)) 0
check "a TX SA added (mdo_add_txsa)" ip -n "$DPU" macsec add macsec0 tx sa 0 pn 1 on \
	key 01 0123456789abcdef0123456789abcdef
check "the SecY once more, as the operation showed it" expect_refs "operation seen" 2 $((1 + I)) 0
check "bind h0 to macsec0" quiet dpu_bind h0
check "bound: h0 once, macsec0 twice more" expect_refs bound 4 $((1 + I)) 1
check "unbind h0" quiet dpu_unbind h0
check "unbound: h0's and the binding's given back" expect_refs unbound 2 $((1 + I)) 0
check "bind h0 again" quiet dpu_bind h0
check "bound again" expect_refs "bound again" 4 $((1 + I)) 1
check "macsec0 deleted while h0 is bound" ip -n "$DPU" link del macsec0
check "the SecY's references given back (the interposer's: $I); h0 still held" \
	expect_refs "SecY deleted" - "$I" 1
check "unbind h0" quiet dpu_unbind h0
check "h0's given back" expect_refs "h0 unbound" - "$I" 0
check "unload" rmmod macsec_bridge
dmesg_clean_since "no deletion waited for a reference, and no warning"

ktap_finished
