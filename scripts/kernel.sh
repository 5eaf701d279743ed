#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build (or find in the cache) the test kernel and print its tree's path.
#
#   scripts/kernel.sh [--variant debug|kasan] [--stock] [--key] [--print]
#
# --stock builds the pristine tree instead: no patch series, as
# a distribution builds it. The self-contained module (DKMS) is tested on it.
#
# The tree is Debian's linux-source-$KERNEL_SERIES (7.3) with the patch
# series patches/$KERNEL_SERIES/ applied with `git am` (scripts/series.sh).
# It is configured from tinyconfig plus the committed fragments and built
# with the pinned toolchain.  It lives in
# $CACHE_DIR/kernel/<series>-<variant>-<base>-<rust>: <base> hashes the
# kernel source version, the config fragments, the toolchain versions and
# $RECIPE; <rust> hashes the series' files ("none" without any).
# A second run with the same inputs does not rebuild.  When only the series
# changed, the newest tree with the same <base> is copied and rebuilt
# incrementally (only what the changed files touch).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/toolchain.env"

variant=debug
mode=build
stock=
while [ $# -gt 0 ]; do
	case "$1" in
	--variant) variant=$2; shift 2 ;;
	--stock) stock=1; shift ;;
	--key) mode=key; shift ;;
	--print) mode=print; shift ;;
	*) echo "kernel.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done

# Inputs that can be overridden, so tests can prove the cache key moves.
# SERIES_DIR is what the <rust> part of the key hashes. A stock tree's
# series is a directory that cannot exist: <rust> is "none".
[ -z "$stock" ] || SERIES_DIR=/dev/null/stock
: "${SERIES_DIR:=$top/patches/$KERNEL_SERIES}"
export SERIES_DIR
rust_tool=$top/scripts/series.sh
: "${KERNEL_TARBALL:=/usr/src/linux-source-$KERNEL_SERIES.tar.xz}"

# How the tree is built.  Part of the cache key: bump it whenever a change
# to this script or series.sh changes what a build produces.
RECIPE="2: tinyconfig+fragments, CLIPPY=1 bzImage modules"

fragments=("$top/scripts/kconfig/vm.config"
	   "$top/selftests/net/macsec_bridge/config"
	   "$top/scripts/kconfig/debug.config")
# A series' own choices come last and win (7.3: MACsec and RDMA as modules,
# as distributions build them).
[ ! -f "$top/scripts/kconfig/$KERNEL_SERIES.config" ] ||
	fragments+=("$top/scripts/kconfig/$KERNEL_SERIES.config")
# RUST with KASAN needs a clang-built kernel (init/Kconfig: RUST depends
# on !KASAN || CC_IS_CLANG): the KASAN variant is built with LLVM.
llvm=()
case "$variant" in
debug) ;;
kasan)
	fragments+=("$top/scripts/kconfig/kasan.config")
	llvm=(LLVM=-19) ;;
*) echo "kernel.sh: unknown variant $variant" >&2; exit 2 ;;
esac

src_version() {
	dpkg-query -W -f='${Version}' "linux-source-$KERNEL_SERIES" 2>/dev/null ||
		stat -c '%s %Y' "$KERNEL_TARBALL"
}

# The abstractions' patches: the series' in-tree user (the module and its
# kselftests, its last patches) is not built into the test kernel, whose
# module is built outside it, so editing the module rebuilds no kernel.
# Of each, its place in the series and what it applies (from its first
# diff on): a reworded message or another Cc builds the same tree.
series_hash() {
	[ -d "$SERIES_DIR" ] || { echo none; return; }
	"$rust_tool" patches | while IFS= read -r p; do
		echo "${p#"$SERIES_DIR"/} $(sed -n '/^diff --git /,$p' "$p" | sha256sum | cut -c1-64)"
	done | sha256sum | cut -c1-64
}

base_key() {
	{
		echo "src $(src_version)"
		echo "variant $variant"
		cat "${fragments[@]}"
		"$RUSTC" --version 2>/dev/null || echo "rustc missing"
		"$BINDGEN" --version 2>/dev/null || echo "bindgen missing"
		[ ${#llvm[@]} -eq 0 ] || clang-19 --version | head -1
		echo "recipe $RECIPE"
	} | sha256sum | cut -c1-16
}

base=$KERNEL_SERIES-$variant-$(base_key)
key=$base-$(series_hash | cut -c1-12)
tree=$CACHE_DIR/kernel/$key

case "$mode" in
key) echo "${key#"$KERNEL_SERIES-$variant-"}"; exit 0 ;;
print) echo "$tree"; [ -f "$tree/.macsec_bridge_built" ]; exit ;;
esac

if [ -f "$tree/.macsec_bridge_built" ]; then
	echo "kernel: cached $tree" >&2
	echo "$tree"
	exit 0
fi

kmake() {
	make -C "$1" ARCH=x86_64 RUSTC="$RUSTC" HOSTRUSTC="$RUSTC" RUSTDOC="$RUSTDOC" \
		BINDGEN="$BINDGEN" RUSTFMT="$RUSTFMT" CLIPPY_DRIVER="$CLIPPY_DRIVER" \
		"${llvm[@]}" "${@:2}"
}

start=$(date +%s)
work=$tree.tmp.$$
trap 'rm -rf "$work" "$work.want"' EXIT
# The newest finished tree with the same base, if any: only the series differs.
prev=$(ls -dt "$CACHE_DIR/kernel/$base"-*/.macsec_bridge_built 2>/dev/null | head -1 || true)
prev=${prev%/.macsec_bridge_built}

# The files a tree's series touched, relative to its top (older trees
# recorded them relative to rust/, as ./kernel/...).
overlay() { sed 's|^\./|rust/|' "$1"; }

if [ -n "$prev" ]; then
	echo "kernel: incremental rebuild from $prev" >&2
	cp -a "$prev" "$work"
	# The wanted files: pristine plus series, for rust/ and every file
	# either series touches. Copy over only the files whose content
	# differs, so make sees new mtimes exactly there; a file the old series
	# changed and the new one does not goes back to pristine.
	want=$work.want
	mkdir -p "$want"
	mapfile -t other < <({ overlay "$work/.macsec_bridge_overlay"; "$rust_tool" list; } |
		grep -v '^rust/' | LC_ALL=C sort -u)
	# A file a series added is not in the tarball: tar skips it.
	tar -xf "$KERNEL_TARBALL" -C "$want" --strip-components=1 \
		"${other[@]/#/linux-source-$KERNEL_SERIES/}" "linux-source-$KERNEL_SERIES/rust" \
		2>/dev/null || true
	[ -d "$want/rust" ] || { echo "kernel: no rust/ in $KERNEL_TARBALL" >&2; exit 1; }
	"$rust_tool" apply "$want" >&2
	while IFS= read -r f; do
		[ -e "$want/$f" ] || rm -f "$work/$f"
	done < <(overlay "$work/.macsec_bridge_overlay")
	(cd "$want" && find . -type f | sed 's|^\./||') | while IFS= read -r f; do
		cmp -s "$want/$f" "$work/$f" || {
			mkdir -p "$(dirname "$work/$f")"
			rm -f "$work/$f"
			cp "$want/$f" "$work/$f"
		}
	done
	rm -rf "$want"
	"$rust_tool" list > "$work/.macsec_bridge_overlay"
	rm -f "$work/.macsec_bridge_built"
else
	mkdir -p "$work"
	echo "kernel: unpacking $KERNEL_TARBALL" >&2
	tar -xf "$KERNEL_TARBALL" -C "$work" --strip-components=1
	"$rust_tool" apply "$work" >&2
	"$rust_tool" list > "$work/.macsec_bridge_overlay"
fi

kmake "$work" -s tinyconfig >&2
"$work/scripts/kconfig/merge_config.sh" -m -O "$work" "$work/.config" \
	"${fragments[@]}" >/dev/null
kmake "$work" -s olddefconfig >&2

# Kconfig silently drops what it cannot satisfy (CONFIG_RUST without a usable
# toolchain, say): insist that every requested option made it, as the last
# fragment that names it asked.
declare -A want from
for f in "${fragments[@]}"; do
	while IFS= read -r line; do
		case "$line" in
		CONFIG_*=*) opt=${line%%=*} ;;
		"# CONFIG_"*" is not set") opt=${line#\# }; opt=${opt%% *} ;;
		*) continue ;;
		esac
		want[$opt]=$line
		from[$opt]=$(basename "$f")
	done < "$f"
done
fail=0
for opt in "${!want[@]}"; do
	line=${want[$opt]}
	case "$line" in
	CONFIG_*=*)
		grep -qxF "$line" "$work/.config" || {
			echo "kernel: $line requested by ${from[$opt]} but not in .config" >&2
			fail=1
		} ;;
	*)
		if grep -q "^$opt=" "$work/.config"; then
			echo "kernel: $opt should be unset (${from[$opt]})" >&2
			fail=1
		fi ;;
	esac
done
if [ $fail -ne 0 ]; then
	kmake "$work" rustavailable >&2 || true
	exit 1
fi

echo "kernel: building in $work ($(nproc) jobs)" >&2
# Clippy runs over the kernel crate, series included; the log stays in the
# tree so `make check` can hold the series to zero warnings.
kmake "$work" -s -j"$(nproc)" CLIPPY=1 bzImage modules 2>&1 |
	tee "$work/.macsec_bridge_build.log" >&2
mkdir -p "$CACHE_DIR/kernel"
rm -rf "$tree"
mv "$work" "$tree"
trap - EXIT
echo "$(( $(date +%s) - start ))" > "$tree/.macsec_bridge_built"
# Keep the three newest trees of each base with a series, and the stock
# one (its own <rust>, "none"); a tree is a few GB.
ls -dt "$CACHE_DIR/kernel/$base"-*/ 2>/dev/null | grep -v -- '-none/$' | tail -n +4 |
	xargs -r rm -rf
echo "kernel: built $tree in $(( $(date +%s) - start ))s" >&2
echo "$tree"
