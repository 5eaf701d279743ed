#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/ksft-shards, as `make check` uses it: the module's kselftests
# in two shards (the second after the host tests and the stock stage)
# hold every test exactly once, in the Makefile's order, each shard ending with the
# dmesg scan; the shards' estimated times differ by no more than the
# longest test; --sum adds; a test missing from the times counts 60 s.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/scripts/toolchain.env"
shards=$top/scripts/ksft-shards
times=$top/scripts/ksft-times
fail() { echo "FAIL: $*"; exit 1; }

read -ra all < <(sed -n 's/^TEST_PROGS := //p' "$top/selftests/drivers/net/macsec_bridge/Makefile")
[ ${#all[@]} -gt 10 ] || fail "no TEST_PROGS read from the Makefile"
# What the second slot does first, as check.sh reckons it: the host
# tests, the stock stage's host half, its guest and 40 s for its boot.
stock=$("$shards" --sum "$times" stock "(build)" dkms_load.sh lockstep_self.sh \
	dpu_lockstep.sh dkms_deb.sh dmesg_clean.sh) || fail "--sum failed"
host=$("$shards" --sum "$times" host "(tests)") || fail "--sum failed"
[ "$stock" -gt 0 ] && [ "$host" -gt 0 ] || fail "estimates: stock $stock s, host $host s"
stock=$((stock + host + 40))
mapfile -t lines < <("$shards" "$times" "$MODULE_SERIES" 2 "0,$stock" "${all[@]}")
[ ${#lines[@]} -eq 2 ] || fail "${#lines[@]} shards, not 2"

# Every test once (the dmesg scan once per shard), in order.
got=()
for l in "${lines[@]}"; do
	read -ra s <<<"$l"
	[ "${s[-1]}" = dmesg_clean.sh ] || fail "a shard does not end with dmesg_clean.sh: $l"
	unset 's[-1]'
	got+=("${s[@]}")
	prev=-1
	for t in "${s[@]}"; do
		for i in "${!all[@]}"; do [ "${all[$i]}" = "$t" ] && break; done
		[ "${all[$i]}" = "$t" ] || fail "$t is not in TEST_PROGS"
		[ "$i" -gt "$prev" ] || fail "$t out of the Makefile's order in: $l"
		prev=$i
	done
done
want=$(printf '%s\n' "${all[@]}" | grep -vx dmesg_clean.sh | sort)
[ "$(printf '%s\n' "${got[@]}" | sort)" = "$want" ] ||
	fail "the shards do not hold each test exactly once"

# Balanced: the loads (the stock guest in the second) differ by no more
# than the longest test.
load() { "$shards" --sum "$times" "$MODULE_SERIES" $1; }
# shellcheck disable=SC2046
longest=$(for t in "${all[@]}"; do load "$t"; done | sort -n | tail -1)
a=$(load "${lines[0]}")
b=$(($(load "${lines[1]}") + stock))
d=$((a > b ? a - b : b - a))
[ "$d" -le "$longest" ] || fail "shards of $a s and $b s differ by more than $longest s"

# A test the times do not list counts 60 s; --sum of nothing is 0.
[ "$("$shards" --sum "$times" "$MODULE_SERIES" no_such_test.sh)" = 60 ] ||
	fail "an unlisted test does not count 60 s"
[ "$("$shards" --sum "$times" "$MODULE_SERIES" dmesg_clean.sh)" -ge 0 ] || fail "--sum"
"$shards" "$times" x 0 0 a.sh 2>/dev/null && fail "N=0 accepted"
echo "ok: shards of $a s and $b s (host tests and stock stage $stock s of it), longest test $longest s"
