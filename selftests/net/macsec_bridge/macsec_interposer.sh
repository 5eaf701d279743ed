#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kernel::net::macsec: an interposer installed on a netdevsim port sees
# mdo_add_secy (and the TX SA ops) from `ip link add … offload mac` and
# `ip macsec`, forwards them, and on unload puts the original macsec_ops
# back; offload keeps working afterwards. Loaded again with its guards
# forgotten (mem::forget: safe code may), the interposer takes every table
# off at unload itself, and offload still works: the device's macsec_ops
# points into no unloaded module.
set -u
. "$(dirname "$0")/lib.sh"

KO=${MACSEC_INTERPOSER_TEST_KO:-}

require_root
require_cmd ip insmod rmmod
require_ko "$KO" "interposer test module (MACSEC_INTERPOSER_TEST_KO)"

cleanup() {
	ip link del mit_macsec0 2>/dev/null
	ip link del mit_macsec1 2>/dev/null
	ip link del mit_macsec2 2>/dev/null
	rmmod macsec_interposer_test 2>/dev/null
	nsim_del_all
}
on_exit cleanup

nsim_require
nsim_new 1 || bed_broken "a netdevsim port"
id=$NSIM_ID
port=$(nsim_port "$id" 0)
ip link set "$port" up
dmesg_mark
# The test module's lines since the mark.
log() { dmesg_since | grep 'macsec_interposer_test:'; }

ktap_print_header
ktap_set_plan 14

check "load the test module" insmod "$KO"
check "interposer installed on $port" eval "log | grep -q 'installed on $port orig='"
check "a second interposer on the same device is refused (EBUSY)" \
	eval "log | grep -q 'second install on $port: -16'"
check "ip link add … offload mac succeeds through the interposer" \
	ip link add link "$port" mit_macsec0 type macsec port 4 offload mac
check "observed before AddSecy" eval "log | grep -q 'before AddSecy lower=$port secy=mit_macsec0'"
check "observed after AddSecy with ret=0" eval "log | grep -q 'after AddSecy lower=$port ret=0'"
ip macsec add mit_macsec0 tx sa 0 pn 1 on key 01 12345678901234567890123456789012
check "observed AddTxsa" eval "log | grep -q 'after AddTxsa lower=$port ret=0'"
ip link del mit_macsec0
check "unload restores the original macsec_ops" \
	eval "rmmod macsec_interposer_test && log | grep -q 'restored $port orig=.* same'"
check "offload still works after unload" \
	bash -c "ip link add link $port mit_macsec1 type macsec port 5 offload mac &&
		 ip macsec show mit_macsec1 | grep -q 'offload: mac'"
n=$(log | grep -c 'after AddSecy')
check "nothing observed after unload (AddSecy seen $n time)" [ "$n" -eq 1 ]
ip link del mit_macsec1

dmesg_mark
check "load with every guard forgotten" insmod "$KO" forget_guards=1
check "the guard on $port is forgotten" \
	eval "log | grep -q 'forgot the guard on $port'"
# Its own NIC and $port at least: each left installed by a forgotten guard.
forgot=$(log | grep -c 'forgot the guard on')
check "unload takes all $forgot forgotten tables off" \
	eval "[ $forgot -ge 2 ] && rmmod macsec_interposer_test &&
		 log | grep -q 'left installed at unload: $forgot\$'"
check "offload works after unload: no table of the module left" \
	bash -c "ip link add link $port mit_macsec2 type macsec port 6 offload mac &&
		 ip macsec show mit_macsec2 | grep -q 'offload: mac'"

ktap_finished
