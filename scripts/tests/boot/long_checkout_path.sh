#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/vm-run works from a checkout at a long path, with a long command:
# a newcomer's clone can live anywhere, and `make check` hands the guest a
# command of well over a kilobyte (paths and settings for every test).
#
# virtme-ng puts the guest command on the kernel command line, which x86
# cuts at 2048 bytes; a cut that reaches init= panics the guest ("Requested
# init ... failed") and vm-run reports that the command never ran. This
# boots the real test kernel, so it needs one:
#
#   scripts/tests/boot/long_checkout_path.sh KDIR
set -uo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
kdir=${1:?usage: long_checkout_path.sh KDIR}

# The copy lives where the guest sees the host's files (the root, shared
# read-only), not in /tmp, which the guest has a tmpfs of its own over.
base=$top/target/long-path-test
err=$(mktemp)
rm -rf "$base"
trap 'rm -rf "$base" "$err"' EXIT
long=$base
while [ ${#long} -lt 200 ]; do
	long=$long/a-directory-name-of-forty-characters-xx
done
long=$long/macsec_bridge
mkdir -p "$long"
cp -r "$top/scripts" "$long/"

# 3000 bytes of argument and 1000 of environment, longer than the whole
# kernel command line.
arg=$(printf 'x%.0s' {1..3000})
envval=$(printf 'y%.0s' {1..1000})
out=$("$long/scripts/vm-run" --kdir "$kdir" --timeout 600 env LONG_SETTING="$envval" \
	bash -c 'echo "guest pwd $PWD"; echo "guest arg ${#1} env ${#LONG_SETTING}"; exit 7' _ "$arg" 2>"$err")
rc=$?
echo "checkout path: ${#long} characters; vm-run exit $rc"
echo "$out"
fail() {
	echo "FAIL: $*"
	tail -20 "$err"
	exit 1
}
[ $rc -eq 7 ] || fail "vm-run exit $rc, not the command's 7"
grep -qxF "guest pwd $long" <<<"$out" || fail "the guest did not run in the checkout"
grep -qxF "guest arg 3000 env 1000" <<<"$out" || fail "the command or its environment arrived cut"
echo "ok: vm-run from a ${#long}-character checkout path with a 4000-byte command"
