#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The test kernel can do what the module builds on: a netdevsim port offers
# MACsec offload, `ip link add … type macsec offload mac` and
# `ip macsec offload` work on it, with the limits macsec.c imposes.
set -u
. "$(dirname "$0")/lib.sh"

require_root
require_cmd ip ethtool

cleanup() {
	cleanup_ns
	nsim_del_all
}
on_exit cleanup

ip macsec help 2>&1 | grep -q offload || bed_broken "iproute2 without 'ip macsec offload'"
nsim_require
nsim_new 1 || bed_broken "a netdevsim port"
id=$NSIM_ID
port=$(nsim_port "$id" 0)
setup_ns ns || ns_broken ns
ip link set "$port" netns "$ns"

ktap_print_header
ktap_set_plan 11

check "netdevsim port advertises macsec-hw-offload" \
	[ "$(ip netns exec "$ns" bash -c ". $lib_dir/lib.sh; hw_macsec $port")" = on ]

ip -n "$ns" link set "$port" up
check "create an offloaded SecY" \
	ip -n "$ns" link add link "$port" macsec0 type macsec port 4 encrypt on offload mac
check "ip macsec show reports offload mac" \
	bash -c "ip netns exec $ns ip macsec show macsec0 | grep -q 'offload: mac'"
check "add an active encoding TX SA" \
	ip netns exec "$ns" ip macsec add macsec0 tx sa 0 pn 1 on \
		key 01 12345678901234567890123456789012
check_fail "offload cannot change while an SA is configured" \
	ip netns exec "$ns" ip macsec offload macsec0 off
check_fail "an active SA cannot be deleted" \
	ip netns exec "$ns" ip macsec del macsec0 tx sa 0
check "deactivate, then delete the TX SA" \
	bash -c "ip netns exec $ns ip macsec set macsec0 tx sa 0 off &&
		 ip netns exec $ns ip macsec del macsec0 tx sa 0"
check_fail "offload cannot change while the SecY is up" \
	bash -c "ip -n $ns link set macsec0 up && ip netns exec $ns ip macsec offload macsec0 off"
ip -n "$ns" link set macsec0 down
check "offload off, then mac again, while down and empty" \
	bash -c "ip netns exec $ns ip macsec offload macsec0 off &&
		 ip netns exec $ns ip macsec show macsec0 | grep -q 'offload: off' &&
		 ip netns exec $ns ip macsec offload macsec0 mac"
ip -n "$ns" link add link "$port" macsec1 type macsec port 5 offload mac
ip -n "$ns" link add link "$port" macsec2 type macsec port 6 offload mac
check_fail "a fourth offloaded SecY exceeds netdevsim's limit of 3" \
	ip -n "$ns" link add link "$port" macsec3 type macsec port 7 offload mac
check "delete the SecYs" \
	bash -c "ip -n $ns link del macsec0 && ip -n $ns link del macsec1 &&
		 ip -n $ns link del macsec2"

ktap_finished
