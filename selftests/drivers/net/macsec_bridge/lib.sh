# SPDX-License-Identifier: GPL-2.0
#
# Shared helpers for the macsec_bridge kselftests.  Sourced, not run.
#
# The runner (scripts/vm-selftests.sh) lays the tests out as the kernel's
# kselftest install does, so the kernel's KTAP helpers are two levels up.

# The logical path (not readlink -f): the runner reaches us through a symlink.
lib_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ksft_dir=${KSFT_DIR:-$lib_dir/../../../kselftest}
# shellcheck source=/dev/null
. "$ksft_dir/ktap_helpers.sh"

# Where the module under test is: the runner exports it.
MODULE_KO=${MACSEC_BRIDGE_KO:-}

# Commands each test needs; skip the whole test (exit 4) when one is missing.
require_cmd() {
	local c
	for c in "$@"; do
		if ! command -v "$c" >/dev/null 2>&1; then
			ktap_skip_all "$c not installed"
			exit "$KSFT_SKIP"
		fi
	done
}

# require_ko PATH WHAT: skip unless the module file PATH is readable.
require_ko() {
	if [ -z "$1" ] || [ ! -r "$1" ]; then
		ktap_skip_all "$2 not found ('$1')"
		exit "$KSFT_SKIP"
	fi
}

require_root() {
	if [ "$(id -u)" -ne 0 ]; then
		ktap_skip_all "must run as root"
		exit "$KSFT_SKIP"
	fi
}

# check DESCRIPTION CMD...: one KTAP result from a command's status.
check() {
	local desc=$1
	shift
	if "$@"; then
		ktap_test_pass "$desc"
	else
		ktap_test_fail "$desc"
	fi
}

# check_fail DESCRIPTION CMD...: the command must fail.
check_fail() {
	local desc=$1
	shift
	if "$@" 2>/dev/null; then
		ktap_test_fail "$desc (unexpectedly succeeded)"
	else
		ktap_test_pass "$desc"
	fi
}

# Network namespaces made by setup_ns, deleted by cleanup_ns.
NS_LIST=()
setup_ns() {
	local _name _ns
	for _name in "$@"; do
		_ns=$_name-$(mktemp -u XXXXXX)
		ip netns add "$_ns" || return 1
		ip -n "$_ns" link set lo up
		NS_LIST+=("$_ns")
		eval "$_name=$_ns"
	done
}

cleanup_ns() {
	local ns
	for ns in "${NS_LIST[@]}"; do
		ip netns del "$ns" 2>/dev/null
	done
	NS_LIST=()
}

# netdevsim: one device with PORTS ports; prints the device id.
NSIM_IDS=()
nsim_new() {
	local ports=${1:-1} id
	[ -d /sys/bus/netdevsim ] || modprobe netdevsim 2>/dev/null
	[ -w /sys/bus/netdevsim/new_device ] || return 1
	for id in $(seq 100 199); do
		[ -e "/sys/bus/netdevsim/devices/netdevsim$id" ] && continue
		echo "$id $ports" > /sys/bus/netdevsim/new_device || return 1
		udev_settle_nsim "$id" "$ports" || return 1
		NSIM_IDS+=("$id")
		echo "$id"
		return 0
	done
	return 1
}

udev_settle_nsim() {
	local id=$1 ports=$2 i
	for i in $(seq 50); do
		[ "$(ls "/sys/bus/netdevsim/devices/netdevsim$id/net" 2>/dev/null | wc -l)" -ge "$ports" ] && return 0
		sleep 0.1
	done
	return 1
}

# The netdev name of port PORT (0-based) of netdevsim device ID.
nsim_port() {
	ls "/sys/bus/netdevsim/devices/netdevsim$1/net" | sort | sed -n "$(( ${2:-0} + 1 ))p"
}

nsim_del_all() {
	local id
	for id in "${NSIM_IDS[@]}"; do
		echo "$id" > /sys/bus/netdevsim/del_device 2>/dev/null
	done
	NSIM_IDS=()
}

# ethtool's view of NETIF_F_HW_MACSEC: on or off.
hw_macsec() {
	ethtool -k "$1" 2>/dev/null | awk '/^macsec-hw-offload:/ {print $2}'
}
