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
# The cover letters apply nothing: editing them keeps the key.
covers=$(find "$tmp/series" -name 0000-cover-letter.patch)
[ -n "$covers" ] || fail "no cover letter in the series"
for cover in $covers; do echo ' ' >> "$cover"; done
[ "$(skey)" = "$s0" ] || fail "editing the cover letters changed the key"
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
# Its message and its addresses build nothing: editing them keeps it.
sed -i -e '0,/^Cc: /s//Cc: probe@localhost,\n    /' -e '0,/^$/{/^$/a\
A probe line in the message.
}' "$first"
cmp -s "$first" "$tmp/first.orig" && fail "the probe did not edit the message"
[ "$(skey)" = "$s0" ] || fail "editing a patch's message or Cc changed the key"
cp "$tmp/first.orig" "$first"
[ "$(skey)" = "$s0" ] || fail "restoring the series did not restore the key"
set=$(dirname "$first")
cp "$first" "$set/9999-probe.patch"
s1=$(skey)
[ "$s1" != "$s0" ] || fail "adding a patch kept the key"
mv "$set/9999-probe.patch" "$set/9999-renamed.patch"
[ "$(skey)" != "$s1" ] || fail "renaming a patch kept the key"
rm "$set/9999-renamed.patch"
# A patch moved to another set (the same file, another path) moves it.
last=$(find "$tmp/series" -mindepth 1 -maxdepth 1 -type d | LC_ALL=C sort | tail -1)
[ "$last" != "$set" ] || fail "the series has one set"
mv "$first" "$last/0000a-moved.patch"
[ "$(skey)" != "$s0" ] || fail "moving a patch to another set kept the key"
mv "$last/0000a-moved.patch" "$first"
[ "$(skey)" = "$s0" ] || fail "removing the added patch did not restore the key"

mkdir "$tmp/tree"
"$top/scripts/series.sh" apply "$tmp/tree" >/dev/null ||
	fail "the series does not apply to the pristine tree"
while IFS= read -r f; do
	[ -s "$tmp/tree/$f" ] || fail "series file $f missing after apply"
done < <("$top/scripts/series.sh" list)
echo "ok: cache key and series"
