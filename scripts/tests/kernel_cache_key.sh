#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel cache key moves with the patch series and the variant, and
# only with them: same inputs, same key (no rebuild); any patch of the
# abstractions added or edited, a new key (rebuild), but not one of the
# in-tree user's; the stock tree shares the base and says "none". The
# series applies to the pristine tree.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/scripts/toolchain.env"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() { echo "FAIL: $*"; exit 1; }

cp -r "$top/patches/$MODULE_SERIES" "$tmp/series"
skey() { SERIES_DIR=$tmp/series "$top/scripts/kernel.sh" --key "$@"; }
s0=$(skey)
[ "$s0" = "$(skey)" ] || fail "key is not stable"
[ "$(skey --variant kasan)" != "$s0" ] || fail "kasan variant shares the debug key"
echo '# probe' > "$tmp/series/README.md"
[ "$(skey)" = "$s0" ] || fail "a README.md beside the series changed the key"
rm "$tmp/series/README.md"
# The stock tree: no series, whatever SERIES_DIR says; its own key.
st=$(skey --stock)
[ "${st##*-}" = none ] || fail "stock key $st does not say none"
[ "${st%-*}" = "${s0%-*}" ] || fail "stock key $st has another base than $s0"
# The cover letter applies nothing: editing it keeps the key.
cover=$tmp/series/0000-cover-letter.patch
if [ -f "$cover" ]; then
	echo ' ' >> "$cover"
	[ "$(skey)" = "$s0" ] || fail "editing the cover letter changed the key"
fi
# The in-tree user (the module and its kselftests, the last patches) is
# not built into the test kernel: editing it keeps the key.
user=$(find "$tmp/series" -name '[0-9][0-9][0-9][0-9]-net-macsec_bridge-*.patch' | head -1)
[ -n "$user" ] || fail "no patch of the in-tree user in the series"
echo ' ' >> "$user"
[ "$(skey)" = "$s0" ] || fail "editing the in-tree user's patch changed the key"
first=$(find "$tmp/series" -name '*.patch' ! -name '0000-*' | LC_ALL=C sort | head -1)
cp "$first" "$tmp/first.orig"
echo ' ' >> "$first"
[ "$(skey)" != "$s0" ] || fail "editing a patch kept the key"
cp "$tmp/first.orig" "$first"
[ "$(skey)" = "$s0" ] || fail "restoring the series did not restore the key"
cp "$first" "$tmp/series/9999-probe.patch"
s1=$(skey)
[ "$s1" != "$s0" ] || fail "adding a patch kept the key"
mv "$tmp/series/9999-probe.patch" "$tmp/series/9999-renamed.patch"
[ "$(skey)" != "$s1" ] || fail "renaming a patch kept the key"
rm "$tmp/series/9999-renamed.patch"
[ "$(skey)" = "$s0" ] || fail "removing the added patch did not restore the key"

mkdir "$tmp/tree"
"$top/scripts/series.sh" apply "$tmp/tree" >/dev/null ||
	fail "the series does not apply to the pristine tree"
while IFS= read -r f; do
	[ -s "$tmp/tree/$f" ] || fail "series file $f missing after apply"
done < <("$top/scripts/series.sh" list)
echo "ok: cache key and series"
