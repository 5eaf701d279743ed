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
# Every test module the kselftests name (NAME.ko, wherever they build its
# path) is built by their own Kbuild, but the module under test and the
# kernel's own; and no kselftest needs a program the tree lacks: a
# variable empty unless the caller sets it (X=${Y:-}, quoted or not) that
# the test then requires, or a command of this repository's tools.
if ! cat "$@" | python3 -c '
import re, sys
KERNEL = {"macsec_bridge", "macsec"}
TOOLS = {"dranet-sec"}
f, built, need, empty, bad = None, set(), {}, set(), []
for raw in sys.stdin:
    raw = raw.rstrip("\n")
    if raw.startswith("+++ b/"):
        f = raw[6:]
        continue
    if not raw.startswith("+") or f is None:
        continue
    line = raw[1:]
    if f.endswith("/test_modules/Kbuild"):
        m = re.match(r"obj-m\s*[+:]?=(.*)", line)
        if m:
            built.update(o[:-2] for o in m.group(1).split() if o.endswith(".o"))
        continue
    if not f.startswith("tools/testing/selftests/"):
        continue
    code = not line.lstrip().startswith(("#", "//"))
    for m in re.finditer(r"(?<![\w.])(\w+)\.ko(?![\w.])", line):
        # A module file, not an attribute (self.ko): the last part of a path,
        # or a name with an underscore, as every test module has.
        name = m.group(1)
        file_like = line[:m.start()].endswith("/") or "_" in name
        if code and file_like and name not in KERNEL:
            need.setdefault(name, f)
    m = re.match(r"\s*(?:local\s+)?(\w+)=\"?\$\{\w+:-\}\"?\s*$", line)
    if m:
        empty.add((f, m.group(1)))
    for m in re.finditer(r"require_(?:ko|cmd)\s+(.*)", line):
        for w in m.group(1).split():
            v = w.strip("\"")
            if v.startswith("$") and (f, v[1:]) in empty:
                bad.append(f"{f} needs a program the tree lacks ({v})")
            elif v in TOOLS:
                bad.append(f"{f} needs a program the tree lacks ({v})")
for ko, where in sorted(need.items()):
    if ko not in built:
        bad.append(f"{where} loads a test module the in-tree Kbuild does not build: {ko}.ko")
for b in bad:
    print("FAIL: " + b)
sys.exit(1 if bad else 0)
'; then
	fail=1
fi
[ "$fail" -eq 0 ] || exit 1
echo "ok: the in-tree user ($#) has no out-of-tree cfg, adds every module it declares," \
	"reaches the kernel through the kernel crate only, and its kselftests build" \
	"every test module they load and need no program the tree lacks"
