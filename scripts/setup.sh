#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install everything macsec_bridge needs to build and test, idempotently:
# only what is missing is installed.  Safe to run on every `make`.
#
# Pins (see README "Toolchain"):
#   rustc-web 1.85.0+dfsg3-1~deb12u3  bookworm main; builds 7.3.4.  If the
#                                     pin vanishes, the candidate is taken and
#                                     `make rustavailable` decides.
#   bindgen-cli 0.71.1                crates.io, --locked.
#   virtme-ng                         PyPI.
#   linux-source-7.3                  trixie-backports, a suite this script
#                                     adds pinned at priority 1: nothing is
#                                     installed or upgraded from it unless
#                                     named with /trixie-backports.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/toolchain.env"

log() { printf 'setup: %s\n' "$*" >&2; }

apt_install() {
	local missing=() p
	for p in "$@"; do
		# NAME, NAME=VERSION or NAME/SUITE
		dpkg-query -W -f='${Status}' "${p%%[=/]*}" 2>/dev/null |
			grep -q 'install ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	log "apt-get install ${missing[*]}"
	if [ -z "${APT_UPDATED:-}" ]; then
		apt-get update -qq
		APT_UPDATED=1
	fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends "${missing[@]}" >/dev/null
}

# The Rust toolchain packages must all share one version.  Pin it when the
# archive still has it, otherwise take the candidate.
rust_pkgs() {
	local v=$RUST_DEB_VERSION p out=()
	if ! apt-cache madison rustc-web 2>/dev/null | grep -q " $v "; then
		[ -z "${APT_UPDATED:-}" ] && { apt-get update -qq; APT_UPDATED=1; }
	fi
	if ! apt-cache madison rustc-web 2>/dev/null | grep -q " $v "; then
		log "rustc-web $v vanished from the archive, using the candidate"
		v=$(apt-cache policy rustc-web | awk '/Candidate:/ {print $2}')
	fi
	for p in rustc-web rust-web-src libstd-rust-web-dev rustfmt-web \
		 rust-web-clippy; do
		out+=("$p=$v")
	done
	echo "${out[@]}"
}

installed_rust=$(dpkg-query -W -f='${Version}' rustc-web 2>/dev/null || true)
if [ -z "$installed_rust" ] || [ ! -x /usr/bin/clippy-driver ] ||
   [ ! -x /usr/bin/rustfmt ]; then
	# shellcheck disable=SC2046
	apt_install $(rust_pkgs)
fi

# Linux 7.3 is in trixie-backports only. The suite's own packages would
# replace bookworm's on the next upgrade if it were not pinned below every
# other suite; linux-source-7.3 is the one package taken from it, by name.
# Whichever 7.3.x the suite has is taken: the kernel cache is keyed by the
# installed version.
ensure_file() {
	local path=$1 content=$2
	[ "$(cat "$path" 2>/dev/null)" = "$content" ] && return 0
	log "writing $path"
	printf '%s\n' "$content" > "$path"
	APT_UPDATED=
}
ensure_file /etc/apt/sources.list.d/macsec_bridge-trixie-backports.sources "\
Types: deb
URIs: http://deb.debian.org/debian
Suites: trixie-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-trixie-automatic.gpg"
ensure_file /etc/apt/preferences.d/macsec_bridge-trixie-backports "\
Package: *
Pin: release n=trixie-backports
Pin-Priority: 1"

apt_install linux-source-7.3/trixie-backports
apt_install libclang-19-dev clang-19 lld-19 llvm-19 \
	flex bison bc libelf-dev libssl-dev cpio kmod xz-utils \
	qemu-system-x86 busybox-static rdma-core ibverbs-utils \
	ibverbs-providers rdmacm-utils perftest ethtool iproute2 dkms \
	debhelper dh-dkms debootstrap \
	python3-yaml python3-jsonschema make gcc

if ! "$BINDGEN" --version 2>/dev/null | grep -q "$BINDGEN_VERSION"; then
	log "cargo install bindgen-cli $BINDGEN_VERSION"
	cargo install --locked --quiet --root "$TOOLS_PREFIX" \
		bindgen-cli --version "$BINDGEN_VERSION"
fi

if ! [ -x "$VNG" ]; then
	log "pip install virtme-ng"
	python3 -m venv "$TOOLS_PREFIX/venv"
	"$TOOLS_PREFIX/venv/bin/pip" install -q "virtme-ng==$VNG_VERSION"
fi

log "toolchain ready: $("$RUSTC" --version), $("$BINDGEN" --version), $("$VNG" --version 2>&1 | head -1)"
