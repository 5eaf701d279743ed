#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# compat_root.sh SRC [LINE REPLACEMENT]...: the crate root SRC of a Rust
# module, for a kernel without the patch series (MACSEC_BRIDGE_COMPAT=y),
# written to standard output with each LINE replaced by REPLACEMENT (its
# lines separated by "\n"). Each LINE must be a whole line of SRC, there
# once: anything else fails, so that a root edited in the tree cannot lose
# its compat replacement unnoticed. Run by Kbuild: the driver's files stay
# those of the kernel tree, with no cfg of their own.
exec awk '
BEGIN {
	for (i = 2; i + 1 < ARGC; i += 2) {
		to[ARGV[i]] = ARGV[i + 1]
		want++
		ARGV[i] = ""; ARGV[i + 1] = ""
	}
}
$0 in to {
	if (seen[$0]++) { print FILENAME ": twice: " $0 > "/dev/stderr"; bad = 1; exit 1 }
	gsub(/\\n/, "\n", to[$0]); print to[$0]; found++; next
}
{ print }
END {
	if (!bad && found != want) { print FILENAME ": a line to replace is not there" > "/dev/stderr"; exit 1 }
}' "$@"
