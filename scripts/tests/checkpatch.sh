#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The patch series as netdev and Rust-for-Linux would receive it, set by
# set: the tree's own `checkpatch.pl --strict` finds nothing in any patch
# or cover letter, with one exception. A patch that adds files without
# touching MAINTAINERS is asked whether it should; that is allowed only
# where an existing entry covers every file the patch adds, listed below
# with the entry's name, and checked against the tree's MAINTAINERS. The
# messages name no kernel series and carry no revision history. Each set
# has as many patches as scripts/series.sh's SETS gives it, at most 15;
# each patch carries its set's subject prefix and number and is addressed
# (To:, Cc:); a patch for a fixes tree has a Fixes: tag; a set of more
# than one patch has a cover letter, numbered 0.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/scripts/toolchain.env"
: "${KERNEL_TARBALL:=/usr/src/linux-source-$MODULE_SERIES.tar.xz}"
series=$top/patches/$MODULE_SERIES
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# checkpatch.pl runs from a git checkout, as in a kernel tree: outside one
# it takes the prerequisite-patch-id lines git format-patch writes under a
# cover letter for commit references (GIT_COMMIT_ID); in one it looks
# them up, finds no commit, and says nothing.
cd "$top"

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

mapfile -t patches < <(KERNEL_SERIES=$MODULE_SERIES "$top/scripts/series.sh" all-patches)
[ ${#patches[@]} -gt 0 ] || { echo "FAIL: no patches in $series"; exit 1; }
for p in "${patches[@]}"; do
	name=${p#"$series"/}
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
# Each set: its patches' subjects carry its prefix and number, every file
# is addressed, and a set of more than one patch has a cover letter that
# checkpatch.pl finds nothing in either.
subject() { awk '/^Subject: / { s = $0; on = 1; next } on && /^ / { s = s $0; next } on { print s; exit }' "$1"; }
sets=0
headers() { awk '/^$/ { exit } { print }' "$1"; }
while IFS='|' read -r dir prefix count _; do
	mapfile -t set < <(find "$series/$dir" -maxdepth 1 -name '*.patch' ! -name '0000-*' | LC_ALL=C sort)
	n=${#set[@]}
	[ "$n" -gt 0 ] || { echo "FAIL: no patches in the set $dir"; fail=1; continue; }
	[ -z "$count" ] || [ "$n" -eq "$count" ] ||
		{ echo "FAIL: the set $dir has $n patches, not $count"; fail=1; }
	# netdev takes at most 15 patches at a time (maintainer-netdev.rst).
	[ "$n" -le 15 ] || { echo "FAIL: the set $dir has $n patches, more than 15"; fail=1; }
	# A set for a fixes tree (net, rdma-rc) is fixes: each names its cause.
	case $prefix in
	*" net" | *"-rc")
		for p in "${set[@]}"; do
			awk '/^---$/ { exit } /^Fixes: / { f = 1 } END { exit !f }' "$p" ||
				{ echo "FAIL: $dir/${p##*/} goes to a fixes tree without a Fixes: tag"; fail=1; }
		done ;;
	esac
	sets=$((sets + 1))
	i=0
	for p in "${set[@]}"; do
		i=$((i + 1))
		if [ "$n" -eq 1 ]; then want="[$prefix] "; else want=$(printf '[%s %0*d/%d] ' "$prefix" ${#n} $i "$n"); fi
		case "$(subject "$p")" in
		"Subject: $want"*) ;;
		*) echo "FAIL: $dir/${p##*/}: the subject does not start with $want"; fail=1 ;;
		esac
	done
	cover=$series/$dir/0000-cover-letter.patch
	for p in "${set[@]}" "$cover"; do
		[ -f "$p" ] || continue
		headers "$p" | grep -q '^To: ' && headers "$p" | grep -q '^Cc: ' ||
			{ echo "FAIL: $dir/${p##*/} has no To: or no Cc:"; fail=1; }
	done
	if [ "$n" -eq 1 ]; then
		[ ! -f "$cover" ] || { echo "FAIL: the set $dir of one patch has a cover letter"; fail=1; }
		if ! awk '/^---$/ { getline; print; exit }' "${set[0]}" | grep -q '^Applies to '; then
			echo "FAIL: $dir/${set[0]##*/} names no base below its ---"
			fail=1
			continue
		fi
		echo "ok: the set $dir: [$prefix], one patch, addressed, its base named"
		continue
	fi
	[ -f "$cover" ] || { echo "FAIL: the set $dir has no cover letter"; fail=1; continue; }
	want=$(printf '[%s %0*d/%d] ' "$prefix" ${#n} 0 "$n")
	case "$(subject "$cover")" in
	"Subject: $want"*) ;;
	*) echo "FAIL: $dir's cover letter: the subject does not start with $want"; fail=1 ;;
	esac
	out=$(perl "$tmp/scripts/checkpatch.pl" --strict --terse --no-summary --show-types \
		--no-tree "$cover" 2>&1 || true)
	[ -z "$out" ] || { echo "FAIL: $dir's cover letter"; sed 's/^/      /' <<<"$out"; fail=1; }
	echo "ok: the set $dir: ${want% }, $n patches and a cover letter, addressed"
done < <(KERNEL_SERIES=$MODULE_SERIES "$top/scripts/series.sh" sets)
[ $fail -eq 0 ] || exit 1
echo "ok: checkpatch.pl --strict ($MODULE_SERIES) on ${#patches[@]} patches in $sets sets and their cover letters"
