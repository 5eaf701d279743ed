#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# How make check reads a guest's results (scripts/check.sh, sourced with
# CHECK_SH_LIB=1), on results made up here against an inventory made up
# here: a skip the inventory does not allow is a failure (a whole test
# where it allows one check), an allowed one a skip and never a pass (a
# test's own skipped check too, beside the test's pass); a listed test
# that did not report fails, and so does a reported one the inventory
# does not list; a host check that skips fails.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

printf '%s\n' "g	a.sh" "g	b.sh	skip: the kernel lacks b" \
	"g	dmesg_clean.sh	skip-check: the kernel lacks kmemleak" "g	c.sh" \
	"g	e.sh	skip-check: one check only" >"$tmp/inventory"
# shellcheck source=/dev/null
MB_INVENTORY=$tmp/inventory CHECK_SH_LIB=1 . "$top/scripts/check.sh" >/dev/null ||
	fail "check.sh cannot be sourced"
# shellcheck disable=SC2154 # set by check.sh
checklog=$log
trap 'rm -rf "$tmp" "$checklog"' EXIT

mkdir -p "$tmp/job"
p='selftests: net/macsec_bridge:'
cat >"$tmp/job/ksft-results" <<KTAP
# $p a.sh
# 1..0 # SKIP the kernel lacks a
ok 1 $p a.sh # SKIP
# $p b.sh
# 1..0 # SKIP the kernel lacks b
ok 2 $p b.sh # SKIP
# $p dmesg_clean.sh
# 1..2
# ok 1 kmemleak not available in this kernel # SKIP
# ok 2 dmesg has no warning
ok 3 $p dmesg_clean.sh
# $p d.sh
# 1..1
# ok 1 fine
ok 4 $p d.sh
# $p e.sh
# 1..0 # SKIP all of it
ok 5 $p e.sh # SKIP
KTAP
# In this shell, for the counts; what it printed, from a file.
top_log=$tmp log=$tmp/job vm_results g >"$tmp/out"
out=$(<"$tmp/out")
echo "$out"
grep -q '^FAIL  kselftest net/macsec_bridge: a.sh skipped (the kernel lacks a), and the inventory allows' <<<"$out" ||
	fail "a skip the inventory does not allow did not fail"
grep -q '^SKIP  kselftest net/macsec_bridge: b.sh (skipped: the kernel lacks b; allowed: the kernel lacks b)' \
	<<<"$out" || fail "an allowed skip is not a skip"
grep -q '^PASS  kselftest net/macsec_bridge: dmesg_clean.sh$' <<<"$out" &&
grep -q '^SKIP  kselftest net/macsec_bridge: dmesg_clean.sh, a check (skipped: kmemleak not available' <<<"$out" ||
	fail "a test's own skipped check is not counted as a skip beside its pass"
grep -q '^FAIL  kselftest net/macsec_bridge: e.sh skipped (all of it)' <<<"$out" ||
	fail "a whole test skipped where the inventory allows one of its checks to"
[ "$passed/$failed/$skipped" = 2/2/2 ] ||
	fail "counted $passed passed, $failed failed, $skipped skipped, not 2/2/2"

out=$(inventory_check)
echo "$out"
grep -q '^FAIL  inventory: g c.sh did not report' <<<"$out" ||
	fail "a listed test that did not report passed"
grep -q '^FAIL  inventory: g d.sh reported, but scripts/inventory does not list it' <<<"$out" ||
	fail "an unlisted test that reported passed"
[ "$(grep -c '^FAIL' <<<"$out")" -eq 2 ] || fail "the inventory check failed more than those"

out=$(run "a host check" bash -c 'exit 4')
grep -q '^FAIL  a host check (it skipped)' <<<"$out" || fail "a host check's skip did not fail"
echo "ok: skips held to the inventory, the inventory to what reported"
