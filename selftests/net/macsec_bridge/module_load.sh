#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The module loads and unloads cleanly, many times in a row.
set -u
. "$(dirname "$0")/lib.sh"

ROUNDS=20

require_root
require_cmd insmod rmmod
require_ko "$MODULE_KO" "module under test (MACSEC_BRIDGE_KO)"

ktap_print_header
ktap_set_plan 4

rmmod macsec_bridge 2>/dev/null
dmesg_mark

ok=0
for i in $(seq "$ROUNDS"); do
	insmod_bridge "$MODULE_KO" || break
	[ -d /sys/module/macsec_bridge ] || break
	rmmod macsec_bridge || break
	[ ! -d /sys/module/macsec_bridge ] || break
	ok=$i
done
check "insmod/rmmod $ROUNDS rounds (completed $ok)" [ "$ok" -eq "$ROUNDS" ]

log=$(dmesg_since) || ktap_exit_fail_msg "the kernel log lost lines: cannot count"
loaded=$(grep -c 'macsec_bridge: loaded' <<<"$log")
unloaded=$(grep -c 'macsec_bridge: unloaded' <<<"$log")
check "init logged $ROUNDS times (saw $loaded)" [ "$loaded" -eq "$ROUNDS" ]
check "exit logged $ROUNDS times (saw $unloaded)" [ "$unloaded" -eq "$ROUNDS" ]

license=$(modinfo -F license "$MODULE_KO" 2>/dev/null)
check "module license is GPL (got '$license')" [ "$license" = GPL ]

ktap_finished
