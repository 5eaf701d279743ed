#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The series' in-tree user is in-tree code: the driver and its kselftests
# as the kernel tree gets them (the last two patches) carry no cfg of the
# out-of-tree build (MACSEC_BRIDGE_COMPAT), and every module a crate root
# of theirs declares is a file they add. The DKMS build adds its files
# around them (Kbuild: compat_root.sh), never inside. The driver reaches
# the kernel through the kernel crate, not raw bindings.
#
#   scripts/tests/in_tree_user.sh [PATCH...]   (default: the user's patches)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/scripts/toolchain.env"
if [ $# -eq 0 ]; then
	mapfile -t patches < <(KERNEL_SERIES=$MODULE_SERIES "$top/scripts/series.sh" user-patches)
	set -- "${patches[@]}"
fi
fail=0
for p in "$@"; do
	name=${p##*/}
	if grep -n '^+.*MACSEC_BRIDGE_COMPAT' "$p"; then
		echo "FAIL: $name: the out-of-tree build's cfg in the in-tree code (above)"
		fail=1
	fi
	# Each added Rust file's `mod NAME;` (no #[path]) needs DIR/NAME.rs
	# or DIR/NAME/mod.rs among the added files.
	awk -v patch="$name" '
		/^\+\+\+ b\// { f = substr($0, 7); rs = (f ~ /\.rs$/); added[f] = 1; prev = ""; next }
		rs && /^\+/ {
			line = substr($0, 2)
			if (line ~ /^(pub(\([a-z]+\))? )?mod [a-z_0-9]+;$/ && prev !~ /^#\[path = /) {
				m = line; sub(/^.*mod /, "", m); sub(/;$/, "", m)
				dir = f; sub(/[^\/]*$/, "", dir)
				want[dir m] = f
			}
			prev = line
		}
		END {
			bad = 0
			for (w in want)
				if (!((w ".rs") in added) && !((w "/mod.rs") in added)) {
					print "FAIL: " patch ": " want[w] " declares a module it does not add: " w ".rs"
					bad = 1
				}
			exit bad
		}' "$p" || fail=1
done
# The driver calls the kernel through the kernel crate's abstractions,
# never through raw bindings.
raw=$(for p in "$@"; do
	awk '/^\+\+\+ b\// { f = substr($0, 7); next }
		f ~ /^drivers\/net\/macsec_bridge\/.*\.rs$/ && /^\+/ && !/^\+[[:space:]]*\/\// { print }' "$p"
done | { grep -o 'bindings::[a-zA-Z_0-9]*' || true; } | sed 's/^bindings:://' | sort | uniq -c)
if [ -n "$raw" ]; then
	echo "FAIL: the in-tree driver calls raw bindings the kernel crate should wrap (count, name):"
	echo "$raw"
	fail=1
fi
[ "$fail" -eq 0 ] || exit 1
echo "ok: the in-tree user ($#) has no out-of-tree cfg, adds every module it declares," \
	"and reaches the kernel through the kernel crate only"
