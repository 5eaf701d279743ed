#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Every warning the module can print from an event goes through
# warn_ratelimited! (net_ratelimit()): events come from every namespace,
# and a user namespace's root makes them at will. A bare pr_warn! or
# pr_err! is allowed only in the module's init and exit (once per load).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
dir=$top/drivers/net/macsec_bridge

bare=$(grep -n 'pr_warn!(\|pr_err!(' "$dir"/*.rs |
	grep -v '^[^:]*/macsec_bridge_main\.rs:' |
	grep -v 'interposer dropped under RTNL' || true)
if [ -n "$bare" ]; then
	echo "FAIL: warnings an event can print that are not ratelimited:"
	echo "$bare"
	exit 1
fi
# In the crate root, only the macro itself may print a bare warning.
main=$(grep -c 'pr_warn!(\|pr_err!(' "$dir/macsec_bridge_main.rs" || true)
if [ "$main" -ne 1 ]; then
	echo "FAIL: macsec_bridge_main.rs prints $main bare warnings (only warn_ratelimited! may)"
	exit 1
fi
n=$(cat "$dir"/*.rs | grep -c 'warn_ratelimited!(')
echo "ok: $n event warnings, all ratelimited"
