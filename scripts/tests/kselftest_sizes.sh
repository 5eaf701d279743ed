#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kselftests' sizes by tier (selftests/.../sizes, read by lib.sh):
# MB_TIER=check takes the check column, full (and no tier) the full one,
# a size set in the environment wins, an unknown tier fails the test as a
# broken bed; every size is read by a test, none of those tests keeps a
# default of its own, and no check size exceeds its full one.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
dir=$top/selftests/net/macsec_bridge
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# The kselftest KTAP helpers lib.sh sources, as stubs.
cat >"$tmp/ktap_helpers.sh" <<'STUB'
KSFT_FAIL=1
ktap_print_header() { :; }
ktap_set_plan() { :; }
ktap_test_fail() { echo "not ok $*"; }
STUB

# sizes TIER [VAR=VALUE...]: VAR=VALUE for each size, as a test sees it.
sizes() {
	local tier=$1
	shift
	env -i PATH="$PATH" KSFT_DIR="$tmp" MB_TIER="$tier" "$@" bash -c '
		. "$1/lib.sh" || exit 1
		# The directory lib.sh made; this replaces its exit scan of the
		# kernel log, which is for a test in a guest.
		trap "rm -rf \"\${ROW_DIR:-}\"" EXIT
		for v in $(awk "/^MB_/ { print \$1 }" "$1/sizes"); do echo "$v=${!v}"; done
		echo "ROW_DIR=$ROW_DIR"' _ "$dir"
}

mapfile -t rows < <(awk '/^MB_/ { print $1, $2, $3 }' "$dir/sizes")
[ ${#rows[@]} -ge 4 ] || fail "sizes lists ${#rows[@]} sizes"
check=$(sizes check) || fail "MB_TIER=check: $check"
full=$(sizes full) || fail "MB_TIER=full: $full"
none=$(sizes '') || fail "no MB_TIER: $none"
for r in "${rows[@]}"; do
	read -r var c f <<<"$r"
	grep -qx "$var=$c" <<<"$check" || fail "MB_TIER=check gives $(grep "^$var=" <<<"$check"), not $c"
	grep -qx "$var=$f" <<<"$full" || fail "MB_TIER=full gives $(grep "^$var=" <<<"$full"), not $f"
	grep -qx "$var=$f" <<<"$none" || fail "no MB_TIER gives $(grep "^$var=" <<<"$none"), not $f"
	[ "$c" -le "$f" ] || fail "$var: check size $c above full size $f"
	over=$(sizes check "$var=7") || fail "$var=7 in the environment: $over"
	grep -qx "$var=7" <<<"$over" || fail "$var=7 in the environment is not kept"
	users=$(grep -l "\$$var\b" "$dir"/*.sh | grep -v /lib.sh) ||
		fail "no kselftest reads $var"
	for u in $users; do
		! grep -q "\${$var:-" "$u" || fail "$(basename "$u") keeps a default of its own for $var"
	done
done
# Sourcing lib.sh makes a row directory; nothing here may leave one.
for d in $(printf '%s\n' "$check" "$full" "$none" | sed -n 's/^ROW_DIR=//p'); do
	[ ! -e "$d" ] || fail "$d left behind"
done
out=$(sizes bogus) && fail "MB_TIER=bogus accepted"
grep -q "not ok .*MB_TIER is 'bogus'" <<<"$out" || fail "MB_TIER=bogus: no message: $out"
echo "ok: ${#rows[@]} sizes, each by tier, each read by a test"
