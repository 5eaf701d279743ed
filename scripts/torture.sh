#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make torture [SEED=N] [OPS=N] [VARIANT=kasan]`: the randomized torture
# run (selftests/net/macsec_bridge/torture.sh) alone, in a VM, with
# the seed and the number of operations given: a seed a failing run printed
# replays the same operations. Prints the test's KTAP.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/toolchain.env"

variant=${VARIANT:-debug}
# The KASAN kernel is built with LLVM: so must be the module (make reads
# LLVM from the environment).
[ "$variant" != kasan ] || export LLVM=-19

kdir=$("$top/scripts/kernel.sh" --variant "$variant")
work=$(mktemp -d /tmp/macsec_bridge-torture.XXXXXX)
trap 'rm -rf "$work"' EXIT
ko=$("$top/scripts/module.sh" "$kdir" "$work")
timeout=$(( 600 + ${OPS:-10000} / 4 ))
[ "$variant" != kasan ] || timeout=$((timeout * 3))
echo "booting $(make -s -C "$kdir" kernelrelease) under TCG: seed ${SEED:-1}, ${OPS:-10000} operations ..."
rc=0
"$top/scripts/vm-run" --variant "$variant" --kdir "$kdir" --timeout "$((timeout + 300))" \
	--rwdir "$work" \
	env MACSEC_BRIDGE_KO="$ko" MB_TORTURE_SEED="${SEED:-1}" MB_TORTURE_OPS="${OPS:-10000}" \
	KSFT_RESULTS="$work/ksft-results" kselftest_override_timeout="$timeout" \
	"$top/scripts/vm-selftests.sh" "$kdir" torture.sh >"$work/vm.log" 2>&1 || rc=$?
cat "$work/ksft-results" 2>/dev/null || tail -40 "$work/vm.log"
exit "$rc"
