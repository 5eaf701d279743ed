#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The patch series as netdev and Rust-for-Linux would receive it: the
# tree's own `checkpatch.pl --strict` finds nothing in any patch, with one
# exception. A patch that adds files without touching MAINTAINERS is asked
# whether it should; that is allowed only where an existing entry covers
# every file the patch adds, listed below with the entry's name, and
# checked against the tree's MAINTAINERS. The messages name no kernel
# series and carry no revision history.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/scripts/toolchain.env"
: "${KERNEL_TARBALL:=/usr/src/linux-source-$MODULE_SERIES.tar.xz}"
series=$top/patches/$MODULE_SERIES
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Path prefix, and the MAINTAINERS entry that covers it.
covered=("rust/|RUST")

# The commits a Fixes: tag may name, as upstream's history has them (the
# tarball has no git history: checkpatch cannot look them up, and says
# UNKNOWN_COMMIT_ID for each; a tag not listed here fails instead). Each
# was checked against a Fixes: tag of a later upstream commit, or that
# commit's own posting.
known_fixes=('8700e3e7c485 ("Soft RoCE driver")'
	'791bb3fcafce ("net: macsec: add support for specifying offload upon link creation")'
	'dcb780fb2795 ("net: macsec: add nla support for changing the offloading selection")'
	'642c984dd0e3 ("macsec: Detect if Rx skb is macsec-related for offloading devices that update md_dst")'
	'c09440f7dcb3 ("macsec: introduce IEEE 802.1AE driver")')

src=linux-source-$MODULE_SERIES
tar -xf "$KERNEL_TARBALL" -C "$tmp" --strip-components=1 "$src/MAINTAINERS" \
	"$src/scripts/checkpatch.pl" "$src/scripts/spelling.txt" "$src/scripts/const_structs.checkpatch"

fail=0
for c in "${covered[@]}"; do
	prefix=${c%%|*} entry=${c#*|}
	# The entry's block: its name line, up to the next blank line.
	awk -v e="$entry" '$0 == e { on = 1; next } on && /^$/ { exit } on' "$tmp/MAINTAINERS" |
		grep -qxF "F:	$prefix" || {
		echo "FAIL: MAINTAINERS entry \"$entry\" does not cover $prefix"
		fail=1
	}
done

mapfile -t patches < <(find "$series" -maxdepth 1 -name '*.patch' ! -name '0000-*' | LC_ALL=C sort)
[ ${#patches[@]} -gt 0 ] || { echo "FAIL: no patches in $series"; exit 1; }
for p in "${patches[@]}"; do
	name=$(basename "$p")
	out=$(perl "$tmp/scripts/checkpatch.pl" --strict --terse --no-summary --show-types \
		--no-tree "$p" 2>&1 || true)
	bad=$(grep -v -e ':FILE_PATH_CHANGES:' -e ':UNKNOWN_COMMIT_ID:' <<<"$out" || true)
	while IFS= read -r tag; do
		k=
		for f in "${known_fixes[@]}"; do [ "$tag" = "Fixes: $f" ] && k=1; done
		[ -n "$k" ] || bad+="${bad:+$'\n'}fixes: not a listed upstream commit: $tag"
	done < <(awk '/^---$/ { exit } /^Fixes: / { print }' "$p")
	# A message for the tree, not for this project: no kernel series named
	# ("7.x": a message outlives it), no revision history above the ---.
	bad+=$(awk '/^---$/ { exit } { print }' "$p" |
		grep -nE '\b7\.x\b|\bv[0-9]+:|[Cc]hanges (since|in) v[0-9]' |
		sed 's/^/message: /' || true)
	if [ -n "$bad" ]; then
		echo "FAIL: $name"
		sed 's/^/      /' <<<"$bad"
		fail=1
		continue
	fi
	if [ -n "$out" ]; then
		# Every file the patch adds must be covered by a listed entry.
		while IFS= read -r f; do
			ok=
			for c in "${covered[@]}"; do
				case "$f" in "${c%%|*}"*) ok=${c#*|} ;; esac
			done
			if [ -z "$ok" ]; then
				echo "FAIL: $name adds $f, which no listed MAINTAINERS entry covers"
				fail=1
			fi
		done < <(awk '/^diff --git a\// { f = $3; sub(/^a\//, "", f) } /^new file mode/ { print f }' "$p")
	fi
	echo "ok: $name${out:+ (adds files only under entries that cover them)}"
done
# The cover letter counts the patches and lists each subject, in order.
cover=$series/0000-cover-letter.patch
n=$(printf '%02d' ${#patches[@]})
if [ ! -f "$cover" ]; then
	echo "FAIL: no cover letter ($cover)"
	fail=1
else
	grep -q "^Subject: \[PATCH 00/$n\] " "$cover" || {
		echo "FAIL: the cover letter's subject is not [PATCH 00/$n]"
		fail=1
	}
	want=$(for p in "${patches[@]}"; do
		awk '/^Subject: / { s = $0; on = 1; next }
		     on && /^ / { s = s $0; next }
		     on { sub(/^Subject: \[PATCH [0-9]+\/[0-9]+\] /, "  ", s); print s; exit }' "$p"
	done)
	got=$(awk '/^Patches \([0-9]+\):$/ { on = 1; next } on && /^$/ { exit } on' "$cover")
	if [ "$want" != "$got" ]; then
		echo "FAIL: the cover letter's list is not the patches' subjects:"
		diff <(echo "$want") <(echo "$got") | sed 's/^/      /'
		fail=1
	fi
fi
[ $fail -eq 0 ] || exit 1
echo "ok: checkpatch.pl --strict ($MODULE_SERIES) on ${#patches[@]} patches; the cover letter lists them"
