#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel-crate abstractions for a kernel series are a patch series,
# patches/<series>/<set>/*.patch, in `git format-patch` form against the
# pristine tree: what a kernel developer applies to their tree with
# `git am`, set after set (SETS below), as each set is posted.
#
#   scripts/series.sh apply TREE   apply the series to TREE, an unpacked
#                                  pristine tree
#   scripts/series.sh edit DIR     make DIR a git repository of the pristine
#                                  files the series touches (rust/ whole)
#                                  with the series as its commits, to edit
#                                  with git (commit --fixup, rebase -i)
#   scripts/series.sh export DIR   write DIR's commits back as the series,
#                                  From and Signed-off-by you (git config),
#                                  then the user's patches (`user`)
#   scripts/series.sh list         the files the series adds or changes,
#                                  relative to the tree's top
#   scripts/series.sh compat DIR   write DIR, the series as a part of an
#                                  out-of-tree module (see compat() below)
#   scripts/series.sh user         write the series' last two patches, the
#                                  module and its kselftests in the tree,
#                                  from this repository (see user() below)
#   scripts/series.sh patches      the abstractions' patches, in order
#   scripts/series.sh user-patches the user's patches, in order
#   scripts/series.sh all-patches  both, in order
#   scripts/series.sh sets         the sets the series is posted as, one
#                                  DIR|SUBJECT PREFIX|COUNT|SUBJECTS line each
#   scripts/series.sh pristine DIR make DIR a git repository of the pristine
#                                  files every patch touches (rust/ whole),
#                                  tagged 'pristine', to apply sets to
#
# The series is applied with `git am` in a scratch repository, so a patch
# that does not apply to the pristine tree fails loudly here too.
set -euo pipefail
# Every git command here names its repository (-C DIR, or the current
# directory): a scratch one it made, or this one. A caller's GIT_DIR (a
# rebase's exec step sets it, a hook too) would send them all to the
# caller's repository instead: `git init` there made it bare.
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE GIT_OBJECT_DIRECTORY GIT_COMMON_DIR GIT_PREFIX

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/toolchain.env"
: "${SERIES_DIR:=$top/patches/$KERNEL_SERIES}"
: "${KERNEL_TARBALL:=/usr/src/linux-source-$KERNEL_SERIES.tar.xz}"

git_() {
	git -c user.name="macsec_bridge developers" -c user.email="macsec-bridge@localhost" \
		-c advice.detachedHead=false "$@"
}

# fp ARG...: git, for git format-patch, without the user's or the
# system's configuration (format.thread, format.to, diff.noprefix, ...
# would change what it writes).
fp() {
	GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 git "$@"
}

# The series ends with its in-tree user: the module (its Kconfig entry,
# Documentation, YNL spec, uAPI header and MAINTAINERS entry with it), then
# its kselftests. Those two patches are generated from this repository's
# files by user() below, never edited by hand (scripts/tests/user_in_sync.sh
# fails when they drift); `git am patches/<series>/*.patch` applies them
# with the rest. The test kernel, `edit`, `list` and `compat` take the
# abstractions before them.
user_patch() {
	case ${1##*/} in
	[0-9][0-9][0-9][0-9]-net-macsec_bridge-*.patch | \
	[0-9][0-9][0-9][0-9]-selftests-net-add-macsec_bridge-*.patch) return 0 ;;
	esac
	return 1
}

# The series is posted as sets, each to the tree that takes it, in the
# order they apply: its directory under patches/<series>/, its subject
# prefix, its number of patches (the last set has the rest), and what
# the subject of each of its patches matches (an ERE), so that a patch
# added before a set's end cannot shift its neighbours into the wrong
# tree unnoticed. The fixes go to net; dev->ifindex's marked store,
# which fixes no reported bug, to net-next; RXE's to rdma; the work
# items' flush, a kernel crate addition of its own, to the Rust
# workqueue API's maintainers; and the notifier with the Rust
# abstractions and their user to net-next as an RFC: it asks netdev a
# question (its cover letter's "The question").
SETS=("1-net|PATCH net|4|^net: macsec: "
	"2-net-next|PATCH net-next|1|^net: "
	"3-rdma|PATCH rdma-rc|1|^RDMA/rxe: "
	"4-workqueue|PATCH|1|^rust: workqueue: "
	"5-rfc|RFC PATCH net-next||.")

# Every patch of every set, in the order they apply, without the cover
# letters (0000-cover-letter.patch: they apply nothing).
all_patches() {
	local s d
	[ -d "$SERIES_DIR" ] || return 0
	for s in "${SETS[@]}"; do
		d=$SERIES_DIR/${s%%|*}
		[ -d "$d" ] || { echo "series: no set ${s%%|*} in $SERIES_DIR" >&2; return 1; }
		find "$d" -maxdepth 1 -name '*.patch' ! -name '0000-*' | LC_ALL=C sort
	done
}

# The patches of the abstractions, without the user.
patches() {
	all_patches | while IFS= read -r p; do user_patch "$p" || echo "$p"; done
}

# The user's patches, in order.
user_patches() {
	all_patches | while IFS= read -r p; do ! user_patch "$p" || echo "$p"; done
}

# The files outside rust/ that the series changes (not those it adds).
changed_outside_rust() {
	local p
	mapfile -t p < <(patches)
	[ ${#p[@]} -eq 0 ] || sed -n 's|^--- a/||p' "${p[@]}" | grep -v '^rust/' | LC_ALL=C sort -u
}

# extract DIR PATH...: the tarball's PATHs (relative to the tree's top)
# into DIR. A path that is not in the tarball (a file a patch creates and a
# later one changes) is skipped; one that must exist shows up as a patch
# that does not apply.
extract() {
	local dir=$1
	shift
	mkdir -p "$dir"
	tar -xf "$KERNEL_TARBALL" -C "$dir" --strip-components=1 \
		"${@/#/linux-source-$KERNEL_SERIES/}" 2>/dev/null || true
	[ -d "$dir/rust" ] || { echo "series: no rust/ in $KERNEL_TARBALL" >&2; return 1; }
}

# pristine DIR [PATH...]: DIR holds the tarball's rust/, the other files
# the series changes and PATHs, as the first commit.
pristine() {
	local dir=$1 other
	shift
	mapfile -t other < <(changed_outside_rust)
	extract "$dir" rust "${other[@]}" "$@"
	git_ -C "$dir" init -q
	git_ -C "$dir" add -A
	git_ -C "$dir" commit -q -m "Linux $KERNEL_SERIES (Debian linux-source-$KERNEL_SERIES): rust/, and what the series changes"
	git_ -C "$dir" tag pristine
}

# am DIR: apply the series on top of pristine in DIR.
am() {
	local dir=$1 p
	mapfile -t p < <(patches)
	[ ${#p[@]} -eq 0 ] || git_ -C "$dir" am -q --whitespace=error-all "${p[@]}"
}

# compat DIR: the series' Rust, C helpers and bindings as a part of a
# module, so the module builds against a kernel without the series (a
# distribution's). Every file is derived from the series by rules, never
# edited by hand. The series' changes outside rust/ (the MACsec core's
# offload notifier) are not the module's to carry: a kernel without the
# series lacks them, and so does the Rust that calls them (IN_TREE_ONLY);
# the module stands in for them itself where it must.
#  - each Rust file the series adds or changes under rust/kernel/, whole,
#    with `crate::`, `kernel::`, `bindings::` and `ffi::` paths rooted at
#    the module's `crate::compat` (which re-exports the kernel crate and
#    puts these files and its own bindings in place of their namesakes),
#    and `$crate::` too, in the macros a file exports (they expand with
#    the module as `$crate`),
#    `flags.as_raw()` (private to the kernel crate) as
#    `crate::compat::gfp(flags)`, and the KUnit suites left to the kernel
#    tree; mod.rs declares them, each with the #[cfg] of its declaration
#    in the tree's mod.rs;
#  - each C helper file the series adds or changes, whole, its
#    `rust_helper_` functions renamed `macsec_bridge_helper_` so they can
#    never collide with the kernel's own;
#  - bindings_helper.h: the lines the series adds to the kernel's, after
#    the kernel's own includes (kernel_headers.h), for the module's own
#    bindgen run, which binds only what the series' headers declare (the
#    rest comes from the kernel's `bindings`); kernel_headers.h: the
#    headers the kernel's own bindings_helper.h includes (with its
#    conditionals), to tell the two apart.
IN_TREE_ONLY=(kernel/net/macsec_notifier.rs)

compat() {
	local dir=$1 work f rel name attr mods=() helpers=() hdr
	work=$(mktemp -d)
	pristine "$work"
	am "$work"
	rm -rf "$dir"
	mkdir -p "$dir"
	hdr="Generated by scripts/series.sh compat from patches/$KERNEL_SERIES: do not edit."
	while IFS= read -r f; do
		case "$f" in
		rust/*) f=${f#rust/} ;;
		*) continue ;;
		esac
		[ -e "$work/rust/$f" ] || continue
		case " ${IN_TREE_ONLY[*]} " in *" $f "*) continue ;; esac
		case "$f" in
		kernel/*/mod.rs | kernel/lib.rs) ;;
		kernel/*.rs)
			rel=${f#kernel/}
			# With the attribute its declaration has (#[cfg(...)]).
			name=${rel##*/}
			attr=$(grep -B1 -x "pub mod ${name%.rs};" \
				"$work/rust/kernel/$(dirname "$rel")/mod.rs" 2>/dev/null |
				grep -x '#\[cfg(.*)\]' || true)
			mods+=("$rel|$attr")
			mkdir -p "$dir/$(dirname "$rel")"
			perl -pe '
				s{(?<![\w:\$])crate::}{crate::compat::}g;
				s{\$crate::}{\$crate::compat::}g;
				s{(?<![\w:\$])kernel::}{crate::compat::}g;
				s{(?<![\w:\$])ffi::}{crate::compat::ffi::}g;
				s{(?<![\w:\$])bindings::}{crate::compat::bindings::}g;
				s{\bflags\.as_raw\(\)}{crate::compat::gfp(flags)}g;
				s{^#\[macros::kunit_tests\(.*\)\]$}{#[cfg(any())] // KUnit: in the kernel tree only};
				$_ .= "// '"$hdr"'\n" if $. == 1;
			' "$work/rust/$f" > "$dir/$rel" ;;
		helpers/helpers.c) ;;
		helpers/*.c)
			rel=${f#helpers/}
			helpers+=("$rel")
			mkdir -p "$dir/helpers/$(dirname "$rel")"
			perl -pe 's/\brust_helper_/macsec_bridge_helper_/g;
				$_ .= "// '"$hdr"'\n" if $. == 1;' "$work/rust/$f" > "$dir/helpers/$rel" ;;
		bindings/bindings_helper.h)
			{
				echo "/* SPDX-License-Identifier: GPL-2.0 */"
				echo "/* $hdr */"
				# What the kernel's includes, as in the tree: a line
				# the series adds may use a macro of one of them.
				echo '#include "kernel_headers.h"'
				git -C "$work" diff -U0 pristine HEAD -- rust/"$f" |
					sed -n 's/^+\([^+]\)/\1/p'
			} > "$dir/bindings_helper.h" ;;
		*) echo "series: compat: no rule for rust/$f" >&2; rm -rf "$work"; return 1 ;;
		esac
	done < <(git -C "$work" diff --name-only pristine HEAD)
	{
		echo "/* SPDX-License-Identifier: GPL-2.0 */"
		echo "/* $hdr */"
		echo "/* The headers the kernel's own bindings cover (its bindings_helper.h). */"
		# But a private header outside include/ (drivers/base/base.h),
		# which no headers package ships.
		git -C "$work" show pristine:rust/bindings/bindings_helper.h |
			grep -E '^#(include <|if|ifdef|ifndef|elif|else|endif)' |
			grep -v '^#include <\.\./'
	} > "$dir/kernel_headers.h"
	{
		echo "// SPDX-License-Identifier: GPL-2.0"
		echo "/* $hdr */"
		echo
		echo "#define __rust_helper"
		for f in "${helpers[@]}"; do echo "#include \"helpers/$f\""; done
	} > "$dir/helpers.c"
	rm -rf "$work"
	# mod.rs: the kernel crate, with the series' modules in place of its own.
	{
		echo "// SPDX-License-Identifier: GPL-2.0"
		echo "// $hdr"
		echo
		echo "//! The kernel crate as the module sees it: upstream's, with the"
		echo "//! abstractions of the patch series compiled into the module."
		echo "//!"
		echo "//! Their marked loads of \`tx_sa->active\`, \`secy->operational\` and"
		echo "//! \`dev->ifindex\` pair with the \`WRITE_ONCE()\` stores the series adds to"
		echo "//! macsec.c and dev.c. A kernel without the series stores them plainly: there"
		echo "//! they race those stores as C's own \`READ_ONCE()\` readers do."
		echo
		echo "// The kernel tree's build holds these files to no warnings; here the"
		echo "// rewritten paths can leave an import unused."
		echo "#![allow(unused_imports, unreachable_pub)]"
		echo
		echo "pub use kernel::*;"
		echo
		echo "pub mod bindings;"
		echo
		echo "/// The C \`gfp_t\` bits of \`flags\` (\`Flags::as_raw()\` is private to the kernel crate)."
		echo "pub fn gfp(flags: kernel::alloc::Flags) -> u32 {"
		echo "    // SAFETY: \`Flags\`' only field is a \`u32\`, and \`transmute\` checks that both have the"
		echo "    // same size: the field fills the struct, at offset 0. Every \`u32\` is a valid field value."
		echo "    unsafe { core::mem::transmute::<kernel::alloc::Flags, u32>(flags) }"
		echo "}"
		# The crate's own modules first, then each of its directories'
		# (git lists the paths sorted: a directory's files are together).
		printf '%s\n' "${mods[@]}" | awk -F'[/|]' '{ print NF "\t" $0 }' |
			sort -s -n -k1,1 | cut -f2- | awk -F'[/|]' '
			NF == 2 {
				if (!top++) print ""
				sub(/\.rs$/, "", $1); if ($2 != "") print $2; print "pub mod " $1 ";"; next
			}
			NF == 3 {
				sub(/\.rs$/, "", $2)
				if ($1 != open) {
					if (open != "") print "}"
					print ""; print "/// `kernel::" $1 "`, with the series'"'"' modules."
					print "pub mod " $1 " {"; print "    pub use kernel::" $1 "::*;"
					open = $1
				}
				if ($3 != "") print "    " $3
				print "    pub mod " $2 ";"
				next
			}
			{ print "series: compat: too deep: " $0 > "/dev/stderr"; exit 1 }
			END { if (open != "") print "}" }'
	} > "$dir/mod.rs"
	cat > "$dir/bindings.rs" <<-EOF
	// SPDX-License-Identifier: GPL-2.0
	// $hdr

	//! \`kernel::bindings\`, with what the series adds: the declarations of
	//! its headers and its C helpers, bound when the module is built (Kbuild).
	//! A name bound here takes precedence over the kernel's. The lints are
	//! those the kernel allows in its own bindings.

	#![allow(
	    clippy::all,
	    clippy::as_underscore,
	    clippy::cast_lossless,
	    clippy::ptr_as_ptr,
	    clippy::ref_as_ptr,
	    clippy::undocumented_unsafe_blocks,
	    dead_code,
	    missing_docs,
	    non_camel_case_types,
	    non_upper_case_globals,
	    non_snake_case,
	    improper_ctypes,
	    unreachable_pub,
	    unsafe_op_in_unsafe_fn
	)]
	#![cfg_attr(not(CONFIG_RUSTC_HAS_UNNECESSARY_TRANSMUTES), allow(unknown_lints))]
	#![allow(unnecessary_transmutes)]
	#![cfg_attr(
	    CONFIG_RUSTC_HAS_SUSPICIOUS_RUNTIME_SYMBOL_DEFINITIONS,
	    allow(suspicious_runtime_symbol_definitions)
	)]

	pub use kernel::bindings::*;
	use kernel::ffi;
	use pin_init::MaybeZeroable;

	include!("bindings_generated.rs");
	include!("bindings_helpers_generated.rs");
	EOF
	# Laid out as the kernel lays out its Rust (its .rustfmt.toml).
	tar -xOf "$KERNEL_TARBALL" "linux-source-$KERNEL_SERIES/.rustfmt.toml" > "$dir/.rustfmt.toml"
	find "$dir" -name '*.rs' -print0 | LC_ALL=C sort -z |
		xargs -0 "$RUSTFMT" --edition 2021 --config-path "$dir/.rustfmt.toml"
	rm "$dir/.rustfmt.toml"
}

# user: write the series' in-tree user, its last two patches, from this
# repository's files, and every patch of the series again with them, so
# that each is numbered out of the whole. By rules, never by hand:
#  - the driver: drivers/net/macsec_bridge/ without what only a build
#    outside the tree needs (compat/ and its rules, the host tests and
#    their Cargo files) and without the interposer, which only a kernel
#    without the offload notifier needs; its Kbuild builds
#    obj-$(CONFIG_MACSEC_BRIDGE);
#  - Documentation/networking/macsec_bridge.rst, listed in the networking
#    index, the YNL spec and the uAPI header; a Kconfig entry after
#    MACSEC's, a Makefile line after macsec.o's, and a MAINTAINERS entry
#    where its name sorts, maintained by the exporter;
#  - the kselftests, but for those of this repository's tools (the DKMS
#    package, DRANet-Sec) and of the interposer; their model NIC built as
#    the kselftests' test modules (TEST_GEN_MODS_DIR), CONFIG_MACSEC_BRIDGE=m
#    in their config, a TARGETS line in the selftests' Makefile, and their
#    directory in the MAINTAINERS entry;
#  - in every file, the lines from `# out-of-tree begin` (`.. out-of-tree
#    begin` in reStructuredText, indented as the text it cuts) to the
#    matching end are left out.
# The author is the exporter (git config user.name and user.email, or
# MB_AUTHOR). A patch keeps its date while its file name stays, so writing
# the patches again changes one only where its content changed.
USER_TREE_FILES=(drivers/net/Kconfig drivers/net/Makefile MAINTAINERS
	Documentation/networking/index.rst tools/testing/selftests/Makefile)
USER_SKIP_DRIVER='^(compat/|tests/|target/|Cargo\.(toml|lock)$|compat\.mk$|compat_bindgen\.sh$|compat_root\.sh$|interposer\.rs$|platform_compat\.rs$)'
USER_SKIP_TESTS='^(dmesg_clean\.sh|dkms_deb\.sh|dkms_load\.sh|dranet_sec\.sh|dranet_sec_bind\.sh|dranet_sec_pod\.sh|audit\.sh|audit_wire\.py|macsec_interposer\.sh|macsec_interposer_vlan\.sh|test_modules/macsec_interposer_test\.rs|test_modules/nic_bindings\.h|test_modules/nic_bindings\.rs)$'
USER_ENTRY="MACSEC BRIDGE DRIVER"
USER_TESTS=tools/testing/selftests/net/macsec_bridge

# A marker line, indented as the text it cuts, then "begin" or "end".
OOT_MARK='^[[:space:]]*(#|\.\.) out-of-tree'

# strip_oot FILE: FILE without its out-of-tree parts; a run of blank lines
# becomes one, and none starts or ends the file.
strip_oot() {
	OOT_MARK=$OOT_MARK awk '
		$0 ~ (ENVIRON["OOT_MARK"] " begin$") { skip = 1; next }
		skip { if ($0 ~ (ENVIRON["OOT_MARK"] " end$")) skip = 0; next }
		/^$/ { pending = 1; next }
		{ if (pending && printed) print ""; pending = 0; print; printed = 1 }
	' "$1"
}

# user_copy SRC DST SKIP: the files git knows under SRC (tracked, or new
# and not ignored) but those whose path under SRC matches SKIP, into DST,
# each without its out-of-tree parts.
user_copy() {
	local src=$1 dst=$2 skip=$3 f rel
	while IFS= read -r f; do
		rel=${f#"$src"/}
		[[ $rel =~ $skip ]] && continue
		[ -f "$top/$f" ] || continue
		mkdir -p "$(dirname "$dst/$rel")"
		if grep -qE "$OOT_MARK begin\$" "$top/$f"; then
			strip_oot "$top/$f" >"$dst/$rel"
		else
			cp "$top/$f" "$dst/$rel"
		fi
		chmod --reference="$top/$f" "$dst/$rel"
	done < <(git -C "$top" ls-files --cached --others --exclude-standard -- "$src" | LC_ALL=C sort -u)
}

# edit_file FILE AWK-ARG...: FILE through awk, which must change it.
edit_file() {
	local f=$1
	shift
	LC_ALL=C awk "$@" "$f" >"$f.new"
	if cmp -s "$f" "$f.new"; then
		echo "series: user: found no place in ${f#"$work"/}" >&2
		return 1
	fi
	mv "$f.new" "$f"
}

# maintainers DIR FILE...: who gets FILEs (patches), as DIR's
# MAINTAINERS says, one "To:" or "Cc:" line each: the maintainers and
# reviewers, then the lists, as get_maintainer.pl names them (b4's
# split), after the tree's .mailmap. No git history (the tarball has
# none) and no keywords: RUST's matches a message that names Rust and
# ZSTD's a test's `zstd -d`, and neither entry reviews what those lines
# are in. get_maintainer.pl wants a tree's top, so it runs in one made
# of the tarball's script and .mailmap and DIR's MAINTAINERS.
maintainers() {
	local dir=$1 gm
	shift
	gm=$(mktemp -d)
	tar -xf "$KERNEL_TARBALL" -C "$gm" --strip-components=1 \
		"linux-source-$KERNEL_SERIES/scripts/get_maintainer.pl" "linux-source-$KERNEL_SERIES/.mailmap"
	cp "$dir/MAINTAINERS" "$gm/MAINTAINERS"
	touch "$gm/COPYING" "$gm/CREDITS" "$gm/Kbuild" "$gm/Makefile" "$gm/README"
	mkdir -p "$gm/Documentation" "$gm/arch" "$gm/include" "$gm/drivers" "$gm/fs" \
		"$gm/init" "$gm/ipc" "$gm/kernel" "$gm/lib"
	# Sorted: the script's order among entries follows Perl's hash order,
	# which changes from run to run.
	(cd "$gm" && perl scripts/get_maintainer.pl --no-git --no-git-fallback --no-rolestats \
		--no-keywords --no-l "$@" | LC_ALL=C sort | sed 's/^/To: /'
	 perl scripts/get_maintainer.pl --no-git --no-git-fallback --no-rolestats \
		--no-keywords --no-m --no-r "$@" | LC_ALL=C sort | sed 's/^/Cc: /')
	rm -rf "$gm"
}

# cover_part COVER subject|date|blurb NAMES: what a cover letter's author
# wrote (its subject without the prefix, its date, its text up to the
# shortlog that git format-patch writes after it, headed by the name of
# one of the set's authors, NAMES, one per line).
cover_part() {
	NAMES=$3 awk -v want="$2" '
		BEGIN { n = split(ENVIRON["NAMES"], l, "\n"); for (i = 1; i <= n; i++) if (l[i] != "") name[l[i]] = 1; n = 0 }
		!body && /^Subject: / { subj = $0; sub(/^Subject: (\[[^]]*\] )?/, "", subj); insubj = 1; next }
		!body && insubj && /^ / { subj = subj $0; next }
		{ insubj = 0 }
		!body && /^Date: / { date = substr($0, 7) }
		!body && /^$/ { body = 1; next }
		body && /^[^ ].* \([0-9]+\):$/ { h = $0; sub(/ \([0-9]+\):$/, "", h); if (h in name) exit }
		body { text[++n] = $0 }
		END {
			if (want == "subject") print subj
			else if (want == "date") print date
			else { while (n > 0 && text[n] == "") n--; for (i = 1; i <= n; i++) print text[i] }
		}' "$1"
}

# authors DIR: the names in the From: lines of DIR's patches.
authors() {
	awk '/^From: / { s = substr($0, 7); getline c; if (c ~ /^ /) s = s c; sub(/ *<.*/, "", s); gsub(/^"|"$/, "", s); print s; nextfile }' \
		"$1"/*.patch | LC_ALL=C sort -u
}

# base_note: what a set's patches apply to, for a patch posted alone.
base_note() {
	printf '%s\n' "Applies to Linux ${DEBIAN_KERNEL_VERSION%%-*} as Debian's linux-source-$KERNEL_SERIES ($DEBIAN_KERNEL_VERSION)" \
		"carries it. That tree has no upstream commit id, so there is no" \
		"base-commit line."
}

# format_sets REPO: REPO's commits on pristine as the sets' patches,
# written again (SETS above): each set numbered by itself, with its
# subject prefix, every file addressed to whom get_maintainer.pl names
# for the set, and, for a set of more than one patch, a cover letter
# that keeps its author's subject, date and text and has git's shortlog
# and diffstat (without its list of created files, whose paths run past
# a mail's width). A set that applies only on earlier ones lists their
# patches' ids (git patch-id --stable) as git format-patch --base would.
# There is no base-commit: the pristine tree is Debian's tarball, which
# carries no upstream commit id; each cover letter names it instead, and
# a patch posted alone below its ---.
format_sets() {
	local repo=$1 commits s dir prefix n match i=0 out range cover tmp subject date prereq a bad names
	local -a addr args
	mapfile -t commits < <(git -C "$repo" rev-list --reverse pristine..HEAD)
	tmp=$(mktemp -d)
	for s in "${SETS[@]}"; do
		IFS='|' read -r dir prefix n match <<<"$s"
		[ -n "$n" ] || n=$((${#commits[@]} - i))
		if [ "$n" -le 0 ] || [ $((i + n)) -gt ${#commits[@]} ]; then
			echo "series: ${#commits[@]} commits do not fill the set $dir" >&2
			return 1
		fi
		out=$SERIES_DIR/$dir
		mkdir -p "$out"
		range=${commits[i]}~..${commits[i + n - 1]}
		cover=$out/0000-cover-letter.patch
		rm -rf "$tmp/set" "$tmp/patches"
		fp -C "$repo" format-patch -q --no-signature --zero-commit -o "$tmp/patches" "$range"
		# Not to the sender, whom the module's MAINTAINERS entry names.
		maintainers "$repo" "$tmp/patches"/*.patch >"$tmp/addr"
		grep -q '^To: ' "$tmp/addr" || { echo "series: get_maintainer.pl named no one for $dir" >&2; return 1; }
		mapfile -t addr < <(grep -vF "<${MB_AUTHOR##*<}" "$tmp/addr")
		args=()
		for a in "${addr[@]}"; do
			case $a in
			"To: "*) args+=("--to=${a#To: }") ;;
			*) args+=("--cc=${a#Cc: }") ;;
			esac
		done
		[ "$n" -eq 1 ] || args+=(--cover-letter)
		fp -C "$repo" format-patch -q --signoff --no-signature --zero-commit --no-thread \
			--no-base --subject-prefix="$prefix" "${args[@]}" -o "$tmp/set" "$range"
		bad=$(find "$tmp/set" -name '*.patch' ! -name '0000-*' -exec sed -n 's/^Subject: \[[^]]*\] //p' {} + |
			grep -vE "$match" || true)
		[ -z "$bad" ] || { echo "series: the set $dir ($match) would take: $bad" >&2; return 1; }
		if [ "$n" -gt 1 ]; then
			if [ ! -f "$cover" ]; then
				echo "series: the set $dir has no cover letter ($cover)" >&2
				return 1
			fi
			names=$(authors "$out")
			subject=$(cover_part "$cover" subject "$names")
			date=$(cover_part "$cover" date "$names")
			cover_part "$cover" blurb "$names" >"$tmp/blurb"
			prereq=
			[ "$i" -eq 0 ] || prereq=$(fp -C "$repo" log --reverse -p --format='commit %H' \
				"pristine..${commits[i - 1]}" | fp patch-id --stable | awk '{ print "prerequisite-patch-id: " $1 }')
			SUBJECT=$subject DATE=$date AUTHOR=$MB_AUTHOR PREREQ=$prereq awk -v blurb="$tmp/blurb" '
				/^From: / && !head { print "From: " ENVIRON["AUTHOR"]; head = 1; from = 1; next }
				from && /^ / { next }
				{ from = 0 }
				/^Date: / && !date { print "Date: " ENVIRON["DATE"]; date = 1; next }
				(k = index($0, "*** SUBJECT HERE ***")) { $0 = substr($0, 1, k - 1) ENVIRON["SUBJECT"] substr($0, k + 20) }
				/^\*\*\* BLURB HERE \*\*\*$/ { while ((getline l < blurb) > 0) print l; next }
				/^ (create|delete) mode [0-7]+ / { next }
				{ print; last = $0 }
				END { if (ENVIRON["PREREQ"] != "") { if (last != "") print ""; print ENVIRON["PREREQ"] } }
			' "$tmp/set/0000-cover-letter.patch" >"$tmp/cover"
			mv "$tmp/cover" "$tmp/set/0000-cover-letter.patch"
		fi
		# A patch posted alone has no cover letter: it names its base
		# below its ---, where git am reads nothing.
		if [ "$n" -eq 1 ]; then
			BASE=$(base_note) awk '
				!done && /^---$/ { print; print ENVIRON["BASE"]; print ""; done = 1; next }
				{ print }
			' "$tmp/set"/*.patch >"$tmp/one"
			mv "$tmp/one" "$tmp/set"/*.patch
		fi
		find "$out" -maxdepth 1 -name '*.patch' -delete
		mv "$tmp/set"/*.patch "$out/"
		i=$((i + n))
	done
	rm -rf "$tmp"
	[ "$i" -eq ${#commits[@]} ] || { echo "series: $((${#commits[@]} - i)) commits in no set" >&2; return 1; }
}

# user_commit DIR MSG GLOB: commit DIR's changes as the exporter with the
# message file MSG, dated as the existing patch whose name matches GLOB.
user_commit() {
	local dir=$1 msg=$2 p date=
	p=$(find "${USER_DATES_DIR:-$SERIES_DIR}" -mindepth 2 -maxdepth 2 -name "$3" | head -1)
	[ -z "$p" ] || date=$(sed -n 's/^Date: //p' "$p" | head -1)
	git -C "$dir" add -A
	if [ -n "$date" ]; then
		GIT_AUTHOR_NAME=$GIT_COMMITTER_NAME GIT_AUTHOR_EMAIL=$GIT_COMMITTER_EMAIL \
			GIT_AUTHOR_DATE=$date git -C "$dir" commit -q -F "$msg"
	else
		GIT_AUTHOR_NAME=$GIT_COMMITTER_NAME GIT_AUTHOR_EMAIL=$GIT_COMMITTER_EMAIL \
			git -C "$dir" commit -q -F "$msg"
	fi
}

user() {
	local work d t name email
	if [ -z "${MB_AUTHOR:-}" ]; then
		name=$(git -C "$top" config user.name || true)
		email=$(git -C "$top" config user.email || true)
		if [ -z "$name" ] || [ -z "$email" ]; then
			echo "series: user: the patches are signed off by you: set git config user.name and user.email" >&2
			return 1
		fi
		MB_AUTHOR="$name <$email>"
	fi
	export GIT_COMMITTER_NAME=${MB_AUTHOR% <*} GIT_COMMITTER_EMAIL=${MB_AUTHOR##*<}
	GIT_COMMITTER_EMAIL=${GIT_COMMITTER_EMAIL%>}
	work=$(mktemp -d)
	# shellcheck disable=SC2064
	trap "rm -rf '$work'" EXIT
	pristine "$work" "${USER_TREE_FILES[@]}"
	am "$work"

	# The driver, and what the tree needs to know of it.
	d=$work/drivers/net/macsec_bridge
	user_copy drivers/net/macsec_bridge "$d" "$USER_SKIP_DRIVER"
	edit_file "$d/Kbuild" '{ sub(/^obj-m \+= macsec_bridge\.o$/, "obj-$(CONFIG_MACSEC_BRIDGE) += macsec_bridge.o"); print }'
	mkdir -p "$work/Documentation/netlink/specs" "$work/include/uapi/linux"
	strip_oot "$top/Documentation/networking/macsec_bridge.rst" >"$work/Documentation/networking/macsec_bridge.rst"
	cp "$top/Documentation/netlink/specs/macsec_bridge.yaml" "$work/Documentation/netlink/specs/"
	cp "$top/include/uapi/linux/macsec_bridge.h" "$work/include/uapi/linux/"
	edit_file "$work/Documentation/networking/index.rst" '
		!done && /^   [a-z]/ && $1 > "macsec_bridge" { print "   macsec_bridge"; done = 1 } { print }'
	edit_file "$work/drivers/net/Kconfig" '
		$0 == "config MACSEC" { in_macsec = 1 }
		in_macsec && /^config / && $0 != "config MACSEC" {
			print "config MACSEC_BRIDGE"
			print "\ttristate \"MACsec protection state of RDMA ports\""
			print "\tdepends on MACSEC && INFINIBAND && RUST"
			print "\thelp"
			print "\t  Follows the offloaded MACsec SecY that protects each RDMA"
			print "\t  (RoCE) port'"'"'s netdev, through the MACsec core'"'"'s offload"
			print "\t  notifier, and shows whether the port is protected: as"
			print "\t  NETIF_F_HW_MACSEC on the port'"'"'s netdev and as an object of"
			print "\t  the \"macsec-bridge\" generic netlink family, with"
			print "\t  notifications. The SecY may live in another network"
			print "\t  namespace than the port, as on a DPU host."
			print ""
			print "\t  See <file:Documentation/networking/macsec_bridge.rst>."
			print ""
			print "\t  To compile this driver as a module, choose M here: the"
			print "\t  module will be called macsec_bridge."
			print ""
			in_macsec = 0
		}
		{ print }'
	edit_file "$work/drivers/net/Makefile" '
		{ print } $0 == "obj-$(CONFIG_MACSEC) += macsec.o" { print "obj-$(CONFIG_MACSEC_BRIDGE) += macsec_bridge/" }'
	edit_file "$work/MAINTAINERS" -v e="$USER_ENTRY" -v author="$MB_AUTHOR" '
		function entry() {
			print e; print "M:\t" author; print "L:\tnetdev@vger.kernel.org"; print "S:\tMaintained"
			print "F:\tDocumentation/netlink/specs/macsec_bridge.yaml"
			print "F:\tDocumentation/networking/macsec_bridge.rst"
			print "F:\tdrivers/net/macsec_bridge/"
			print "F:\tinclude/uapi/linux/macsec_bridge.h"
			print ""
		}
		# The entries, sorted by name, follow the introduction.
		listed && !done && blank && /^[0-9A-Z]/ && $0 > e { entry(); done = 1 }
		/^Maintainers List$/ { listed = 1 }
		{ blank = ($0 == ""); print }'
	user_commit "$work" "$top/patches/user/driver.msg" "[0-9][0-9][0-9][0-9]-net-macsec_bridge-*.patch"

	# The kselftests.
	t=$work/$USER_TESTS
	user_copy selftests/net/macsec_bridge "$t" "$USER_SKIP_TESTS"
	USER_SKIP_TESTS=$USER_SKIP_TESTS edit_file "$t/Makefile" '
		/^TEST_PROGS := / || /^TEST_FILES := / {
			n = split($0, w, " "); line = w[1] " " w[2]
			for (i = 3; i <= n; i++) if (w[i] !~ ENVIRON["USER_SKIP_TESTS"]) line = line " " w[i]
			$0 = line
		}
		{ print }
		/^TEST_FILES := / { print ""; print "TEST_GEN_MODS_DIR := test_modules" }'
	# The repository's kernels take RUST from scripts/kconfig/vm.config;
	# in the tree, the fragment states what the module depends on.
	printf 'CONFIG_RUST=y\nCONFIG_MACSEC_BRIDGE=m\n' >>"$t/config"
	# Software-only tests (RXE, netdevsim, a model NIC), so under net/ as
	# drivers/net/README.rst asks; the net/ targets are sorted.
	edit_file "$work/tools/testing/selftests/Makefile" '
		!done && /^TARGETS \+= net\// && $3 > "net/macsec_bridge" {
			print "TARGETS += net/macsec_bridge"; done = 1
		}
		{ print }'
	edit_file "$work/MAINTAINERS" -v e="$USER_ENTRY" -v tests="$USER_TESTS/" '
		$0 == e { on = 1 }
		on && $0 == "F:\tinclude/uapi/linux/macsec_bridge.h" { print; print "F:\t" tests; on = 0; next }
		{ print }'
	user_commit "$work" "$top/patches/user/selftests.msg" "[0-9][0-9][0-9][0-9]-selftests-net-add-macsec_bridge-*.patch"

	# Every patch again, set by set.
	format_sets "$work"
	rm -rf "$work"
}

case "${1:-}" in
compat)
	compat "${2:?usage: series.sh compat DIR}" ;;
user)
	user
	user_patches | sed "s|^$top/||" ;;
patches)
	patches ;;
all-patches)
	all_patches ;;
pristine)
	dir=${2:?usage: series.sh pristine DIR}
	[ ! -e "$dir" ] || { echo "series: $dir exists" >&2; exit 1; }
	pristine "$dir" "${USER_TREE_FILES[@]}" ;;
sets)
	printf '%s\n' "${SETS[@]}" ;;
user-patches)
	user_patches ;;
apply)
	tree=${2:?usage: series.sh apply TREE}
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
	pristine "$work"
	am "$work"
	n=0
	while IFS= read -r f; do
		if [ -e "$work/$f" ]; then
			mkdir -p "$tree/$(dirname "$f")"
			# Replace, never write through: the tree may share inodes.
			rm -f "$tree/$f"
			cp "$work/$f" "$tree/$f"
		else
			rm -f "$tree/$f"
		fi
		n=$((n + 1))
	done < <(git -C "$work" diff --name-only pristine HEAD)
	echo "series: $(patches | wc -l) patch(es), $n file(s) applied to $tree" ;;
edit)
	dir=${2:?usage: series.sh edit DIR}
	[ ! -e "$dir" ] || { echo "series: $dir exists" >&2; exit 1; }
	pristine "$dir"
	am "$dir"
	echo "series: $dir has the series on tag 'pristine'; edit, then: series.sh export $dir" ;;
export)
	dir=${2:?usage: series.sh export DIR}
	# The patches are the exporter's: each From and Signed-off-by is the git
	# identity of whoever exports (this repository's user.name and
	# user.email), never a made-up one.
	name=$(git -C "$top" config user.name || true)
	email=$(git -C "$top" config user.email || true)
	if [ -z "$name" ] || [ -z "$email" ]; then
		echo "series: export signs the patches off as you: set git config user.name and user.email" >&2
		exit 1
	fi
	export GIT_COMMITTER_NAME=$name GIT_COMMITTER_EMAIL=$email MB_AUTHOR="$name <$email>"
	# Author dates are kept: a patch changes only where its content did.
	git -C "$dir" -c advice.detachedHead=false rebase -q --force-rebase pristine \
		--exec 'git commit -q --amend --no-edit --no-verify --author="$MB_AUTHOR"'
	# The abstractions into their sets, then every patch again with the
	# user's generated after them, in a copy of the series that replaces
	# it once all of it is written; the user's patches keep their dates.
	new=$(mktemp -d)
	trap 'rm -rf "$new"' EXIT
	cp -a "$SERIES_DIR/." "$new/"
	SERIES_DIR=$new format_sets "$dir"
	USER_DATES_DIR=$SERIES_DIR SERIES_DIR=$new user
	for s in "${SETS[@]}"; do
		rm -rf "${SERIES_DIR:?}/${s%%|*}"
		cp -a "$new/${s%%|*}" "$SERIES_DIR/"
	done
	rm -rf "$new"
	all_patches | sed "s|^$top/||" ;;
list)
	for p in $(patches); do
		sed -n 's|^diff --git a/\(.*\) b/.*|\1|p' "$p"
	done | LC_ALL=C sort -u ;;
*)
	echo "usage: series.sh apply TREE | edit DIR | export DIR | list | compat DIR | user | patches | user-patches | all-patches | sets | pristine DIR" >&2
	exit 2 ;;
esac
