#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A MACsec netdev whose creation fails after its driver accepted the SecY
# takes the SecY off the driver again. macsec_newlink() hands an
# offloaded SecY to the driver (mdo_add_secy) before it registers the
# SecY with the real device's receive handler, which allocates for the
# first SecY on a device. The model NIC, told so by its alias
# (`oom-after:mdo_add_secy`), arms the calling task's fail-nth knob as
# that operation returns: the next allocation, the receive handler's
# data, fails. The oracle is the NIC's own record of what it was asked.
# - With the series (the offload notifier is built in), newlink's error
#   path deletes the SecY ("net: macsec: delete the offloaded SecY when
#   newlink fails after adding it"): the NIC is asked to add it, then to
#   delete it.
# - Without it (the stock kernel), macsec.c keeps that bug: the NIC is
#   asked to add the SecY and never to delete it. The test states it, so
#   the row that proves the fix is seen failing on every such kernel.
set -u
. "$(dirname "$0")/lib.sh"

nic_bed
tracefs_require
failslab_require

ktap_print_header
ktap_set_plan 5

echo >"$T/trace"
ip link set mtn0 alias oom-after:mdo_add_secy
err=$(ip link add link mtn0 macsec0 type macsec port 4 offload mac 2>&1)
rc=$?
echo "# ip: $err"
check "newlink fails once the NIC took the SecY: out of memory" \
	eval '[ "$rc" -ne 0 ] && grep -q "Cannot allocate memory" <<<"$err"'
check "... and leaves no MACsec netdev" eval '! ip link show macsec0 2>/dev/null'
if [ "$(offload_path)" = notifier ]; then
	check "the NIC was asked to add the SecY, then to delete it" \
		ops_are "mdo_add_secy 0" "mdo_del_secy 0"
else
	check "the NIC was asked to add the SecY, never to delete it (this macsec.c)" \
		ops_are "mdo_add_secy 0"
fi
ip link set mtn0 alias ''
echo >"$T/trace"
check "a SecY made then is offloaded: the NIC adds it" \
	eval 'ip link add link mtn0 macsec0 type macsec port 4 offload mac &&
		ops_are "mdo_add_secy 0"'
echo >"$T/trace"
check "... and deletes it with its netdev" \
	eval 'ip link del macsec0 && ops_are "mdo_del_secy 0"'

ktap_finished
