#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The series' C as netdev's build bots compile it: in an allmodconfig tree
# (which sets CONFIG_WERROR) with W=1, set after set as they are posted
# (each with the sets before it), every C file the sets so far change,
# every C file that includes a header they change, and every MACsec
# offload implementation (drivers' *macsec*.c, which reach
# <net/macsec.h> through headers of their own) compiles without a
# warning. The tree is the tarball, in a scratch directory under the
# cache, taken away after; each set's files are put in place as `git am`
# leaves them.
#
# allmodconfig here leaves CONFIG_RUST unset, so the series' C helpers
# under rust/helpers/, which only the kernel crate's build compiles, are
# not among these: the test kernel builds them, and `make check` holds
# that build to no warning in a file the series touches.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/scripts/toolchain.env"
export KERNEL_SERIES=$MODULE_SERIES
: "${KERNEL_TARBALL:=/usr/src/linux-source-$MODULE_SERIES.tar.xz}"
series=$top/patches/$MODULE_SERIES

fail() { echo "FAIL: $*"; exit 1; }
g() { git -c user.name=t -c user.email=t@localhost "$@"; }

mkdir -p "$CACHE_DIR"
scratch=$(mktemp -d "$CACHE_DIR/allmod.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
tree=$scratch/tree
mkdir "$tree"
tar -xf "$KERNEL_TARBALL" -C "$tree" --strip-components=1

# The files the series touches, pristine, as a repository to apply the
# sets to with `git am` (rust/ whole, as the patches expect it).
src=$scratch/src
"$top/scripts/series.sh" pristine "$src" >/dev/null || fail "no pristine tree"

kmake() {
	make -C "$tree" ARCH=x86_64 RUSTC="$RUSTC" HOSTRUSTC="$RUSTC" RUSTDOC="$RUSTDOC" \
		BINDGEN="$BINDGEN" RUSTFMT="$RUSTFMT" CLIPPY_DRIVER="$CLIPPY_DRIVER" "$@"
}

mapfile -t offload < <(cd "$tree" && find drivers -name '*macsec*.c' | LC_ALL=C sort)
[ ${#offload[@]} -gt 0 ] || fail "no MACsec offload implementation in the tree"
sets=0
while IFS='|' read -r dir _; do
	mapfile -t p < <(find "$series/$dir" -maxdepth 1 -name '*.patch' ! -name '0000-*' | LC_ALL=C sort)
	[ ${#p[@]} -gt 0 ] || fail "no patches in the set $dir"
	g -C "$src" am -q "${p[@]}" || fail "the set $dir does not apply"
	mapfile -t changed < <(g -C "$src" diff --name-only pristine HEAD)
	for f in "${changed[@]}"; do
		rm -f "$tree/$f"
		[ ! -e "$src/$f" ] || { mkdir -p "$(dirname "$tree/$f")"; cp "$src/$f" "$tree/$f"; }
	done
	kmake allmodconfig >/dev/null
	grep -qx 'CONFIG_WERROR=y' "$tree/.config" || fail "allmodconfig did not set CONFIG_WERROR"

	# What to compile: the C files the sets so far change outside rust/,
	# the C files that include a header they change there, and the
	# offload implementations.
	objs=()
	for f in "${changed[@]}"; do
		case $f in
		rust/* | Documentation/* | MAINTAINERS | tools/* | */Kconfig | */Makefile | */Kbuild) ;;
		drivers/net/macsec_bridge/*) ;;
		*.c) objs+=("${f%.c}.o") ;;
		include/*.h)
			while IFS= read -r c; do
				objs+=("${c%.c}.o")
			done < <(cd "$tree" && grep -rlF --include='*.c' "#include <${f#include/}>" \
				arch block crypto drivers fs kernel lib mm net security sound virt | LC_ALL=C sort)
			;;
		*) fail "the set $dir changes $f, which this check does not know how to build" ;;
		esac
	done
	for c in "${offload[@]}"; do
		case $c in *.mod.c) ;; *) objs+=("${c%.c}.o") ;; esac
	done
	mapfile -t objs < <(printf '%s\n' "${objs[@]}" | LC_ALL=C sort -u)

	# Compiled again, whatever the tree holds: a warning is printed only
	# when the file is compiled.
	for o in "${objs[@]}"; do rm -f "$tree/$o"; done
	out=$scratch/build.log
	if ! kmake -j"$(nproc)" W=1 "${objs[@]}" >"$out" 2>&1; then
		sed 's/^/      /' "$out" | tail -40
		fail "the set $dir: W=1 build of ${#objs[@]} objects in an allmodconfig tree"
	fi
	warn=$(grep -E '(warning|error):' "$out" || true)
	[ -z "$warn" ] || { sed 's/^/      /' <<<"$warn"; fail "the set $dir: W=1 warnings in an allmodconfig tree"; }
	for o in "${objs[@]}"; do
		[ -s "$tree/$o" ] || fail "the set $dir: $o was not built"
	done
	echo "ok: $dir and the sets before it: W=1, allmodconfig (CONFIG_WERROR=y), ${#objs[@]} objects without a warning"
	sets=$((sets + 1))
done < <("$top/scripts/series.sh" sets)
echo "ok: the series' C builds W=1 in an allmodconfig tree, set by set ($sets sets)"
