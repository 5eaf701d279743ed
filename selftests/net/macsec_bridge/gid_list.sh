#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What the object lists as protected-gid, against the RDMA core's own
# tables in sysfs (ports/1/gid_attrs/ndevs and types), as the
# documentation promises it:
# - an `upper` port (RXE on the model NIC, mlx5's shape) lists the RoCE v2
#   GIDs of the SecY's addresses, at most 16: with 20 addresses on the
#   SecY, the kernel has 20 such GIDs and the object lists 16 of them,
#   each one of those;
# - a `self` port claims less when a macvlan over the SecY has an
#   address: the RDMA core gives the port the macvlan's GIDs, and the
#   module does not tell a macvlan (which sends only through the SecY)
#   from a device that can send around it, so the port is partial and
#   lists the GIDs on the SecY itself, and whole again once the macvlan
#   goes.
# Each row states every notification the port sends, in order.
set -u
. "$(dirname "$0")/lib.sh"

nic_bed
gid_cleanup() {
	ip link del mv0 2>/dev/null
	nic_cleanup
}
on_exit gid_cleanup

# v2_gids RDMA NETDEV: the indexes of RDMA's RoCE v2 GIDs on NETDEV, as
# sysfs shows them (builtins only: the table has 1024 entries).
v2_gids() {
	local d=/sys/class/infiniband/$1/ports/1/gid_attrs n i dev ty
	for n in "$d"/ndevs/*; do
		i=${n##*/}
		read -r dev <"$n" 2>/dev/null || continue
		read -r ty <"$d/types/$i" 2>/dev/null || continue
		[ "$dev" = "$2" ] && [ "$ty" = "RoCE v2" ] && echo "$i"
	done
}
# v2_count RDMA NETDEV N: the kernel has at least N such GIDs.
v2_count() { [ "$(v2_gids "$1" "$2" | wc -l)" -ge "$3" ]; }
# listed_within PORT RDMA NETDEV N: PORT lists exactly N GIDs in a dump,
# each a RoCE v2 GID of RDMA on NETDEV with the value sysfs shows.
listed_within() {
	ynl --dump dev-get --output-json >"$ROW_DIR/gids.json" || return 1
	v2_gids "$2" "$3" >"$ROW_DIR/gids.kernel"
	py - "$ROW_DIR/gids.json" "$ROW_DIR/gids.kernel" "$1" "$2" "$4" <<'PY'
import json, sys
dump, kernel, port, rdma, n = sys.argv[1:]
obj = [o for o in json.load(open(dump)) if o['ifname'] == port][0]
listed = obj.get('protected-gid', [])
ours = {int(l) for l in open(kernel) if l.strip()}
bad = []
for g in listed:
    path = f"/sys/class/infiniband/{rdma}/ports/1/gids/{g['index']}"
    if g['rdma-dev'] != rdma or g['index'] not in ours or open(path).read().strip() != g['gid']:
        bad.append(g)
print(f'# {port}: {len(listed)} listed, the kernel has {len(ours)}; not its: {bad}')
sys.exit(0 if len(listed) == int(n) and not bad else 1)
PY
}

ktap_print_header
ktap_set_plan 12

check "load" insmod_bridge "$MODULE_KO"
check "a monitor subscribes" table_begin
row "RXE on the model NIC under an offloaded SecY with no address: upper, partial" \
	mtn0 on none partial relation=upper owner=driver seq=none/partial -- \
	"ip link add link mtn0 macsec0 type macsec port 4 encrypt on offload mac &&
	 sysctl -qw net.ipv6.conf.macsec0.addr_gen_mode=1 &&
	 ip link set macsec0 up &&
	 ip macsec add macsec0 tx sa 0 pn 1 on key 01 $MB_KEY &&
	 rdma link add mb_rxe1 type rxe netdev mtn0 && wait_for 40 gids_are mtn0 0"
# One notification a GID change the module reads; the row states only the
# end, and the kernel's view: 20 RoCE v2 GIDs on macsec0, 16 listed.
row "20 addresses on the SecY: 16 GIDs listed, each one of the kernel's" \
	mtn0 on none partial -- \
	"for i in \$(seq 1 20); do ip addr add 192.0.2.\$i/24 dev macsec0 || exit 1; done &&
	 wait_for 100 v2_count mb_rxe1 macsec0 20 && wait_for 100 gids_are mtn0 16 &&
	 listed_within mtn0 mb_rxe1 macsec0 16"
row "RXE gone from the model NIC, the addresses flushed: the port is gone" \
	mtn0 on absent "" -- \
	"rdma link del mb_rxe1 && ip addr flush dev macsec0"
row "RXE on the SecY (self): offload-mac, nothing listed" \
	macsec0 on offload-mac "" relation=self owner=bridge seq=offload-mac/none -- \
	"rdma link add mb_rxe0 type rxe netdev macsec0"
row "a macvlan over the SecY with an address: partial, the SecY's own GIDs listed" \
	macsec0 off none partial seq=none/partial -- \
	"ip link add link macsec0 mv0 type macvlan &&
	 sysctl -qw net.ipv6.conf.mv0.addr_gen_mode=1 && ip link set mv0 up &&
	 ip addr add 198.51.100.1/24 dev mv0 &&
	 wait_for 100 v2_count mb_rxe0 mv0 1 && wait_for 100 listed_on macsec0 mb_rxe0 macsec0"
row "the macvlan deleted: whole again, offload-mac" \
	macsec0 on offload-mac "" seq=offload-mac/none -- \
	"ip link del mv0 && wait_for 100 gids_are macsec0 0"
row "RXE deleted: the port is gone" \
	macsec0 off absent "" -- \
	"rdma link del mb_rxe0"
table_end
check "unload" rmmod macsec_bridge

ktap_finished
