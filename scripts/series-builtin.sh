#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make check-series`, its last test: the series with its in-tree user in
# the configuration no test bed uses but randconfig, syzbot and embedded
# builds do. Network namespaces off (CONFIG_NET_NS=n: the kernel crate's
# namespace calls must not need the functions that only exist with them),
# MACsec, RDMA and macsec_bridge built in, and the kernel crate's doctests
# run as KUnit tests at boot, after every built-in module's init: a doctest
# that told the MACsec chains something would reach macsec_bridge's real
# observers there, where CONFIG_MACSEC_BRIDGE=m hides it.
#
#   scripts/series-builtin.sh [--variant debug] [--number N]
#
# One test, in TAP (--number: as test N of a plan its caller printed): the
# kernel builds with no warning in the series' or the user's files, boots,
# macsec_bridge is up before the doctests start (its init line, its generic
# netlink family), the doctests suite passes with the MACsec notifier's own
# doctest among its passed cases (having registered beside macsec_bridge:
# its line in the log), the log holds no splat and kmemleak finds no leak.
# It copies the cached test kernel's tree, whose prerequisites are the test
# kernel's: a missing one fails, it never skips.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/toolchain.env"

variant=debug
num=
while [ $# -gt 0 ]; do
	case "$1" in
	--variant) variant=$2; shift 2 ;;
	--number) num=$2; shift 2 ;;
	*) echo "usage: series-builtin.sh [--variant V] [--number N]" >&2; exit 2 ;;
	esac
done
export KERNEL_SERIES=$MODULE_SERIES
name="built in, CONFIG_NET_NS=n, with the kernel crate's doctests at boot"
# A command that fails outside fail() still ends the test with its line.
trap 'echo "not ok ${num:-1} - $name: failed at line $LINENO"' ERR
[ -n "$num" ] || printf 'TAP version 13\n1..1\n'
kdir=$("$top/scripts/kernel.sh" --variant "$variant")
mapfile -t user < <("$top/scripts/series.sh" user-patches)
mapfile -t files < <("$top/scripts/series.sh" list)
paths=$(printf '%s\n' "${files[@]}" drivers/net/macsec_bridge/ | paste -sd'|')

scratch=$(mktemp -d "$CACHE_DIR/series-builtin.XXXXXX")
# What the guest writes, outside the cache, which it sees read-only.
out=$(mktemp -d /tmp/series-builtin.XXXXXX)
trap 'rm -rf "$scratch" "$out"' EXIT
work=$scratch/tree
cp -a "$kdir" "$work"

fail() {
	echo "not ok ${num:-1} - $name: $1"
	[ -z "${2:-}" ] || sed 's/^/# /' "$2" | tail -"${3:-40}"
	exit 1
}
kmake() {
	make -C "$work" ARCH=x86_64 RUSTC="$RUSTC" HOSTRUSTC="$RUSTC" RUSTDOC="$RUSTDOC" \
		BINDGEN="$BINDGEN" RUSTFMT="$RUSTFMT" CLIPPY_DRIVER="$CLIPPY_DRIVER" "$@"
}

[ ${#user[@]} -gt 0 ] || fail "no patch of the in-tree user in patches/$KERNEL_SERIES"
log=$scratch/build.log
start=$(date +%s)
want=(NET_NS=n MACSEC=y INFINIBAND=y MACSEC_BRIDGE=y KUNIT=y RUST_KERNEL_DOCTESTS=y)
{
	git -C "$work" apply "${user[@]}" &&
	"$work/scripts/config" --file "$work/.config" -d NET_NS -e MACSEC -e INFINIBAND \
		-e MACSEC_BRIDGE -e KUNIT -e RUST_KERNEL_DOCTESTS &&
	kmake -s olddefconfig
} >"$log" 2>&1 || fail "cannot configure the tree" "$log"
for w in "${want[@]}"; do
	case $w in
	*=n) grep -qx "# CONFIG_${w%=n} is not set" "$work/.config" ;;
	*) grep -qx "CONFIG_$w" "$work/.config" ;;
	esac || fail "olddefconfig did not keep CONFIG_$w (a dependency is missing)"
done
kmake -s -j"$(nproc)" CLIPPY=1 bzImage >"$log" 2>&1 || fail "build failed" "$log"
if grep -E -A3 '^(warning|error)' "$log" | grep -E -e "--> ($paths)" >/dev/null ||
	grep -E "^($paths).*: (warning|error):" "$log" >/dev/null ||
	grep -E "^WARNING: modpost: .*($paths)|^(${paths//.rs/.o}|.*macsec).*: warning: objtool:" "$log" >/dev/null; then
	grep -E -A6 '^(warning|error)|: (warning|error):|^WARNING: modpost' "$log" > "$scratch/warnings" || true
	fail "warnings in the series' files" "$scratch/warnings" 60
fi
built=$(($(date +%s) - start))

# The guest keeps its kernel log and the family lookup; the host judges.
cat > "$out/guest.sh" <<'EOF'
out=$1
genl ctrl get name macsec-bridge > "$out/genl" 2>&1
echo "genl=$?" >> "$out/genl"
kml=/sys/kernel/debug/kmemleak
[ -e "$kml" ] || mount -t debugfs none /sys/kernel/debug
# Objects younger than 5 s are not reported: scan twice, apart.
{ echo scan > "$kml" && sleep 6 && echo scan > "$kml" && cat "$kml" > "$out/kmemleak"; } ||
	echo "kmemleak: cannot scan" > "$out/kmemleak"
dmesg -t > "$out/dmesg"
EOF
start=$(date +%s)
"$top/scripts/vm-run" --kdir "$work" --timeout 1800 --rwdir "$out" \
	bash "$out/guest.sh" "$out" > "$out/vm.log" 2>&1 ||
	fail "the guest failed" "$out/vm.log"
d=$out/dmesg
[ -s "$d" ] || fail "the guest kept no kernel log"
init=$(grep -m1 -n 'macsec_bridge: loaded:' "$d" | cut -d: -f1) || true
suite=$(grep -m1 -n '^    # Subtest: rust_doctests_kernel$' "$d" | cut -d: -f1) || true
[ -n "$init" ] || fail "macsec_bridge never said it loaded" "$d"
[ -n "$suite" ] || fail "the doctests did not run" "$d"
[ "$init" -lt "$suite" ] || fail "macsec_bridge loaded after the doctests started"
grep -q '^genl=0$' "$out/genl" || fail "no macsec-bridge generic netlink family" "$out/genl"
grep -Eq '^    ok [0-9]+ rust_doctest_kernel_net_macsec_notifier_rs_[0-9]+$' "$d" ||
	fail "the MACsec notifier's doctest did not pass" "$d"
# Its registration runs only with CONFIG_MACSEC=y, and prints this then.
grep -q ' offloaded operations so far$' "$d" ||
	fail "the MACsec notifier's doctest passed without registering"
if grep -Eq '^    not ok [0-9]+ rust_doctest_' "$d" || ! grep -Eq '^ok [0-9]+ rust_doctests_kernel$' "$d"; then
	grep -E '^    not ok [0-9]+ rust_doctest_' "$d" > "$scratch/failed" || true
	fail "doctests failed" "$scratch/failed"
fi
# What the kselftests' kernel log checks call a splat: their own pattern,
# read from lib.sh, so the two cannot drift.
SPLAT_PATTERN=
eval "$(grep -E "^SPLAT_PATTERN\+?='[^']*'$" "$top/selftests/net/macsec_bridge/lib.sh")"
pattern=$SPLAT_PATTERN
case $pattern in *WARNING:*'Call Trace:'*) ;; *) fail "no splat pattern in lib.sh" ;; esac
if grep -E "$pattern" "$d" > "$scratch/splats"; then
	fail "the kernel log holds a splat" "$scratch/splats"
fi
if grep -q 'cannot scan' "$out/kmemleak"; then
	fail "kmemleak could not scan" "$out/kmemleak"
elif grep -q '^unreferenced object' "$out/kmemleak"; then
	fail "kmemleak reports leaks" "$out/kmemleak" 60
fi
passed=$(grep -Ec '^    ok [0-9]+ rust_doctest_[a-z0-9_]+$' "$d") || true
echo "ok ${num:-1} - $name: builds with no warning ($built s), macsec_bridge up before $passed doctests passed ($(($(date +%s) - start)) s), no splat, no leak"
