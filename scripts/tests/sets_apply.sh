#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Each set of the series applies as its tree's maintainers would apply
# it: to the pristine tree with only the sets it names as prerequisites
# (its cover letter's prerequisite-patch-id lines, whole sets, each the
# id of a patch of an earlier set), with `git am`. A set without a cover
# letter names none, and applies to the pristine tree alone.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/scripts/toolchain.env"
export KERNEL_SERIES=$MODULE_SERIES
series=$top/patches/$MODULE_SERIES
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() { echo "FAIL: $*"; exit 1; }
g() { git -c user.name=t -c user.email=t@localhost -c advice.detachedHead=false "$@"; }

# The pristine files the series touches (rust/ whole), as a repository:
# made as from a rebase's exec step, which sets GIT_DIR to the caller's
# repository. That one is left as it was.
g init -q "$tmp/caller" && g -C "$tmp/caller" commit -q --allow-empty -m caller
before=$(git -C "$tmp/caller" rev-parse HEAD)
GIT_DIR=$tmp/caller/.git "$top/scripts/series.sh" pristine "$tmp/pristine" >/dev/null ||
	fail "no pristine tree"
[ "$(git -C "$tmp/caller" rev-parse HEAD)" = "$before" ] &&
	[ "$(git -C "$tmp/caller" config --bool core.bare)" = false ] &&
	[ -z "$(git -C "$tmp/caller" tag)" ] ||
	fail "series.sh changed the repository GIT_DIR named"

declare -A set_of order
sets=()
while IFS='|' read -r dir _; do
	order[$dir]=${#sets[@]}
	sets+=("$dir")
	[ -n "$(find "$series/$dir" -maxdepth 1 -name '*.patch' ! -name '0000-*')" ] || fail "no patches in the set $dir"
	for p in "$series/$dir"/*.patch; do
		case ${p##*/} in 0000-*) continue ;; esac
		id=$(git patch-id --stable <"$p" | cut -d' ' -f1)
		[ -n "$id" ] || fail "$dir/${p##*/}: no patch id"
		set_of[$id]=$dir
	done
done < <("$top/scripts/series.sh" sets)

set_patches() { find "$series/$1" -maxdepth 1 -name '*.patch' ! -name '0000-*' | LC_ALL=C sort; }

for dir in "${sets[@]}"; do
	cover=$series/$dir/0000-cover-letter.patch
	ids=()
	[ ! -f "$cover" ] || mapfile -t ids < <(sed -n 's/^prerequisite-patch-id: //p' "$cover")
	need=()
	for id in "${ids[@]}"; do
		d=${set_of[$id]:-}
		[ -n "$d" ] || fail "$dir names a prerequisite patch that is in no set: $id"
		[ "${order[$d]}" -lt "${order[$dir]}" ] || fail "$dir names a patch of $d, which is not an earlier set"
		case " ${need[*]} " in *" $d "*) ;; *) need+=("$d") ;; esac
	done
	# Whole sets: every patch of a set it names is named.
	for d in "${need[@]}"; do
		while IFS= read -r p; do
			id=$(git patch-id --stable <"$p" | cut -d' ' -f1)
			printf '%s\n' "${ids[@]}" | grep -qx "$id" ||
				fail "$dir names some of $d's patches, not ${p##*/}"
		done < <(set_patches "$d")
	done
	rm -rf "$tmp/work"
	cp -a "$tmp/pristine" "$tmp/work"
	for d in "${need[@]}" "$dir"; do
		mapfile -t p < <(set_patches "$d")
		g -C "$tmp/work" am -q --whitespace=error-all "${p[@]}" >"$tmp/am.log" 2>&1 || {
			sed 's/^/      /' "$tmp/am.log"
			fail "$dir does not apply to the pristine tree${need[*]:+ after ${need[*]}} ($d)"
		}
	done
	echo "ok: $dir applies to the pristine tree${need[0]:+ after ${need[*]}} (git am)"
done
echo "ok: ${#sets[@]} sets, each applies with only the sets it names"
