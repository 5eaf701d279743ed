#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A frame received under a MAC-offloaded SecY whose device lost
# NETIF_F_HW_MACSEC (ethtool -K ... macsec-hw-offload off, on the model
# NIC mtn0, which lists the bit in hw_features as mlx5e does, or on a VLAN
# over it). The MACsec core then finds no operations for the SecY
# (macsec_get_ops()), and its receive path (handle_not_macsec()) must not
# dereference them: the frame reaches the device, nothing of it the SecY
# (the model NIC marks nothing it decrypted with an md_dst, which would
# still name the SecY), and the kernel log stays clean. With the bit, the same frame reaches the
# SecY too (a broadcast is copied to it), which shows the path is taken.
# The model NIC receives what it sends (its alias rx-loop); each frame
# carries a payload of its own, sent out of a packet socket.
#
# For the kernel with the patch series only: without "net: macsec: do not
# dereference missing ops on the receive path" the first such frame oopses
# the kernel (the stock and Debian kernels have the bug).
set -u
. "$(dirname "$0")/lib.sh"

if [ "$(offload_path)" != notifier ]; then
	ktap_skip_all "not the series' kernel: without its receive-path fix the frame would oops it"
	exit "$KSFT_SKIP"
fi
require_root
require_cmd ip ethtool insmod rmmod python3
require_ko "$NIC_KO" "model NIC test module (MACSEC_TEST_NIC_KO)"
modprobe -q macsec 8021q 2>/dev/null
rx_cleanup() {
	ip link del macsec1 2>/dev/null
	ip link del macsec0 2>/dev/null
	ip link del mtn0.5 2>/dev/null
	ip link set mtn0 alias '' 2>/dev/null
	rmmod macsec_test_nic 2>/dev/null
}
on_exit rx_cleanup
insmod "$NIC_KO" && ip link set mtn0 up && ip link set mtn0 alias rx-loop ||
	bed_broken "the model NIC, up, receiving what it sends"
ip link add link mtn0 macsec0 type macsec port 4 offload mac && ip link set macsec0 up ||
	bed_broken "a SecY offloaded to the model NIC"
ip link add link mtn0 name mtn0.5 type vlan id 5 && ip link set mtn0.5 up &&
	ip link add link mtn0.5 macsec1 type macsec port 5 offload mac &&
	ip link set macsec1 up || bed_broken "a SecY offloaded through a VLAN over the model NIC"

bit_is() { [ "$(hw_macsec "$1")" = "$2" ]; }
ktap_print_header
ktap_set_plan 7
dmesg_mark

check "with the bit: a frame mtn0 receives reaches it, and a copy macsec0" \
	delivered mtn0 mtn0 macsec0 1
check "ethtool clears mtn0's (and so the VLAN's) macsec-hw-offload under the running macsec0" \
	eval 'ethtool -K mtn0 macsec-hw-offload off && bit_is mtn0 off &&
	      wait_for 50 bit_is mtn0.5 off'
check "then: the frame reaches mtn0, nothing of it macsec0" \
	delivered mtn0 mtn0 macsec0 0
# The VLAN took mtn0's change (above); its own bit comes back with mtn0's.
check "the bit back on mtn0 and the VLAN: a frame the VLAN receives reaches macsec1 too" \
	eval 'ethtool -K mtn0 macsec-hw-offload on && wait_for 50 bit_is mtn0.5 on &&
	      delivered mtn0.5 mtn0.5 macsec1 1'
check "ethtool clears the VLAN's macsec-hw-offload under the running, offloaded macsec1" \
	eval 'ethtool -K mtn0.5 macsec-hw-offload off && bit_is mtn0.5 off && bit_is mtn0 on'
check "then: the frame reaches the VLAN, nothing of it macsec1" \
	delivered mtn0.5 mtn0.5 macsec1 0
dmesg_clean_since "no warning, bug or oops in the kernel log"

ktap_finished
