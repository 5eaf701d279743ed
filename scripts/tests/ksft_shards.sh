#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/ksft-shards, as `make check` uses it: the stock kernel's
# kselftests in two shards, and the test kernel's in two (balanced against
# them: the first slot runs a test kernel shard, then a stock one; the
# second starts after the host tests and the stock and Debian stages,
# then a stock shard and the Debian guest). Each holds every test exactly
# once, in the inventory's order, each shard ending with the dmesg scan;
# the slots' estimated times differ by no more than the longest test;
# --sum adds; a test missing from the times counts 60 s.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/scripts/toolchain.env"
shards=$top/scripts/ksft-shards
times=$top/scripts/ksft-times
fail() { echo "FAIL: $*"; exit 1; }

inv() { "$top/scripts/inventory-list" "$1"; }
mapfile -t all < <(inv "$MODULE_SERIES")
[ ${#all[@]} -gt 10 ] || fail "no $MODULE_SERIES tests read from scripts/inventory"
mapfile -t stock < <(inv stock)
[ ${#stock[@]} -gt 10 ] || fail "no stock tests read from scripts/inventory"
sum() { local g=$1; shift; "$shards" --sum "$times" "$g" "$@"; }

# same_once LIST LINE...: the shards LINE... hold every test of LIST
# once (the dmesg scan once per shard, last), in LIST's order.
same_once() {
	local -n list=$1
	shift
	local l t i prev got=() s
	for l in "$@"; do
		read -ra s <<<"$l"
		[ "${s[-1]}" = dmesg_clean.sh ] || fail "a shard does not end with dmesg_clean.sh: $l"
		unset 's[-1]'
		got+=("${s[@]}")
		prev=-1
		for t in "${s[@]}"; do
			for i in "${!list[@]}"; do [ "${list[$i]}" = "$t" ] && break; done
			[ "${list[$i]}" = "$t" ] || fail "$t is not in the inventory"
			[ "$i" -gt "$prev" ] || fail "$t out of the inventory's order in: $l"
			prev=$i
		done
	done
	[ "$(printf '%s\n' "${got[@]}" | sort)" = \
	  "$(printf '%s\n' "${list[@]}" | grep -vx dmesg_clean.sh | sort)" ] ||
		fail "the shards do not hold each test exactly once"
}

# The stock shards, then what each slot does besides its test kernel
# shard, as check.sh reckons it (40 s a boot).
mapfile -t sl < <("$shards" "$times" stock 2 0,0 "${stock[@]}")
[ ${#sl[@]} -eq 2 ] || fail "${#sl[@]} stock shards, not 2"
same_once stock "${sl[@]}"
# shellcheck disable=SC2086 # a shard is a list of words
b1=$((40 + $(sum stock ${sl[0]})))
# shellcheck disable=SC2086
b2=$(($(sum host "(tests)") + 40 + $(sum stock "(build)" ${sl[1]}) + 40 +
	$(inv debian | xargs "$shards" --sum "$times" debian "(build)")))
mapfile -t lines < <("$shards" "$times" "$MODULE_SERIES" 2 "$b1,$b2" "${all[@]}")
[ ${#lines[@]} -eq 2 ] || fail "${#lines[@]} shards, not 2"
same_once all "${lines[@]}"

# Balanced: the slots differ by no more than the longest test.
load() { sum "$MODULE_SERIES" $1; }
# shellcheck disable=SC2046
longest=$(for t in "${all[@]}" "${stock[@]}"; do sum "$MODULE_SERIES" "$t"; sum stock "$t"
	done | sort -n | tail -1)
a=$(($(load "${lines[0]}") + b1))
b=$(($(load "${lines[1]}") + b2))
d=$((a > b ? a - b : b - a))
[ "$d" -le "$longest" ] || fail "slots of $a s and $b s differ by more than $longest s"
stock="$b1 and $b2"

# A test the times do not list counts 60 s; --sum of nothing is 0.
[ "$("$shards" --sum "$times" "$MODULE_SERIES" no_such_test.sh)" = 60 ] ||
	fail "an unlisted test does not count 60 s"
[ "$("$shards" --sum "$times" "$MODULE_SERIES" dmesg_clean.sh)" -ge 0 ] || fail "--sum"
"$shards" "$times" x 0 0 a.sh 2>/dev/null && fail "N=0 accepted"
echo "ok: slots of $a s and $b s (besides the test kernel's shards: $stock s), longest test $longest s"
