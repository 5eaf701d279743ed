#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Readers take no RTNL. dev-get and dumps are open to anyone, from any
# namespace: were they to take RTNL, a loop of reads from a container
# would starve every writer on the host. Here the model NIC's
# mdo_upd_secy sleeps six seconds, as every offload operation runs, under
# RTNL (its alias `hold:mdo_upd_secy`), while an unprivileged user dumps
# the ports and gets macsec0's: both answer while the operation still
# holds RTNL, with what the module published last (the port retracted
# before the driver was called), and the operation then completes and
# the port is advertised again. RXE sits on macsec0 (relation self).
set -u
. "$(dirname "$0")/lib.sh"

nic_bed
tracefs_require
OUT=$ROW_DIR/readers

ktap_print_header
ktap_set_plan 9

# traced WORDS: the model NIC wrote `macsec_test_nic: WORDS` to the trace.
traced() {
	grep -q "macsec_test_nic: $*\$" "$T/trace"
}
said() {
	grep -qxF -- "$*" "$OUT" || { sed 's/^/# got: /' "$OUT"; false; }
}

check "load" insmod_bridge "$MODULE_KO"
ip link add link mtn0 macsec0 type macsec port 4 encrypt on offload mac
ip link set macsec0 up
ip macsec add macsec0 tx sa 0 pn 1 on key 01 $MB_KEY
rdma link add mb_rxe0 type rxe netdev macsec0
check "RXE on the offloaded macsec0: offload-mac" \
	[ "$(py "$lib_dir/mb_genl.py" readers macsec0 "$(ifindex macsec0)" | head -1)" = \
	  "dump offload-mac/none" ]

echo >"$T/trace"
ip link set mtn0 alias hold:mdo_upd_secy
ip link set macsec0 type macsec encrypt on &
holder=$!
check "mdo_upd_secy holds RTNL" wait_for 100 traced mdo_upd_secy holding
py "$lib_dir/mb_genl.py" readers macsec0 "$(ifindex macsec0)" >"$OUT" 2>"$ROW_DIR/readers.err"
# Before anything else: whether the operation still ran when they answered.
held=no
kill -0 "$holder" 2>/dev/null && ! traced mdo_upd_secy exit 0 && held=yes
check "an unprivileged dump and dev-get answered while RTNL was held" [ "$held" = yes ]
check "the dump: macsec0 retracted before the driver was called" said dump none/unsettled
check "dev-get: the same" said get none/unsettled
check "the operation completes" wait "$holder"
ip link set mtn0 alias ''
check "advertised again once it returned" \
	[ "$(py "$lib_dir/mb_genl.py" readers macsec0 "$(ifindex macsec0)" | head -1)" = \
	  "dump offload-mac/none" ]
check "unload" rmmod macsec_bridge

ktap_finished
