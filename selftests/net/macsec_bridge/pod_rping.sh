#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Two pods, each with its own soft-RoCE device, run RDMA to each other over
# a veth wire through software MACsec, and the SecYs count every frame of
# it encrypted.
#
# Each pod is a network namespace holding one end of the wire (va, vb), a
# MACsec netdev on it (maca, macb) with keys and an RX SC for the other,
# and an RXE device on the MACsec netdev, created from inside the pod. Two
# namespaces need no policy routing: each pod routes to the other over the
# wire. Before 7.x RXE has its UDP tunnel sockets in init_net only (there
# is no rxe_ns.c): a pod can create an RXE device, but its RoCE traffic
# has no socket in the pod. There the test is skipped, with that reason.
set -u
. "$(dirname "$0")/lib.sh"

require_root
require_cmd ip rdma rping

KEY_A=0123456789abcdef0123456789abcdef
KEY_B=fedcba9876543210fedcba9876543210
RXE_A=mb_pod_rxea
RXE_B=mb_pod_rxeb

cleanup() {
	[ -n "${SRV:-}" ] && kill "$SRV" 2>/dev/null
	rdma link del "$RXE_A" 2>/dev/null
	rdma link del "$RXE_B" 2>/dev/null
	cleanup_ns
}
on_exit cleanup

require_pod_rxe
setup_ns pa pb || ns_broken pa pb

ip link add va netns "$pa" type veth peer name vb netns "$pb"
mac_a=$(ip netns exec "$pa" cat /sys/class/net/va/address)
mac_b=$(ip netns exec "$pb" cat /sys/class/net/vb/address)
sw_macsec_pod "$pa" va maca 10.1.0.1 "$KEY_A" "$mac_b" "$KEY_B"
sw_macsec_pod "$pb" vb macb 10.1.0.2 "$KEY_B" "$mac_a" "$KEY_A"

ip netns exec "$pa" rdma link add "$RXE_A" type rxe netdev maca

# macsec_stat NS DEV COUNTER: the first counter of that name in
# `ip -s macsec show` (the TX SC's or the RX SC's): a line "stats: NAME..."
# and under it a line of values, one per name.
macsec_stat() {
	ip -n "$1" -s macsec show "$2" | awk -v c="$3" '
		want { print $col; exit }
		$1 == "stats:" { for (i = 2; i <= NF; i++) if ($i == c) { col = i - 1; want = 1 } }'
}

ktap_print_header
ktap_set_plan 8

check "RXE in pod A, on its MACsec netdev" \
	bash -c "ip netns exec $pa rdma link show $RXE_A/1 | grep -q 'netdev maca'"
check "RXE in pod B, on its MACsec netdev" \
	ip netns exec "$pb" rdma link add "$RXE_B" type rxe netdev macb
enc_a=$(macsec_stat "$pa" maca OutPktsEncrypted)
enc_b=$(macsec_stat "$pb" macb OutPktsEncrypted)
ok_a=$(macsec_stat "$pa" maca InPktsOK)
ok_b=$(macsec_stat "$pb" macb InPktsOK)

ip netns exec "$pb" timeout 120 rping -s -a 10.1.0.2 -C 10 >/dev/null 2>&1 &
SRV=$!
# rping -s listens once its id is bound; until then the client is refused
# at once. Each try is bounded, and so are the tries: a minute, and one
# last try.
rping_client() {
	local end=$((SECONDS + 60))
	until ip netns exec "$pa" timeout 20 rping -c -a 10.1.0.2 -C 10 -v; do
		[ "$SECONDS" -lt "$end" ] || return 1
		nap 0.5
	done
}
check "rping: 10 RDMA round trips from pod A to pod B" rping_client
check "rping server in pod B completed" wait "$SRV"
SRV=

# Every rping round trip is several RoCE frames each way, and connecting
# takes more: 10 round trips are well above 20 frames.
grew() { [ "$(macsec_stat "$1" "$2" "$3")" -ge $(( $4 + 20 )) ]; }
check "pod A's SecY encrypted the RDMA traffic (OutPktsEncrypted)" \
	grew "$pa" maca OutPktsEncrypted "$enc_a"
check "pod B's SecY encrypted the RDMA traffic (OutPktsEncrypted)" \
	grew "$pb" macb OutPktsEncrypted "$enc_b"
check "pod A's SecY decrypted pod B's (InPktsOK)" grew "$pa" maca InPktsOK "$ok_a"
check "pod B's SecY decrypted pod A's (InPktsOK)" grew "$pb" macb InPktsOK "$ok_b"

ktap_finished
