#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Bind what the patch series' headers add to the kernel's `bindings`, for a
# module built against a kernel without the series (Kbuild,
# MACSEC_BRIDGE_COMPAT=y).
#
#   COMPAT_CC=CC COMPAT_BINDGEN=BINDGEN compat_bindgen.sh OUT HEADER \
#       KERNEL_HEADERS BINDGEN_ARGS... -- CC_FLAGS... -- BINDGEN_CFLAGS...
#
# (CC and BINDGEN are commands, possibly of several words: `ccache gcc`.)
#
# The kernel's bindings cover every header its bindings_helper.h includes
# (KERNEL_HEADERS lists them), directly or not. Only the declarations of
# the other headers HEADER includes are bound here, without recursing into
# the types they use: those types are the kernel's, so a `struct net_device`
# passed between the module and the kernel crate is one Rust type. CC, the
# kernel's compiler, lists both sets of headers (-M) with the include paths
# bindgen then sees.
set -euo pipefail

out=$1 header=$2 kernel_headers=$3
shift 3
read -ra cc <<<"${COMPAT_CC:?}"
read -ra bindgen <<<"${COMPAT_BINDGEN:?}"
args=() ccflags=() bgflags=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do args+=("$1"); shift; done
shift
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	case "$1" in
	-Wp,-MMD,* | -Wp,-MD,*) ;;
	*) ccflags+=("$1") ;;
	esac
	shift
done
shift
bgflags=("$@")

export LC_ALL=C

# headers FILE LIST: write to LIST every header a C file that includes
# FILE reads, a path a line, as the preprocessor found it; fail if the
# preprocessor fails or finds none.
headers() {
	local deps
	deps=$("${cc[@]}" "${ccflags[@]}" -M -MG -x c "$1") || {
		echo "compat_bindgen.sh: cannot list the headers of $1" >&2
		return 1
	}
	sed -e 's/^[^:]*://' -e 's/\\$//' <<<"$deps" | tr ' ' '\n' | grep '\.h$' |
		sort -u > "$2" || { echo "compat_bindgen.sh: $1 includes no header" >&2; return 1; }
}

# The headers only ours include, as a regular expression of their paths.
headers "$header" "$out.ours"
headers "$kernel_headers" "$out.kernel"
allow=$(comm -23 "$out.ours" "$out.kernel" | sed -e 's/[].[\\*^$+?(){}|]/\\&/g' |
	paste -sd'|')
rm -f "$out.ours" "$out.kernel"
[ -n "$allow" ] || { echo "compat_bindgen.sh: $header adds no header" >&2; exit 1; }

"${bindgen[@]}" "$header" "${args[@]}" --no-recursive-allowlist --allowlist-file "^($allow)\$" \
	-o "$out" -- "${bgflags[@]}"
