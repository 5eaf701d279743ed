#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A Debian 13 (trixie) system as a Debian user has it before installing
# macsec-bridge-dkms: Debian's own 7.3 kernel from trixie-backports
# (image, modules, headers) and what the package asks of the system (dkms,
# trixie's rustc, rust-src, bindgen, libclang, linux-source-7.3). Built
# once with debootstrap and apt, cached, never changed after: what runs in
# it runs over an overlay whose writes go elsewhere.
#
#   scripts/debian-root.sh [--print]          build (or find) it; print its path
#   scripts/debian-root.sh run [--upper DIR] [--bind[-rw] SRC:DST]... -- CMD...
#                                              run CMD in it as root
#
# The root lives in $CACHE_DIR/debian/trixie-<key>/root; <key> hashes the
# pinned versions (scripts/toolchain.env) and $RECIPE. `run` mounts an
# overlay of the root whose upper layer is DIR (created; default: a
# temporary one, removed after), with /dev, /proc and /sys, in a mount
# namespace of its own: nothing outside DIR changes. --bind SRC:DST makes
# the host's SRC visible at DST in the root, read-only (--bind-rw: writable).
# The root has no resolv.conf: the tests install with apt-get
# --no-download, from what the root holds.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/toolchain.env"

# What the root holds. Part of the key: bump it whenever this list or the
# way the root is made changes.
RECIPE="4: minbase trixie, backports kernel image+headers+source, dkms, rustc, bindgen; backports rustc downloaded"
kernel_pkgs=("linux-image-$DEBIAN_KERNEL_ABI=$DEBIAN_KERNEL_VERSION"
	"linux-headers-$DEBIAN_KERNEL_ABI=$DEBIAN_KERNEL_VERSION"
	"linux-source-7.3=$DEBIAN_KERNEL_VERSION"
	# Debian's default initramfs builder (apt would pick backports' dracut),
	# and libelf-dev of the libelf that backports' linux-kbuild pulls in.
	initramfs-tools libelf-dev)
# What debian/control asks for (Depends and Recommends, which apt
# installs), rustc pinned: the test installs the package with no network,
# so a dependency missing here fails it.
tool_pkgs=("rustc=$DEBIAN_RUSTC_VERSION" "rust-src=$DEBIAN_RUSTC_VERSION"
	dkms bindgen libclang-dev dwarves flex bison bc libssl-dev openssl python3)

key=$(printf '%s\n' "$RECIPE" "$DEBIAN_MIRROR" "${kernel_pkgs[@]}" "${tool_pkgs[@]}" |
	sha256sum | cut -c1-12)
dir=$CACHE_DIR/debian/trixie-$key

die() {
	echo "debian-root.sh: $*" >&2
	exit 1
}

# in_root ROOT UPPER CMD...: CMD in ROOT (an overlay of it when UPPER is
# not empty), in a mount namespace of its own.
in_root() {
	[ "$(id -u)" -eq 0 ] || die "needs root (mount namespace, chroot)"
	unshare --mount --propagation private -- bash -euc '
		root=$1 upper=$2 binds=$3
		shift 3
		if [ -n "$upper" ]; then
			mnt=$upper/.mnt
			mkdir -p "$upper/upper" "$upper/work" "$mnt"
			mount -t overlay overlay \
				-o "lowerdir=$root,upperdir=$upper/upper,workdir=$upper/work" "$mnt"
			root=$mnt
		fi
		mount --rbind /dev "$root/dev"
		mount -t proc proc "$root/proc"
		mount -t sysfs sysfs "$root/sys"
		mount -t tmpfs tmpfs "$root/tmp"
		for b in $binds; do
			mode=${b%%:*} b=${b#*:}
			src=${b%%:*} dst=$root${b#*:}
			mkdir -p "$dst"
			mount --bind "$src" "$dst"
			[ "$mode" = rw ] || mount -o remount,bind,ro "$dst"
		done
		exec chroot "$root" /usr/bin/env -i HOME=/root LC_ALL=C.UTF-8 \
			PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
			DEBIAN_FRONTEND=noninteractive "$@"
	' _ "$@"
}

case "${1:-}" in
run)
	shift
	upper= binds= tmp=
	while [ $# -gt 0 ]; do
		case "$1" in
		--upper) upper=$2; shift 2 ;;
		--bind) binds+=" ro:$2"; shift 2 ;;
		--bind-rw) binds+=" rw:$2"; shift 2 ;;
		--) shift; break ;;
		*) die "run: unknown argument $1" ;;
		esac
	done
	[ $# -gt 0 ] || die "run: no command"
	[ -f "$dir/.built" ] || die "no root at $dir: run scripts/debian-root.sh first"
	if [ -z "$upper" ]; then
		tmp=$(mktemp -d /tmp/debian-root.XXXXXX)
		trap 'rm -rf "$tmp"' EXIT
		upper=$tmp
	fi
	rc=0
	in_root "$dir/root" "$upper" "$binds" "$@" || rc=$?
	exit $rc
	;;
--print)
	echo "$dir"
	[ -f "$dir/.built" ]
	exit
	;;
"") ;;
*) die "unknown argument $1" ;;
esac

if [ -f "$dir/.built" ]; then
	echo "debian-root: cached $dir" >&2
	echo "$dir"
	exit 0
fi

command -v debootstrap >/dev/null || die "no debootstrap (scripts/setup.sh installs it)"
start=$(date +%s)
work=$dir.tmp.$$
# A failed build keeps its logs for a look, and the next run starts over.
rm -rf "$dir".tmp.*
mkdir -p "$work"
echo "debian-root: debootstrap trixie into $work" >&2
debootstrap --variant=minbase --keyring=/usr/share/keyrings/debian-archive-trixie-stable.gpg \
	trixie "$work/root" "$DEBIAN_MIRROR" >"$work/debootstrap.log" 2>&1 ||
	{ tail -20 "$work/debootstrap.log" >&2; die "debootstrap failed"; }

# As a Debian user sets it up: the suite and its backports (Debian's
# default priorities: nothing comes from backports unless asked).
cat > "$work/root/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $DEBIAN_MIRROR
Suites: trixie trixie-updates trixie-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
rm -f "$work/root/etc/apt/sources.list"
cp /etc/resolv.conf "$work/root/etc/resolv.conf"
echo force-unsafe-io > "$work/root/etc/dpkg/dpkg.cfg.d/unsafe-io"

echo "debian-root: apt-get install ${kernel_pkgs[*]} ${tool_pkgs[*]}" >&2
# The kernel as Debian's backports page says (-t trixie-backports), the
# tools from the suite itself.
in_root "$work/root" "" "" bash -euc '
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends -t trixie-backports "${@:2:$1}"
	apt-get install -y -qq --no-install-recommends "${@:$(($1 + 2))}"
	apt-get clean
	# Kept for the test of a wrong rustc: backports rustc, installable
	# with no network.
	apt-get install -y -qq --download-only -t trixie-backports rustc rust-src
' _ ${#kernel_pkgs[@]} "${kernel_pkgs[@]}" "${tool_pkgs[@]}" >"$work/apt.log" 2>&1 ||
	{ tail -30 "$work/apt.log" >&2; die "apt-get install failed (log: $work/apt.log)"; }
# What was installed, for the log and the key's honesty.
in_root "$work/root" "" "" dpkg-query -W >"$work/packages"
rm -f "$work/root/etc/resolv.conf"

echo $(($(date +%s) - start)) > "$work/.built"
rm -rf "$dir"
mv "$work" "$dir"
trap - EXIT
echo "debian-root: built $dir in $(cat "$dir/.built") s" >&2
echo "$dir"
