#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install a built kernel tree's headers the way an Arch-family
# linux-headers package does, Rust artifacts included, into a directory of
# their own: what an external module (DKMS) finds on a distribution.
#
#   scripts/headers.sh KDIR OUT
#
# As Arch's PKGBUILD (`_package-headers`) installs them: the top-level
# build files, kernel/ and arch/x86/ Makefiles, scripts/ whole, objtool,
# include/ and arch/x86/include/, every Kconfig, and, with CONFIG_RUST,
# rust/*.rmeta and the proc-macro rust/*.so; then loose objects are
# removed. No source file of the kernel, no rust/ Makefile, no generated
# bindings: a module that needs more than this does not build on such a
# distribution, and the DKMS test finds out.
set -euo pipefail

kdir=${1:?usage: headers.sh KDIR OUT}
out=${2:?usage: headers.sh KDIR OUT}
[ -f "$kdir/Module.symvers" ] || { echo "headers: $kdir is not a built tree" >&2; exit 1; }

rm -rf "$out"
mkdir -p "$out"
cd "$kdir"
install -Dt "$out" -m644 .config Makefile Module.symvers System.map
install -Dt "$out/kernel" -m644 kernel/Makefile
install -Dt "$out/arch/x86" -m644 arch/x86/Makefile
cp -t "$out" -a scripts
[ ! -x tools/objtool/objtool ] || install -Dt "$out/tools/objtool" tools/objtool/objtool
cp -t "$out" -a include
cp -t "$out/arch/x86" -a arch/x86/include
[ ! -f arch/x86/kernel/asm-offsets.s ] ||
	install -Dt "$out/arch/x86/kernel" -m644 arch/x86/kernel/asm-offsets.s
find . -path ./"${out#"$kdir"/}" -prune -o -name 'Kconfig*' -type f -print |
	while IFS= read -r f; do install -Dm644 "$f" "$out/$f"; done
if grep -qx 'CONFIG_RUST=y' .config; then
	install -Dt "$out/rust" -m644 rust/*.rmeta
	install -Dt "$out/rust" rust/*.so
fi
find -L "$out" -type f -name '*.o' -delete
echo "headers: $out ($(du -sh "$out" | cut -f1))"
