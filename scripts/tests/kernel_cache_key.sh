#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel cache key moves with the rust/ overlay (6.12) or the patch
# series (7.3) and the config, and only with them: same inputs, same key
# (no rebuild); any overlay, patch or fragment change, a new key (rebuild).
# The 7.3 series applies to the pristine tree.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() { echo "FAIL: $*"; exit 1; }

cp -r "$top/rust" "$tmp/overlay" 2>/dev/null || mkdir "$tmp/overlay"
key() { OVERLAY_DIR=$tmp/overlay "$top/scripts/kernel.sh" --key "$@"; }

k0=$(key)
[ "$k0" = "$(key)" ] || fail "key is not stable"

mkdir -p "$tmp/overlay/kernel/net"
echo '// probe' > "$tmp/overlay/kernel/net/probe.rs"
k1=$(key)
[ "$k1" != "$k0" ] || fail "adding an overlay file kept the key"

echo '// probe, edited' > "$tmp/overlay/kernel/net/probe.rs"
k2=$(key)
[ "$k2" != "$k1" ] || fail "editing an overlay file kept the key"

mv "$tmp/overlay/kernel/net/probe.rs" "$tmp/overlay/kernel/net/probe2.rs"
k3=$(key)
[ "$k3" != "$k2" ] || fail "renaming an overlay file kept the key"

rm "$tmp/overlay/kernel/net/probe2.rs"
[ "$(key)" = "$k0" ] || fail "restoring the overlay did not restore the key"

echo '# probe' > "$tmp/overlay/README.md"
[ "$(key)" = "$k0" ] || fail "overlay README.md (not applied) changed the key"

[ "$(key --variant kasan)" != "$k0" ] || fail "kasan variant shares the debug key"

# apply copies files to the same paths under the tree's rust/.
mkdir -p "$tmp/tree/rust/kernel"
echo old > "$tmp/tree/rust/kernel/existing.rs"
ln "$tmp/tree/rust/kernel/existing.rs" "$tmp/shared-inode"
mkdir -p "$tmp/overlay/kernel"
echo new > "$tmp/overlay/kernel/existing.rs"
OVERLAY_DIR=$tmp/overlay "$top/scripts/overlay.sh" apply "$tmp/tree" >/dev/null
[ "$(cat "$tmp/tree/rust/kernel/existing.rs")" = new ] || fail "apply did not replace a file"
[ "$(cat "$tmp/shared-inode")" = old ] || fail "apply wrote through a shared inode"
[ ! -e "$tmp/tree/rust/README.md" ] || fail "apply copied README.md"
# The 7.3 series: the key moves with its patches, and it applies.
cp -r "$top/patches/7.3" "$tmp/series"
skey() { KERNEL_SERIES=7.3 SERIES_DIR=$tmp/series "$top/scripts/kernel.sh" --key; }
s0=$(skey)
[ "$s0" = "$(skey)" ] || fail "7.3 key is not stable"
[ "$s0" != "$k0" ] || fail "7.3 shares the 6.12 key"
# The stock tree: no series, whatever SERIES_DIR says; its own key.
st=$(KERNEL_SERIES=7.3 SERIES_DIR=$tmp/series "$top/scripts/kernel.sh" --key --stock)
[ "${st##*-}" = none ] || fail "stock key $st does not say none"
[ "${st%-*}" = "${s0%-*}" ] || fail "stock key $st has another base than $s0"
first=$(find "$tmp/series" -name '*.patch' | LC_ALL=C sort | head -1)
cp "$first" "$tmp/first.orig"
echo ' ' >> "$first"
[ "$(skey)" != "$s0" ] || fail "editing a patch kept the 7.3 key"
cp "$tmp/first.orig" "$first"
[ "$(skey)" = "$s0" ] || fail "restoring the series did not restore the 7.3 key"
cp "$first" "$tmp/series/9999-probe.patch"
[ "$(skey)" != "$s0" ] || fail "adding a patch kept the 7.3 key"
rm "$tmp/series/9999-probe.patch"

mkdir "$tmp/tree73"
KERNEL_SERIES=7.3 "$top/scripts/series.sh" apply "$tmp/tree73" >/dev/null ||
	fail "the 7.3 series does not apply to the pristine tree"
while IFS= read -r f; do
	[ -s "$tmp/tree73/rust/$f" ] || fail "series file rust/$f missing after apply"
done < <(KERNEL_SERIES=7.3 "$top/scripts/series.sh" list)
echo "ok: cache key, overlay and 7.3 series"
