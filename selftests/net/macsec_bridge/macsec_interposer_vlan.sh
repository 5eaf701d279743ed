#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kernel::net::macsec on a VLAN, the usual way to carry RoCE with a
# priority: a SecY offloaded on a VLAN over an interposed NIC. The VLAN's
# own macsec_ops forward every operation to the NIC's table with
# ctx->netdev still the VLAN (vlan_dev.c). The interposer must not be
# installed on the VLAN, must find the NIC's table for that call, observe
# it once and forward it once: a trampoline that took its table from
# ctx->netdev recursed until the kernel stack overflowed.
#
# The NIC is mit_nic0, the test module's model of a NIC that offloads
# MACsec on its VLANs as mlx5 does (netdevsim cannot: its operations read
# netdev_priv(ctx->netdev), which for a VLAN is the VLAN's).
set -u
. "$(dirname "$0")/lib.sh"

KO=${MACSEC_INTERPOSER_TEST_KO:-}

require_root
require_cmd ip ethtool insmod rmmod
require_ko "$KO" "interposer test module (MACSEC_INTERPOSER_TEST_KO)"

cleanup() {
	ip link del mit_macsec0 2>/dev/null
	ip link del mit_vlan 2>/dev/null
	rmmod macsec_interposer_test 2>/dev/null
}
on_exit cleanup

# A VLAN on a dummy device (not on lo, which cannot carry VLANs).
ip link add mit_probe type dummy
if ! ip link add link mit_probe name mit_probe.1 type vlan id 1 2>/dev/null; then
	ip link del mit_probe
	ktap_skip_all "this kernel has no VLAN support (CONFIG_VLAN_8021Q)"
	exit "$KSFT_SKIP"
fi
ip link del mit_probe
dmesg_mark
# What the test module logged since the test began, and how often LINE.
log() { dmesg_since | grep 'macsec_interposer_test:'; }
logged() { log | grep -q -- "$1"; }
count() { log | grep -c -- "$1"; }

ktap_print_header
ktap_set_plan 13

check "load the test module (it registers mit_nic0)" insmod "$KO"
check "interposer installed on the NIC mit_nic0" logged "installed on mit_nic0 orig="
check "a VLAN over it" ip link add link mit_nic0 name mit_vlan type vlan id 100
check "the VLAN is not interposed (EOPNOTSUPP)" logged "not installed on mit_vlan: -95"
check "the VLAN offers MACsec offload, from the NIC's vlan_features" \
	bash -c "ethtool -k mit_vlan | grep -q '^macsec-hw-offload: on'"
check "a SecY offloaded on the VLAN" \
	ip link add link mit_vlan mit_macsec0 type macsec port 4 offload mac
check "AddSecy observed once, with the VLAN as lower" \
	[ "$(count "before AddSecy lower=mit_vlan secy=mit_macsec0")" -eq 1 ]
check "AddSecy reached the NIC once, through the VLAN" \
	[ "$(count "nic mdo_add_secy lower=mit_vlan")" -eq 1 ]
check "AddSecy observed after the NIC, succeeded" \
	[ "$(count "after AddSecy lower=mit_vlan ret=0")" -eq 1 ]
# The order, as logged: the observer's before, the NIC, the observer's after.
check "AddSecy in order: before, NIC, after" \
	[ "$(log | grep -E 'AddSecy|mdo_add_secy' | sed 's/.*macsec_interposer_test: //; s/ .*//' |
	     paste -sd' ')" = "before nic after" ]
ip macsec add mit_macsec0 tx sa 0 pn 1 on key 01 12345678901234567890123456789012
check "AddTxsa through the VLAN: observed and forwarded once each" \
	[ "$(count "after AddTxsa lower=mit_vlan ret=0")$(count "nic mdo_add_txsa lower=mit_vlan")" = 11 ]
ip link del mit_macsec0
check "DelSecy through the VLAN: observed and forwarded once each" \
	[ "$(count "after DelSecy lower=mit_vlan ret=0")$(count "nic mdo_del_secy lower=mit_vlan")" = 11 ]
check "unload restores the NIC's original macsec_ops" \
	eval "rmmod macsec_interposer_test && logged 'restored mit_nic0 orig=.* same'"

ktap_finished
