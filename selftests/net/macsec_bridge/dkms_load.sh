#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The module DKMS built and installed (scripts/check.sh runs the real
# `dkms add/build/install` on the host) loads and unloads on this kernel.
set -u
. "$(dirname "$0")/lib.sh"

KO=${MACSEC_BRIDGE_DKMS_KO:-}

require_root
require_cmd insmod rmmod modinfo
require_ko "$KO" "DKMS-built module (MACSEC_BRIDGE_DKMS_KO)"

ktap_print_header
ktap_set_plan 4

rmmod macsec_bridge 2>/dev/null
check "DKMS module was built for this kernel ($(modinfo -F vermagic "$KO" | cut -d' ' -f1))" \
	[ "$(modinfo -F vermagic "$KO" | cut -d' ' -f1)" = "$(uname -r)" ]
check "insmod the DKMS module" insmod_bridge "$KO"
check "it is live" [ "$(cat /sys/module/macsec_bridge/initstate 2>/dev/null)" = live ]
check "rmmod" rmmod macsec_bridge

ktap_finished
