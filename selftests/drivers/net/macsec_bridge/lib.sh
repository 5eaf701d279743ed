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

# ---- The macsec_bridge family through the kernel's own YNL CLI ----------

YNL_SPEC=$lib_dir/../../../../Documentation/netlink/specs/macsec_bridge.yaml
[ -r "$YNL_SPEC" ] || YNL_SPEC=${MACSEC_BRIDGE_SPEC:-}
YNL_CLI=${KSFT_KDIR:-}/tools/net/ynl/cli.py

# Skip unless the YNL CLI, the spec and python3-yaml are there.
require_ynl() {
	if [ ! -r "$YNL_SPEC" ] || [ ! -r "$YNL_CLI" ] ||
	   ! /usr/bin/python3 -c 'import yaml' 2>/dev/null; then
		ktap_skip_all "ynl CLI, spec or python3-yaml missing"
		exit "$KSFT_SKIP"
	fi
}

ynl() {
	/usr/bin/python3 "$YNL_CLI" --no-schema --spec "$YNL_SPEC" --output-json "$@"
}


# wait_subscribed PID: until process PID has a generic netlink socket that
# joined a multicast group (/proc/net/netlink: protocol 16, port id = PID,
# group bitmap non-zero).
wait_subscribed() {
	local i
	for i in $(seq 300); do
		awk -v pid="$1" '$2 == 16 && $3 == pid && $4 != "00000000" {f = 1} END {exit !f}' \
			/proc/net/netlink && return 0
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# A lockstep table. One `cli.py --subscribe monitor` spans the table
# (ynl_monitor.py ends its sleep when the table is over); each row runs an
# action, then records `ethtool -k` and a `cli.py --dump dev-get`. At the
# end lockstep_check.py judges every row three ways: ethtool, the dump, and
# the notifications for the generations the row moved through.
ROW_DIR=$(mktemp -d /tmp/macsec_bridge-rows.XXXXXX)
ROW_N=0
ROW_MON=

table_begin() {
	ROW_N=0
	: >"$ROW_DIR/rows"
	exec /usr/bin/python3 "$lib_dir/ynl_monitor.py" "$YNL_CLI" --no-schema \
		--spec "$YNL_SPEC" --output-json --subscribe monitor --sleep 3600 \
		>"$ROW_DIR/ntf" 2>"$ROW_DIR/ntf.err" &
	ROW_MON=$!
	wait_subscribed "$ROW_MON" || return 1
	# Where the table starts from.
	ynl --dump dev-get >"$ROW_DIR/dump.0" 2>&1
}

# row DESC PORT BIT PROTECTION REASON [relation=R] [owner=O] -- ACTION...
#   BIT: expected macsec-hw-offload (on/off, - when the netdev is gone);
#   PROTECTION: expected protection, or `absent`; REASON: expected reason
#   (empty for none); ACTION: run with eval, must succeed.
row() {
	local desc=$1 port=$2 bit=$3 prot=$4 reason=$5 relation=- owner=- rc
	shift 5
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		case $1 in
		relation=*) relation=${1#relation=} ;;
		owner=*) owner=${1#owner=} ;;
		esac
		shift
	done
	shift
	ROW_N=$((ROW_N + 1))
	eval "$*" >"$ROW_DIR/action.$ROW_N" 2>&1
	rc=$?
	ynl --dump dev-get >"$ROW_DIR/dump.$ROW_N" 2>&1
	printf '%s\t' "$ROW_N" "$desc" "$port" "$bit" "$(hw_macsec "$port")" \
		"$prot" "${reason:--}" "$relation" "$owner" "$rc" >>"$ROW_DIR/rows"
	echo >>"$ROW_DIR/rows"
}

# Ends the monitor and reports one KTAP result per row.
table_end() {
	local verdict desc
	kill -USR1 "$ROW_MON" 2>/dev/null
	wait "$ROW_MON"
	while IFS=$'\t' read -r verdict desc; do
		case $verdict in
		PASS) ktap_test_pass "$desc" ;;
		FAIL) ktap_test_fail "$desc" ;;
		*) echo "$verdict${desc:+ $desc}" ;;
		esac
	done < <(/usr/bin/python3 "$lib_dir/lockstep_check.py" "$ROW_DIR")
}

# Two netdevsim devices with one port each, linked back to back in the
# current namespace and up, so that both have carrier. Sets NSIM_A/NSIM_B.
nsim_pair() {
	local a b fd
	a=$(nsim_new 1) && b=$(nsim_new 1) || return 1
	NSIM_A=$(nsim_port "$a" 0)
	NSIM_B=$(nsim_port "$b" 0)
	NSIM_A_ID=$a
	exec {fd}</proc/self/ns/net
	echo "$fd:$(cat "/sys/class/net/$NSIM_A/ifindex") $fd:$(cat "/sys/class/net/$NSIM_B/ifindex")" \
		> /sys/bus/netdevsim/link_device || return 1
	exec {fd}<&-
	ip link set "$NSIM_A" up && ip link set "$NSIM_B" up
}

# The bed every lockstep table starts from: root, the tools, the module, the
# YNL CLI, the RDMA core (RXE lives in init_net only in 6.12, so the tables
# run there) and a netdevsim pair (NSIM_A, NSIM_B); all cleaned up on exit.
lockstep_bed() {
	require_root
	require_cmd ip ethtool rdma insmod rmmod
	require_ko "$MODULE_KO" "module under test (MACSEC_BRIDGE_KO)"
	require_ynl
	if [ ! -d /sys/class/infiniband ]; then
		ktap_skip_all "RDMA core unavailable"
		exit "$KSFT_SKIP"
	fi
	trap lockstep_cleanup EXIT
	nsim_pair || { ktap_skip_all "netdevsim unavailable"; exit "$KSFT_SKIP"; }
}

lockstep_cleanup() {
	rdma link del mb_rxe0 2>/dev/null
	ip link del macsec0 2>/dev/null
	nsim_del_all
	rmmod macsec_bridge 2>/dev/null
	rm -rf "$ROW_DIR"
}

# A 128-bit key for `ip macsec`.
MB_KEY=01234567890123456789012345678901
