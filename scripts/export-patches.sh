#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Export the rust/ overlay as a patch series against the pristine 6.12 tree,
# one patch per abstraction, in `git format-patch` form:
#
#   scripts/export-patches.sh OUTDIR
#
# Apply with `git am OUTDIR/*.patch` in a 6.12 kernel tree.  The series is
# built by committing the overlay step by step into a scratch repository
# holding the pristine files, so every patch applies on top of the last.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/toolchain.env"
: "${KERNEL_TARBALL:=/usr/src/linux-source-$KERNEL_SERIES.tar.xz}"
out=${1:?usage: export-patches.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)

# step: subject | overlay files (relative to rust/) | net.rs modules added
steps=(
"rust: error: add EOPNOTSUPP, EMSGSIZE and ENAMETOOLONG|kernel/error.rs|"
"rust: bindings: expose netdevice, rtnetlink, genetlink, MACsec and RDMA APIs|bindings/bindings_helper.h helpers/helpers.c helpers/net.c helpers/netlink.c helpers/rdma.c|"
"rust: net: add an RTNL guard and a proof token for RTNL-only APIs|kernel/net/rtnl.rs|rtnl"
"rust: net: add network namespaces|kernel/net/namespace.rs|namespace"
"rust: net: add NetDevice, a reference-counted net_device|kernel/net/device.rs|device"
"rust: net: add netdevice notifier registrations|kernel/net/notifier.rs|notifier"
"rust: net: add generic netlink families|kernel/net/genetlink.rs|genetlink"
"rust: net: add MACsec SecY views and a macsec_ops interposer|kernel/net/macsec.rs|macsec"
"rust: rdma: add RDMA devices and ib_client registration|kernel/rdma.rs kernel/lib.rs|"
)

bodies=(
"The networking abstractions report these errors: EOPNOTSUPP for a device
without the requested ops, EMSGSIZE when a netlink message is full (the
signal to resume a dump), ENAMETOOLONG for a too long family name."
"Make the networking headers reachable from bindgen and wrap the static
inline functions the following abstractions call (dev_hold/dev_put,
dev_net, genlmsg_*, nla_nest_*, rdma_{start,end}_port, ...), one line each."
"Most networking configuration state is protected by RTNL.  Add a guard that
takes it and a zero-sized proof type that RTNL-only APIs take as a
parameter, so that the compiler checks the locking rule.  Callbacks the
core documents as running under RTNL mint the proof with an unsafe
constructor."
"Add Net, a reference-counted struct net, with init_net, lookup by fd and
by peer id, peer id allocation and CAP_NET_ADMIN checks against the user
namespace that owns the network namespace."
"Add NetDevice with ARef (dev_hold/dev_put), its name, index, flags,
carrier, operstate, namespace, upper/lower walks, and feature changes that
need a proof of RTNL and announce themselves with netdev_features_change()."
"Add a pinned registration of a netdevice notifier that registers in place
and unregisters on drop, delivering typed events (CHANGEUPPER carries the
upper device and the direction)."
"Add generic netlink families: a #[vtable] trait with doit and resumable
dumpit handlers, attribute policies declared in Rust (strictly validated),
per-operation permissions including GENL_UNS_ADMIN_PERM, netnsok,
multicast groups, a message builder and typed attribute getters with
extack reporting."
"There is no notifier for MACsec SA/SC changes and none at all for offload
mode changes; every offloaded change goes through the lower device's
macsec_ops.  Add read-only SecY views and an interposer that replaces a
device's macsec_ops with a copy whose slots call an observer around the
original (NULL slots and data fields mirrored), restored exactly and freed
after an RCU grace period, since the RX path reads the table without RTNL."
"Add an ib_client registration and RDMA device accessors (ports, the netdev
behind a port).  Like RUST_PHYLIB_ABSTRACTIONS, which depends on PHYLIB=y,
this is only built with INFINIBAND=y: the kernel crate is linked into
vmlinux and cannot call into ib_core.ko."
)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
tar -xf "$KERNEL_TARBALL" --strip-components=1 "linux-source-$KERNEL_SERIES/rust"
git init -q .
git add -A
git -c user.name=pristine -c user.email=pristine@localhost commit -q -m "Linux $KERNEL_SERIES (Debian linux-source-$KERNEL_SERIES) rust/"

mods=(phy)
net_rs() {
	printf '// SPDX-License-Identifier: GPL-2.0\n\n//! Networking.\n\n'
	local m
	for m in $(printf '%s\n' "${mods[@]}" | sort); do
		case "$m" in
		phy) printf '#[cfg(CONFIG_RUST_PHYLIB_ABSTRACTIONS)]\n' ;;
		macsec) printf '#[cfg(any(CONFIG_MACSEC, CONFIG_MACSEC_MODULE))]\n' ;;
		esac
		printf 'pub mod %s;\n' "$m"
	done
}

i=0
for step in "${steps[@]}"; do
	IFS='|' read -r subject files mod <<<"$step"
	for f in $files; do
		mkdir -p "rust/$(dirname "$f")"
		cp "$top/rust/$f" "rust/$f"
	done
	if [ -n "$mod" ]; then
		mods+=("$mod")
		net_rs > rust/kernel/net.rs
	fi
	git add -A
	git -c user.name="macsec_bridge developers" -c user.email="macsec-bridge@localhost" \
		commit -q -m "$subject" -m "${bodies[$i]}"
	i=$((i + 1))
done

# The series must end exactly at the overlay.
for f in $(cd "$top/rust" && find . -type f ! -name README.md); do
	cmp -s "$top/rust/$f" "rust/$f" || { echo "export: $f differs from the overlay" >&2; exit 1; }
done
rm -f "$out"/*.patch
git format-patch -q -o "$out" HEAD~${#steps[@]}
ls "$out"
