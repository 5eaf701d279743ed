#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of `make check`: lay out selftests/ the way the kernel's
# kselftest install does and run them with the kernel's own runner, KTAP on
# stdout.  Exits non-zero if any test failed.
#
#   scripts/vm-selftests.sh KDIR [TEST...]
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/toolchain.env"
kdir=$1
shift

stage=$(mktemp -d /tmp/ksft.XXXXXX)
mkdir -p "$stage/net"
ln -s "$kdir/tools/testing/selftests/kselftest" "$stage/kselftest"
# A copy, not a symlink: the tests reach the runner's helpers through "..".
cp -r "$top/selftests/net/macsec_bridge" "$stage/net/"

tests=("$@")
if [ ${#tests[@]} -eq 0 ]; then
	mapfile -t tests < <("$top/scripts/inventory-list" "$MODULE_SERIES")
fi

mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
# udev, as virtme-ng starts it, runs a program for every netdev the tests
# add (systemd-sysctl, 99-systemd.rules) and every RDMA device
# (rdma_rename, 60-rdma-persistent-naming.rules): about a second of the
# guest's CPU each under TCG, beside the tests and long after them (the
# 3,072 netdevs of scale.sh kept it busy through the next test), and a
# sysctl write racing the test on each new netdev. Masked for this boot;
# udev still renames netdevs and settles as before.
if [ -S /run/udev/control ]; then
	mkdir -p /run/udev/rules.d
	ln -sf /dev/null /run/udev/rules.d/99-systemd.rules
	ln -sf /dev/null /run/udev/rules.d/60-rdma-persistent-naming.rules
	udevadm control --reload
fi
export BASE_DIR=$stage
# Tests that use the kernel tree's tools (the YNL CLI) find them here: a
# copy of the tree's tools/net/ynl on the guest's tmpfs. virtme-ng mounts
# the kernel cache uncached over 9p, where each of the hundreds of stat()s
# Python makes importing the CLI's library costs about 10 ms under TCG.
mkdir -p "$stage/kdir/tools/net"
cp -r "$kdir/tools/net/ynl" "$stage/kdir/tools/net/"
export KSFT_KDIR=$stage/kdir MACSEC_BRIDGE_SPEC=$top/Documentation/netlink/specs/macsec_bridge.yaml
cd "$stage/net/macsec_bridge" || exit 1
# shellcheck source=/dev/null
. "$stage/kselftest/runner.sh"
# The console merges the guest's stdout and stderr: results also go to a
# file of their own ($KSFT_RESULTS, in a directory shared with the host).
results=${KSFT_RESULTS:-/tmp/ksft-results}
# The runner writes each test's own output to $logfile, /dev/stdout; under
# virtme-ng that names the console's port, not the pipe into tee, and the
# results would keep only the summary lines (no plan, no SKIP reason).
# /proc/self/fd/1 is opened by the shell that runs the test: the pipe.
logfile=/proc/self/fd/1
# The KUnit suites ran at boot; keep their KTAP for the host to count.
cat /sys/kernel/debug/kunit/*/results > "$results.kunit" 2>/dev/null
# Each test's start and end, with the guest's clock (seconds), in
# $results.times: what make check reports as the slowest tests.
stamp() {
	local l
	while IFS= read -r l; do
		case $l in
		'# selftests: '* | 'ok '* | 'not ok '*) printf '%(%s)T %s\n' -1 "$l" ;;
		esac
	done
}
run_many "${tests[@]}" | tee "$results" >(stamp >"$results.times")
wait $!
# Every test reported, none failed.
[ "$(grep -cE '^(not )?ok [0-9]+ selftests:' "$results")" -eq ${#tests[@]} ] &&
! grep -q '^not ok' "$results"
