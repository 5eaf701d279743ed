#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make check-series`: the kernel-crate patch series builds at every patch,
# as someone bisecting through it needs, with no rustc or clippy warning in
# a file the series touches.
#
#   scripts/series-bisect.sh [--variant debug]
#
# The whole series is what the cached test kernel holds, and `make check`
# holds that build to zero warnings. This script copies that tree once,
# builds the series' in-tree user there (the module with
# CONFIG_MACSEC_BRIDGE=m, and its kselftests' test module) and takes it
# away again, then, for each shorter prefix of the series (all patches but the last, then one
# fewer, ... then the first alone), puts the prefix's files in place,
# touching only the files whose content differs, and rebuilds
# incrementally with the same command and config as scripts/kernel.sh.
# Last comes scripts/series-builtin.sh: the whole series built in, with
# CONFIG_NET_NS=n, booted with the kernel crate's doctests.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/toolchain.env"

variant=debug
[ "${1:-}" = --variant ] && variant=$2
export KERNEL_SERIES=$MODULE_SERIES
kdir=$("$top/scripts/kernel.sh" --variant "$variant")

mapfile -t patches < <("$top/scripts/series.sh" patches)
mapfile -t user < <("$top/scripts/series.sh" user-patches)
n=${#patches[@]}
[ "$n" -gt 1 ] || { echo "series: $n patch(es), nothing to bisect"; exit 0; }

scratch=$(mktemp -d "$CACHE_DIR/series-bisect.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
work=$scratch/tree
cp -a "$kdir" "$work"
# The series as commits on the pristine files, one checkout per prefix.
"$top/scripts/series.sh" edit "$scratch/src" >/dev/null
mapfile -t commits < <(git -C "$scratch/src" rev-list --reverse pristine..HEAD)
[ "${#commits[@]}" -eq "$n" ] || { echo "series: ${#commits[@]} commits for $n patches" >&2; exit 1; }
mapfile -t files < <("$top/scripts/series.sh" list)
paths=$(printf '%s\n' "${files[@]}" | paste -sd'|')

kmake() {
	make -C "$work" ARCH=x86_64 RUSTC="$RUSTC" HOSTRUSTC="$RUSTC" RUSTDOC="$RUSTDOC" \
		BINDGEN="$BINDGEN" RUSTFMT="$RUSTFMT" CLIPPY_DRIVER="$CLIPPY_DRIVER" "$@"
}

echo "TAP version 13"
echo "1..$((n + 1))"
failed=0
t=1

# The whole series with its in-tree user, as `git am` leaves a tree: the
# module built in the tree with CONFIG_MACSEC_BRIDGE=m (W=1 would rebuild
# the kernel crate; `make check` builds the same files with W=1 outside
# the tree), and its kselftests' test modules as the kselftests build them.
# Taken away again for the prefixes.
log=$scratch/build-user.log
tm=$work/tools/testing/selftests/net/macsec_bridge/test_modules
start=$(date +%s)
if [ ${#user[@]} -eq 0 ]; then
	echo "not ok 1 - the in-tree user: no patch of it in patches/$KERNEL_SERIES"
	failed=$((failed + 1))
elif ! { git -C "$work" apply "${user[@]}" &&
	"$work/scripts/config" --file "$work/.config" -m MACSEC_BRIDGE &&
	kmake -s olddefconfig && grep -qx 'CONFIG_MACSEC_BRIDGE=m' "$work/.config" &&
	kmake -s -j"$(nproc)" CLIPPY=1 bzImage modules &&
	[ -f "$work/drivers/net/macsec_bridge/macsec_bridge.ko" ] &&
	make -s -C "$tm" \
		KDIR="$work" ARCH=x86_64 RUSTC="$RUSTC" CLIPPY_DRIVER="$CLIPPY_DRIVER" CLIPPY=1 W=1 &&
	[ -f "$tm/macsec_test_nic.ko" ] && [ -f "$tm/macsec_notifier_probe.ko" ] &&
	[ -f "$tm/crate_api_probe.ko" ]
} >"$log" 2>&1; then
	echo "not ok 1 - the series with its in-tree user: build failed"
	sed 's/^/# /' "$log" | tail -40
	failed=$((failed + 1))
elif grep -E -A3 '^(warning|error)' "$log" | grep -E -e "--> (drivers/net/macsec_bridge|tools/testing)/" >/dev/null ||
	grep -E '^(drivers/net/macsec_bridge|tools/testing)/.*: (warning|error):' "$log" >/dev/null; then
	echo "not ok 1 - the series with its in-tree user: warnings in its files"
	grep -E -A6 '^(warning|error)|: (warning|error):' "$log" | sed 's/^/# /' | head -60
	failed=$((failed + 1))
else
	echo "ok 1 - the series with its in-tree user builds macsec_bridge.ko (CONFIG_MACSEC_BRIDGE=m) and its kselftests' test modules, no warning ($(($(date +%s) - start)) s)"
fi
if [ ${#user[@]} -gt 0 ]; then
	mapfile -t rev < <(printf '%s\n' "${user[@]}" | tac)
	git -C "$work" apply -R "${rev[@]}" 2>/dev/null || {
		echo "series-bisect: cannot take the in-tree user away again" >&2
		exit 1
	}
fi
for ((k = n - 1; k >= 1; k--)); do
	t=$((t + 1))
	git -C "$scratch/src" checkout -q "${commits[k - 1]}"
	for f in "${files[@]}"; do
		if [ -e "$scratch/src/$f" ]; then
			cmp -s "$scratch/src/$f" "$work/$f" || {
				mkdir -p "$(dirname "$work/$f")"
				rm -f "$work/$f"
				cp "$scratch/src/$f" "$work/$f"
			}
		else
			rm -f "$work/$f"
		fi
	done
	name=$(basename "${patches[k - 1]}" .patch)
	log=$scratch/build-$k.log
	start=$(date +%s)
	if ! kmake -s -j"$(nproc)" CLIPPY=1 bzImage modules >"$log" 2>&1; then
		echo "not ok $t - up to $name: build failed"
		sed 's/^/# /' "$log" | tail -40
		failed=$((failed + 1))
	elif grep -E -A3 '^(warning|error)' "$log" | grep -E -e "--> ($paths)" >/dev/null; then
		echo "not ok $t - up to $name: warnings in the series' files"
		grep -E -A6 '^(warning|error)' "$log" | sed 's/^/# /' | head -60
		failed=$((failed + 1))
	else
		echo "ok $t - up to $name builds with no warning ($(($(date +%s) - start)) s)"
	fi
done
# Last, the whole series again, built in and without network namespaces,
# booted with the doctests (its own copy of the tree).
t=$((t + 1))
"$top/scripts/series-builtin.sh" --variant "$variant" --number "$t" || failed=$((failed + 1))
echo "$((n + 1 - failed)) passed, $failed failed, 0 skipped"
[ "$failed" -eq 0 ]
