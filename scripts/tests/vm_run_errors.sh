#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/vm-run fails loudly, without booting anything, when it has no
# kernel to boot or no command to run.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)

out=$("$top/scripts/vm-run" --kdir /nonexistent true 2>&1)
rc=$?
[ $rc -ne 0 ] || { echo "FAIL: vm-run succeeded without a kernel"; exit 1; }
grep -q "no bzImage" <<<"$out" || { echo "FAIL: no message: $out"; exit 1; }

out=$("$top/scripts/vm-run" --kimg /nonexistent/vmlinuz true 2>&1)
[ $? -ne 0 ] || { echo "FAIL: vm-run succeeded without a kernel image"; exit 1; }
grep -q "no kernel image /nonexistent/vmlinuz" <<<"$out" || { echo "FAIL: no message: $out"; exit 1; }

out=$("$top/scripts/vm-run" 2>&1)
[ $? -eq 2 ] || { echo "FAIL: vm-run without a command did not exit 2"; exit 1; }
grep -q usage <<<"$out" || { echo "FAIL: no usage message"; exit 1; }
echo "ok: vm-run fails loudly"
