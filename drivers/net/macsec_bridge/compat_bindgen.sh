#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Bind what the patch series' headers add to the kernel's `bindings`, for a
# module built against a kernel without the series (Kbuild,
# MACSEC_BRIDGE_COMPAT=y).
#
#   compat_bindgen.sh OUT HEADER KERNEL_HEADERS CC BINDGEN \
#       BINDGEN_ARGS... -- CC_FLAGS... -- BINDGEN_CFLAGS...
#
# The kernel's bindings cover every header its bindings_helper.h includes
# (KERNEL_HEADERS lists them), directly or not. Only the declarations of
# the other headers HEADER includes are bound here, without recursing into
# the types they use: those types are the kernel's, so a `struct net_device`
# passed between the module and the kernel crate is one Rust type. CC, the
# kernel's compiler, lists both sets of headers (-M) with the include paths
# bindgen then sees.
set -euo pipefail

out=$1 header=$2 kernel_headers=$3 cc=$4 bindgen=$5
shift 5
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

# headers FILE: every header a C file that includes FILE reads, a path a
# line, as the preprocessor found it.
headers() {
	"$cc" "${ccflags[@]}" -M -MG -x c "$1" |
		sed -e 's/^[^:]*://' -e 's/\\$//' | tr ' ' '\n' | grep '\.h$' | sort -u
}

# The headers only ours include, as a regular expression of their paths.
allow=$(comm -23 <(headers "$header") <(headers "$kernel_headers") |
	sed -e 's/[].[\\*^$+?(){}|]/\\&/g' | paste -sd'|')
[ -n "$allow" ] || { echo "compat_bindgen.sh: $header adds no header" >&2; exit 1; }

"$bindgen" "$header" "${args[@]}" --no-recursive-allowlist --allowlist-file "^($allow)\$" \
	-o "$out" -- "${bgflags[@]}"
