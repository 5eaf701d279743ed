#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# DKMS's build step (dkms.conf's MAKE): build the module for kernel KVER
# whose headers are KDIR.
#
#   scripts/dkms-build.sh KVER KDIR
#
# A Rust module builds against the kernel's Rust artifacts: rust/*.rmeta
# (the metadata of core, kernel, bindings, ...) and the proc macros
# rust/*.so. Arch's and Ubuntu's headers ship them; then this is just
# `make -C KDIR M=$PWD`. Debian's do not (linux-headers-7.3.4+deb13-amd64
# has no rust/). There they are made from the same Debian kernel's source,
# linux-source-X.Y of the headers' exact version, configured with the
# headers' own .config and compiled by the rustc whose version text is
# the kernel's CONFIG_RUSTC_VERSION_TEXT, and kept in
# /var/cache/macsec-bridge-dkms/KVER (a copy of the headers with rust/
# added). They are used only if they are the kernel's own: the
# regenerated configuration equals Debian's, and every Rust symbol they
# export (crate hashes included) is one the kernel's Module.symvers lists,
# and the other way round. Anything that does not match stops the build
# with one line naming what differs and what to install.
#
# RUSTC (default /usr/bin/rustc) and BINDGEN (default bindgen) select the
# tools; MACSEC_BRIDGE_KBUILD_CACHE moves the cache (tests).
set -euo pipefail

kver=${1:?usage: dkms-build.sh KVER KDIR}
kdir=${2:?usage: dkms-build.sh KVER KDIR}
src=$PWD
: "${RUSTC:=/usr/bin/rustc}" "${BINDGEN:=bindgen}"
cache=${MACSEC_BRIDGE_KBUILD_CACHE:-/var/cache/macsec-bridge-dkms}/$kver

# refuse WHY: the one line, and no build.
refuse() {
	echo "macsec_bridge: $*" >&2
	exit 1
}

# config_value NAME FILE: the string value of CONFIG_NAME in a .config.
config_value() {
	sed -n "s/^CONFIG_$1=\"\(.*\)\"$/\1/p" "$2"
}

build() {
	exec make -C "$1" M="$src" RUSTC="$RUSTC" HOSTRUSTC="$RUSTC" BINDGEN="$BINDGEN" \
		MACSEC_BRIDGE_COMPAT=y modules
}

# The headers carry the artifacts (Arch, Ubuntu, a kernel built here).
if compgen -G "$kdir/rust/*.rmeta" >/dev/null; then
	build "$kdir"
fi

nometa="$kdir lacks the kernel's Rust artifacts (rust/*.rmeta, rust/*.so)"
# Debian: the headers belong to a package whose source package's
# linux-source-X.Y can make them.
hdr_pkg=linux-headers-$kver
hdr_ver=$(dpkg-query -W -f='${Version}' "$hdr_pkg" 2>/dev/null) ||
	refuse "$nometa; its headers package must ship them"
series=$(cut -d. -f1-2 <<<"$kver")
src_pkg=linux-source-$series
tarball=/usr/src/$src_pkg.tar.xz

# The compilers that built the kernel, by their version text.
want_rustc=$(config_value RUSTC_VERSION_TEXT "$kdir/.config")
have_rustc=$("$RUSTC" --version 2>/dev/null) || have_rustc="no rustc at $RUSTC"
[ "$have_rustc" = "$want_rustc" ] ||
	refuse "$RUSTC is '$have_rustc', $kver was built by '$want_rustc': install that rustc (and its rust-src)"
want_bindgen=$(config_value BINDGEN_VERSION_TEXT "$kdir/.config")
have_bindgen=$("$BINDGEN" --version 2>/dev/null) || have_bindgen="no bindgen at $BINDGEN"
[ "$have_bindgen" = "$want_bindgen" ] ||
	refuse "$BINDGEN is '$have_bindgen', $kver was built with '$want_bindgen': install that bindgen"
want_cc=$(config_value CC_VERSION_TEXT "$kdir/.config")
cc=${want_cc%% *}
have_cc=$("$cc" --version 2>/dev/null | head -1) || have_cc="no $cc"
[ "$have_cc" = "$want_cc" ] ||
	refuse "$cc is '$have_cc', $kver was built by '$want_cc': install that compiler"

# What the artifacts were made from: when it changes they are made again.
# Artifacts already made for this kernel serve even once its source is
# gone (a newer linux-source-X.Y replaces the older one).
stamp=$(printf '%s\n' "$hdr_pkg $hdr_ver" "$src_pkg $hdr_ver" "$have_rustc" "$have_bindgen" \
	"$have_cc" "$(sha256sum <"$kdir/.config")" "$(sha256sum <"$0")")

if [ "$(cat "$cache/.stamp" 2>/dev/null)" != "$stamp" ]; then
	# dpkg may configure the headers (whose hook runs DKMS) before the
	# source: unpacked is enough.
	src_ver=$(dpkg-query -W -f='${db:Status-Status} ${Version}' "$src_pkg" 2>/dev/null) ||
		src_ver=
	case "$src_ver" in
	"installed $hdr_ver" | "unpacked $hdr_ver" | "half-configured $hdr_ver") ;;
	installed* | unpacked* | half-configured*)
		refuse "$src_pkg is ${src_ver#* }, $hdr_pkg is $hdr_ver: install $src_pkg (= $hdr_ver)" ;;
	*)
		refuse "$nometa; install $src_pkg (= $hdr_ver) to make them" ;;
	esac
	[ -f "$tarball" ] || refuse "$src_pkg is installed but $tarball is missing: reinstall it"
	# What making them needs beyond the compilers (the package recommends
	# them all).
	for t in flex:flex bison:bison bc:bc pahole:dwarves openssl:openssl python3:python3; do
		command -v "${t%%:*}" >/dev/null || refuse "making $kver's Rust artifacts needs ${t%%:*}: install ${t#*:}"
	done
	[ -f /usr/include/gelf.h ] || refuse "making $kver's Rust artifacts needs libelf's headers: install libelf-dev"
	[ -f /usr/include/openssl/ssl.h ] || refuse "making $kver's Rust artifacts needs OpenSSL's headers: install libssl-dev"
	echo "dkms-build: making $kver's Rust artifacts from $src_pkg $hdr_ver in $cache"
	work=$cache.tmp
	rm -rf "$work" "$cache"
	mkdir -p "$work/build"
	trap 'rm -rf "$work"' EXIT
	tar -xf "$tarball" -C "$work" && mv "$work/$src_pkg" "$work/src" ||
		refuse "cannot unpack $tarball"
	# Debian's kernel Makefile reads the compiler and the architecture
	# from the build directory's .kernelvariables, as the headers do.
	kmake() {
		make -C "$work/src" O="$work/build" RUSTC="$RUSTC" HOSTRUSTC="$RUSTC" \
			BINDGEN="$BINDGEN" -j"$(nproc)" "$@"
	}
	cp "$kdir/.config" "$work/build/.config"
	[ ! -f "$kdir/.kernelvariables" ] || cp "$kdir/.kernelvariables" "$work/build/"
	kmake -s olddefconfig
	# Nothing re-decided: every option as Debian set it.
	options() { grep -E '^(CONFIG_|# CONFIG_.* is not set)' "$1" | LC_ALL=C sort; }
	differ=$(LC_ALL=C comm -3 <(options "$kdir/.config") <(options "$work/build/.config") |
		awk '{ sub(/^\t/, ""); if (NR <= 3) printf "%s ", $0 }')
	[ -z "$differ" ] ||
		refuse "$src_pkg's Kconfig with $cc re-decides $kver's configuration ($differ): use the headers' toolchain"
	kmake -s prepare
	kmake -s rust/
	# The symbols these artifacts make modules link against are exactly the
	# kernel's: crate hashes (the rustc), names and signatures (the
	# source and configuration).
	made=$(sed -n 's/^EXPORT_SYMBOL_RUST_GPL(\(.*\));$/\1/p' \
		"$work"/build/rust/exports_*_generated.h | LC_ALL=C sort -u)
	exported=$(awk -F'\t' '$3 == "vmlinux" { print $2 }' "$kdir/Module.symvers" | LC_ALL=C sort -u)
	kernel=$(grep -E '^(_R|rust_helper_)' <<<"$exported")
	missing=$(LC_ALL=C comm -13 <(echo "$made") <(echo "$kernel"))
	extra=$(LC_ALL=C comm -23 <(echo "$made") <(echo "$exported"))
	[ -z "$missing$extra" ] ||
		refuse "the Rust symbols made from $src_pkg $hdr_ver by '$have_rustc' are not $kver's" \
			"($(grep -c . <<<"$missing") of Module.symvers' $(grep -c . <<<"$kernel") not made," \
			"$(grep -c . <<<"$extra") made that it lacks, as $(echo $missing $extra | cut -d' ' -f1)):" \
			"install the rustc and $src_pkg that built it"
	# The headers as Arch ships them: Debian's, plus rust/ and the Rust
	# target that kbuild reads from scripts/.
	# Debian's headers name their own directory (KBUILD_OUTPUT) and link
	# to linux-kbuild relatively: the copy names itself, links absolutely,
	# and has scripts/ of its own.
	kb=$work/kbuild
	hdr=$(readlink -f "$kdir")
	cp -a "$hdr" "$kb"
	for l in "$kb"/*; do
		[ ! -L "$l" ] || ln -sfn "$(readlink -f "$hdr/${l##*/}")" "$l"
	done
	rm -f "$kb/scripts"
	cp -a "$(readlink -f "$hdr/scripts")" "$kb/scripts"
	sed -i "s|^KBUILD_OUTPUT=.*|KBUILD_OUTPUT=$cache|" "$kb/Makefile"
	[ ! -f "$work/build/scripts/target.json" ] || cp "$work/build/scripts/target.json" "$kb/scripts/"
	install -Dt "$kb/rust" -m644 "$work"/build/rust/*.rmeta
	install -Dt "$kb/rust" "$work"/build/rust/*.so
	echo "$stamp" > "$kb/.stamp"
	mv "$kb" "$cache"
	rm -rf "$work"
	trap - EXIT
fi
build "$cache"
