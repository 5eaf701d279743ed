#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The series' in-tree user is in-tree code: the driver and its kselftests
# as the kernel tree gets them (the last two patches) carry no cfg of the
# out-of-tree build (MACSEC_BRIDGE_COMPAT), and every module a crate root
# of theirs declares is a file they add. The DKMS build adds its files
# around them (Kbuild: compat_root.sh), never inside. The driver reaches
# the kernel through the kernel crate, not raw bindings. The kselftests
# build every test module they load and need nothing the tree lacks.
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
# Every test module a kselftest loads (`$(dirname "$NIC_KO")/NAME.ko`) is
# built by the kselftests' own Kbuild, and no kselftest needs a program
# the tree lacks (`require_ko "$X"` with X empty unless the caller set it).
if ! cat "$@" | awk '
	/^\+\+\+ b\// { f = substr($0, 7); next }
	!/^\+/ { next }
	{ line = substr($0, 2) }
	f ~ /\/test_modules\/Kbuild$/ && line ~ /^obj-m[[:space:]]*[+:]?=/ {
		n = split(line, w, /[[:space:]]+/)
		for (i = 3; i <= n; i++) built[w[i]] = 1
		next
	}
	f ~ /^tools\/testing\/selftests\/.*\.sh$/ {
		if (match(line, /dirname "\$NIC_KO"\)\/[a-z_0-9]+\.ko/)) {
			ko = substr(line, RSTART, RLENGTH); sub(/^.*\//, "", ko)
			sub(/\.ko$/, ".o", ko); need[ko] = f
		}
		if (match(line, /^[A-Z_]+=\$\{[A-Z_]+:-\}$/)) {
			v = line; sub(/=.*/, "", v); empty[f, v] = 1
		}
		if (match(line, /require_ko "\$[A-Z_]+"/)) {
			v = substr(line, RSTART + 13, RLENGTH - 14)
			if ((f, v) in empty) {
				print "FAIL: " f " needs a program the tree lacks ($" v ")"
				bad = 1
			}
		}
	}
	END {
		for (o in need)
			if (!(o in built)) {
				print "FAIL: " need[o] " loads a test module the in-tree Kbuild does not build: " o
				bad = 1
			}
		exit bad
	}'; then
	fail=1
fi
[ "$fail" -eq 0 ] || exit 1
echo "ok: the in-tree user ($#) has no out-of-tree cfg, adds every module it declares," \
	"reaches the kernel through the kernel crate only, and its kselftests build" \
	"every test module they load and need no program the tree lacks"
