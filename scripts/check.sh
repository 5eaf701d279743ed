#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make check` (and `make check-full`): every test the project has, then
# the wall time of each stage and one line
#   N passed, N failed, N skipped
#
#  1. builds: the test kernel of the module's series ($MODULE_SERIES,
#             with the patch series; cached), the selftests' test modules,
#             the module (no warnings), the real `dkms add/build/install`
#             and dranet-sec (build_kernel)
#  2. checks:  vm-run's own boot tests (scripts/tests/boot), the series'
#             warnings and rustfmt, clippy and rustfmt on the module
#             (kernel_checks); scripts/tests/*.sh and `cargo test` of every
#             crate in the repo (host_tests)
#  3. stock:  (debug variant) a pristine kernel, `dkms build` against its
#             headers as a distribution installs them, the Debian package
#             built and installed (build_stock)
#  4. VMs:    the kselftests under selftests/net/macsec_bridge
#             through the kernel's kselftest runner (KTAP; exit 4 = skip):
#             every one on the test kernel, and the DKMS module's on the
#             stock kernel. Each guest ends with the dmesg and kmemleak
#             scan.
#
# The tier (--tier check|full, MB_TIER in the guest) sets the sizes of the
# tests that have one (selftests/.../sizes); nothing else differs.
#
# The guests run two at a time (--vms 2, the default), one vCPU each
# (--cpus): the module's kselftests in two shards, the first booting as
# soon as stage 1 is done, beside stages 2 and 3, the second after them,
# followed by the stock guest, balanced by the per-test times in
# scripts/ksft-times. --vms 1 runs one guest of two vCPUs at a time,
# after every stage.
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$top/scripts/toolchain.env"

variant=debug
shard=
tier=check
vms=2
cpus=
while [ $# -gt 0 ]; do
	case "$1" in
	--variant) variant=$2; shift 2 ;;
	--shard) shard=$2; shift 2 ;;
	--tier) tier=$2; shift 2 ;;
	--vms) vms=$2; shift 2 ;;
	--cpus) cpus=$2; shift 2 ;;
	*) echo "check.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done

if [ -n "$shard" ] && { ! [[ $shard =~ ^([1-9][0-9]*)/([1-9][0-9]*)$ ]] ||
	[ "${BASH_REMATCH[1]}" -gt "${BASH_REMATCH[2]}" ]; }; then
	echo "check.sh: --shard takes I/N with 1 <= I <= N, not '$shard'" >&2
	exit 2
fi
case "$tier" in
check | full) ;;
*) echo "check.sh: --tier takes check or full, not '$tier'" >&2; exit 2 ;;
esac
case "$vms" in
1 | 2) ;;
*) echo "check.sh: --vms takes 1 or 2, not '$vms'" >&2; exit 2 ;;
esac
# A --shard run (the KASAN halves) is one guest already.
[ -z "$shard" ] || vms=1
# vCPUs per guest: by default the two cores shared out.
[ -n "$cpus" ] || cpus=$((3 - vms))
[[ $cpus =~ ^[1-9]$ ]] || { echo "check.sh: --cpus takes 1 to 9, not '$cpus'" >&2; exit 2; }


passed=0 failed=0 skipped=0
failures=()
log=$(mktemp -d /tmp/macsec_bridge-check.XXXXXX)

# The inventory: every test each guest and host suite runs, and the skips
# allowed (scripts/inventory). Each suite or test that reports is noted
# in $reported as "GUEST<TAB>TEST"; the run ends by comparing the two.
inventory=${MB_INVENTORY:-$top/scripts/inventory}
reported=$log/reported
: >"$reported"
# inv_tests GUEST: GUEST's tests, in the inventory's order.
inv_tests() { INVENTORY=$inventory "$top/scripts/inventory-list" "$1"; }
# inv_skip GUEST TEST [KIND]: why TEST may skip on GUEST, as a whole
# (KIND skip, the default) or one of its checks (skip-check); fails if it
# may not.
inv_skip() {
	awk -F'\t' -v g="$1" -v t="$2" -v k="${3:-skip}: " '
		!/^#/ && $1 == g && $2 == t && index($3, k) == 1 {
			print substr($3, length(k) + 1); f = 1
		}
		END { exit !f }' "$inventory"
}
# reported GUEST TEST: TEST of GUEST reported a result.
reported() { printf '%s\t%s\n' "$1" "$2" >>"$reported"; }
# The run's log directory, whatever a stage names $log locally.
vmdir=$log/vm
echo "== tier $tier, $vms guest(s) at a time of $cpus vCPU(s) each; logs in $log"
# The KASAN kernel is built with LLVM (scripts/kernel.sh): so must be every
# module built against it, DKMS included (make reads LLVM from the
# environment).
# DKMS 3.0 adds a bare `CC=clang LD=ld.lld` for a clang-built kernel:
# Debian's unversioned LLVM 19 tools live in /usr/lib/llvm-19/bin.
if [ "$variant" = kasan ]; then
	export LLVM=-19 PATH=/usr/lib/llvm-19/bin:$PATH
fi

# The host crates (dranet-sec, the module's host tests) build in one
# target directory for every clone on this machine, kept with the kernels:
# a fresh clone then compiles only its own crates, not the 400 of their
# dependencies again (dranet-sec: 41 s cold, 4 s so). A clone at another
# path gets artifacts of its own (Cargo hashes a path crate's location
# into them), so two checkouts never share a build of their own code; the
# lock makes a build and the copy taken of its binary one step against
# another run. Each path adds its crates' artifacts: past 8 GiB the
# directory starts again empty.
cargo_target=$CACHE_DIR/cargo-target
# cargo_locked CMD...: CMD holding the directory's lock.
cargo_locked() {
	mkdir -p "$cargo_target" && (flock 9 && "$@") 9>"$cargo_target.lock"
}
# host_cargo ARGS...: cargo of the host toolchain (not the kernel's pinned
# rustc) on the shared target directory. No debug info: a failed test
# still names its file and line, and its tests link in 8 s instead of 14
# (the directory: 1.1 GB instead of 3).
host_cargo() {
	env -u RUSTC -u RUSTDOC -u RUSTFMT CARGO_TARGET_DIR="$cargo_target" \
		CARGO_PROFILE_DEV_DEBUG=0 cargo "$@"
}
if [ -z "${CHECK_SH_LIB:-}" ] &&
	[ "$(du -s --block-size=1G "$cargo_target" 2>/dev/null | cut -f1)" -gt 8 ] 2>/dev/null; then
	cargo_locked rm -rf "$cargo_target"
fi

# Each stage's wall time, printed before the summary.
stage_names=() stage_at=() stage_secs=()
stage_t0=
stage_begin() { stage_t0=$SECONDS; }
stage_end() {
	stage_names+=("$1")
	stage_at+=("$stage_t0")
	stage_secs+=($((SECONDS - stage_t0)))
}

# test_output NAME: what the kselftest NAME printed, as the runner's
# output holds it (between its "# selftests:" line and its result).
test_output() {
	awk -v n="# selftests: $1" '
		$0 == n { on = 1; next }
		on && /^(not )?ok [0-9]+ selftests:/ { exit }
		on { print }' "$log/ksft-results"
}

# skip_reason NAME: why the kselftest NAME skipped, from its own plan line
# ("1..0 # SKIP reason").
skip_reason() {
	test_output "$1" | awk '
		/1\.\.0 # SKIP/ { sub(/.*1\.\.0 # SKIP */, ""); print; found = 1; exit }
		END { if (!found) print "no reason given" }'
}

# result NAME RC: RC 0 = pass, 4 = skip, anything else = fail.
result() {
	case "$2" in
	0) passed=$((passed + 1)); echo "PASS  ${prefix:-}$1" ;;
	4) skipped=$((skipped + 1)); echo "SKIP  ${prefix:-}$1" ;;
	*) failed=$((failed + 1)); failures+=("${prefix:-}$1"); echo "FAIL  ${prefix:-}$1 (log: $3)" ;;
	esac
}

# skip_result GUEST TEST NAME WHY LOG [KIND]: TEST of GUEST (result NAME)
# skipped (KIND skip, the default), or one of its checks did (skip-check),
# for WHY: a skip if the inventory allows it there, a failure otherwise.
skip_result() {
	local why
	if why=$(inv_skip "$1" "$2" "${6:-skip}"); then
		result "$3 (skipped: $4; allowed: $why)" 4 "$5"
	else
		result "$3 skipped ($4), and the inventory allows it no skip on $1" 1 "$5"
	fi
}

# run NAME CMD...: one test from one command, its output kept in the log dir.
run() {
	local name=$1 out
	shift
	out=$log/$(echo "$name" | tr -c '[:alnum:]_.-' _).log
	"$@" >"$out" 2>&1
	case $? in
	0) result "$name" 0 "$out" ;;
	# No host check may skip (the inventory allows none).
	4) result "$name (it skipped)" 1 "$out" ;;
	*) result "$name" 1 "$out" ;;
	esac
}

# kmake ARGS...: make with the pinned toolchain, for the kernel and
# modules built against it.
kmake() {
	make ARCH=x86_64 RUSTC="$RUSTC" HOSTRUSTC="$RUSTC" RUSTDOC="$RUSTDOC" BINDGEN="$BINDGEN" \
		RUSTFMT="$RUSTFMT" CLIPPY_DRIVER="$CLIPPY_DRIVER" "$@"
}

# build_test_modules DIR KDIR [MAKE-ARGS...]: the selftests' modules,
# built in DIR against the kernel tree or headers KDIR (clippy, W=1). They
# sit where they sit in the repo, so that a path to the module's files
# (a #[path], compat.mk) is the same here and there.
test_modules_rel=selftests/net/macsec_bridge/test_modules
build_test_modules() {
	local t=$1 kdir=$2 src
	shift 2
	src=$("$top/scripts/test-modules-src" "$t") || return 1
	kmake -C "$kdir" M="$src" W=1 CLIPPY=1 "$@" modules 2>&1
}

# modsrc DIR: the module's source, a scratch copy so that concurrent
# builds never collide.
modsrc() {
	rm -rf "$1"; mkdir -p "$1"
	cp -r "$top/Kbuild" "$top/drivers" "$top/include" "$1/"
	mkdir "$1/scripts" && cp "$top/scripts/dkms-build.sh" "$1/scripts/"
}

# dkms_tree DIR KDIR: a private DKMS tree in DIR holding the package's
# source, for the kernel whose tree or headers are KDIR; sets dkms_args
# for `dkms add/build/install`, and dkms_log to where DKMS keeps the make
# log of a build for that kernel.
dkms_tree() {
	local d=$1 ver kver
	ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")
	kver=$(make -s -C "$2" kernelrelease)
	rm -rf "$d"
	mkdir -p "$d/tree" "$d/install/$kver" "$d/src"
	modsrc "$d/src/macsec_bridge-$ver"
	cp "$top/dkms.conf" "$d/src/macsec_bridge-$ver/"
	dkms_args=(--dkmstree "$d/tree" --sourcetree "$d/src" --installtree "$d/install"
		   -m macsec_bridge -v "$ver" -k "$kver" --kernelsourcedir "$2")
	dkms_log=$d/tree/macsec_bridge/$ver
}

# dkms_install: add, build and install in the tree dkms_tree made (a
# private install tree has no modules.dep to update: no depmod); print
# the make log, whether the build passed or failed.
dkms_install() {
	dkms add "${dkms_args[@]}" && dkms build "${dkms_args[@]}" &&
	dkms install "${dkms_args[@]}" --force --no-depmod
	local rc=$?
	# DKMS keeps the log of a build that passed beside the module.
	cat "$(find "$dkms_log" -name make.log | head -1)" 2>/dev/null
	return $rc
}

# --- Guests ---------------------------------------------------------------
#
# A guest is a job directory under $vmdir: `cmd` (the vm-run command line,
# NUL-separated), `prefix` (its results' prefix), `kunit` (count: its boot's
# KUnit doctests are counted; check: only a failure among them counts;
# none), `tests`, and after the run `rc`, `secs` and its logs. A slot runs
# its guests one after the other (start_slot); the results are read when
# every slot is done, in the order the jobs were made.
jobs=()

# vm_job NAME PREFIX KUNIT TIMEOUT KDIR ENV... -- TESTS...: a guest that
# runs TESTS (through vm-selftests.sh, with the kselftest runner and the
# YNL CLI of KDIR) with ENV (NAME=VALUE words), its logs in $vmdir/NAME.
# It boots KDIR's kernel, or the image $vm_kimg if set (a distribution's).
vm_job() {
	local name=$1 jprefix=$2 kunit=$3 timeout=$4 kdir=$5 d=$vmdir/$1 envs=() boot
	shift 5
	boot=(--kdir "$kdir")
	[ -z "${vm_kimg:-}" ] || boot=(--kimg "$vm_kimg")
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	mkdir -p "$d"
	echo "$jprefix" >"$d/prefix"
	echo "$kunit" >"$d/kunit"
	printf '%s\n' "$@" >"$d/tests"
	# Whole or not at all: a slot may be waiting for it (start_slot).
	printf '%s\0' "$top/scripts/vm-run" --variant "$variant" "${boot[@]}" \
		--timeout "$timeout" --cpus "$cpus" --rwdir "$d" \
		env "${envs[@]}" MB_TIER="$tier" KSFT_RESULTS="$d/ksft-results" \
		"$top/scripts/vm-selftests.sh" "$kdir" "$@" >"$d/cmd.new" && mv "$d/cmd.new" "$d/cmd"
	jobs+=("$name")
}

# start_slot JOB...: run the guests JOB... one after the other, in the
# background (`wait` collects them). Each records its exit status, when it
# started (seconds into the run) and how long it took.
start_slot() {
	[ $# -gt 0 ] || return 0
	echo "== guests, one after the other: $*"
	(
		local j d t0 cmd
		for j in "$@"; do
			d=$vmdir/$j
			# A guest of a stage still building: until the stage made it,
			# or every stage is done without it (its build failed).
			until [ -e "$d/cmd" ] || [ -e "$vmdir/.staged" ]; do sleep 2; done
			[ -e "$d/cmd" ] || continue
			t0=$SECONDS
			mapfile -d '' -t cmd <"$d/cmd"
			"${cmd[@]}" >"$d/vm.log" 2>&1 </dev/null
			echo $? >"$d/rc"
			echo "$t0 $((SECONDS - t0))" >"$d/secs"
		done
	) &
}

# vm_results GUEST: one result per kselftest the guest (of kind GUEST) ran,
# from the KTAP in $log/ksft-results ($log the job's directory); and one
# more for each of a passing test's own checks that skipped.
vm_results() {
	local guest=$1 line name test why
	grep -E '^(not )?ok [0-9]+ selftests:' "$log/ksft-results" > "$log/vm-results" 2>/dev/null || true
	while IFS= read -r line; do
		# "net/macsec_bridge: TEST", the test's name in the inventory.
		name=${line#*selftests: }
		name=${name%% #*}
		test=${name##*: }
		reported "$guest" "$test"
		case "$line" in
		"not ok"*) result "kselftest $name${line##*"$name"}" 1 "$log/vm.log"
			failed_output "$name" >>"$top_log/failed-output" ;;
		*"# SKIP"*) skip_result "$guest" "$test" "kselftest $name" "$(skip_reason "$name")" \
				"$log/vm.log" ;;
		*) result "kselftest $name" 0 "$log/vm.log"
			while IFS= read -r why; do
				skip_result "$guest" "$test" "kselftest $name, a check" "$why" \
					"$log/vm.log" skip-check
			done < <(test_output "$name" |
				sed -nE 's/^# ok [0-9]+ *(.*[^ ])? *# SKIP *(.*)$/\1: \2/p' | sed 's/: $//') ;;
		esac
	done < "$log/vm-results"
}

# failed_output NAME: the end of what the failed kselftest NAME printed,
# for the summary (CI keeps only the end of the output).
failed_output() {
	echo "--- ${prefix:-}$1, its last lines:"
	test_output "$1" | tail -40
}

# vm_times JOB: each kselftest's seconds and name, slowest first, in
# $log/ksft-times, from the guest's stamps of its start and end
# (vm-selftests.sh), and as "GUEST SECONDS TEST" in $top_log/ksft-times
# (the format of scripts/ksft-times); the five slowest are printed.
vm_times() {
	awk '$2 == "#" && $3 == "selftests:" { start = $1; name = $NF; next }
	     start && / selftests: / { print $1 - start, name; start = 0 }' \
		"$log/ksft-results.times" 2>/dev/null | sort -rn >"$log/ksft-times"
	awk -v g="${1%%-[0-9]*}" '{ print g, $1, $2 }' "$log/ksft-times" >>"$top_log/ksft-times"
	[ ! -s "$log/ksft-times" ] ||
		echo "      slowest: $(head -5 "$log/ksft-times" |
			awk '{ printf "%s%s %d s", (NR > 1 ? ", " : ""), $2, $1 }')"
}

# kunit_results MODE: the KUnit tests that ran at the guest's boot. Each
# suite, by its own result line (every suite the kernel ran is held to
# the inventory); and within them the tests of the abstractions (the
# patch series): the doctests of kernel::net and kernel::rdma, and the
# cases of the rust_netlink suite, which the series extends. MODE count:
# each is a result; check: only a failure is (the same tests, counted in
# another guest).
kunit_results() {
	local rc suite name
	awk '
		/^    # Subtest: / { suite = $3; next }
		# A suite'"'"'s own line, at the top level.
		match($0, /^(not )?ok [0-9]+ [^ ]+/) {
			n = split(substr($0, RSTART, RLENGTH), f, " ")
			print (/^not ok/ ? 1 : / # SKIP/ ? 4 : 0), f[n], "suite", f[n]
			next
		}
		match($0, /^ +(not )?ok [0-9]+ [^ ]+/) {
			n = split(substr($0, RSTART, RLENGTH), f, " ")
			if (f[n] ~ /^rust_doctest_kernel_(net|rdma)/)
				name = substr(f[n], 21)
			else if (suite == "rust_netlink" && /^    /)
				name = suite " " f[n]
			else
				next
			print (/^ *not ok/ ? 1 : / # SKIP/ ? 4 : 0), suite, name
		}' "$log/ksft-results.kunit" 2>/dev/null > "$log/kunit-results"
	while read -r rc suite name; do
		# The suites, held to the inventory once (by the guest that
		# counts them).
		[ "$1" != count ] || [ "${name%% *}" != suite ] || reported kunit "$suite"
		[ "$1" = count ] || [ "$rc" -eq 1 ] || continue
		if [ "$rc" -eq 4 ]; then
			skip_result kunit "$suite" "kunit $name" "KUnit skipped it" \
				"$log/ksft-results.kunit"
		else
			result "kunit $name" "$rc" "$log/ksft-results.kunit"
		fi
	done < "$log/kunit-results"
	grep -qv ' suite ' "$log/kunit-results" 2>/dev/null ||
		result "kunit doctests of the rust/ changes (none found)" 1 "$log/vm.log"
}

# collect JOB: the results of the guest JOB.
collect() {
	local top_log=$log
	local log=$vmdir/$1
	local prefix rc tests
	prefix=$(cat "$log/prefix")
	rc=$(cat "$log/rc" 2>/dev/null || echo 125)
	tests=$(wc -l <"$log/tests")
	echo "== ${prefix}guest $1: $tests kselftests"
	vm_results "${1%%-[0-9]*}"
	vm_times "$1"
	case "$(cat "$log/kunit")" in
	count | check) kunit_results "$(cat "$log/kunit")" ;;
	esac
	# A guest that reported fewer results than it had tests, or failed,
	# is a failure.
	if [ "$(wc -l <"$log/vm-results")" -ne "$tests" ] || [ "$rc" -ne 0 ]; then
		result "VM run (vm-run exit $rc)" 1 "$log/vm.log"
		tail -30 "$log/vm.log"
	fi
}

# inventory_check: every suite and test the inventory lists for what this
# run covers reported, and nothing it does not list did. A --shard run
# expects its part of the test kernel's kselftests; the KASAN variant has
# no stock or Debian stage.
inventory_check() {
	local expected=$log/expected t
	{
		awk -F'\t' -v v="$variant" -v s="$MODULE_SERIES" -v sh="$shard" '
			!/^#/ && NF >= 2 && (sh == "" || $1 != s) && (v == "debug" || ($1 != "stock" &&
				$1 != "debian" && !($1 == "ktap" && $2 == "debian-install"))) {
				print $1 "\t" $2
			}' "$inventory"
		for t in "${shard_tests[@]}"; do printf '%s\t%s\n' "$MODULE_SERIES" "$t"; done
	} | sort -u >"$expected"
	sort -u "$reported" -o "$reported"
	while IFS=$'\t' read -r g t; do
		result "inventory: $g $t did not report" 1 "$inventory"
	done < <(comm -23 "$expected" "$reported")
	while IFS=$'\t' read -r g t; do
		result "inventory: $g $t reported, but scripts/inventory does not list it" 1 "$inventory"
	done < <(comm -13 "$expected" "$reported")
}

summary() {
	local i j at secs
	inventory_check
	echo
	echo "wall times (seconds from the start: at, and for how long):"
	for i in "${!stage_names[@]}"; do
		printf '  %-48s at %5d for %5d s\n' "${stage_names[$i]}" "${stage_at[$i]}" "${stage_secs[$i]}"
	done
	for j in "${jobs[@]}"; do
		read -r at secs 2>/dev/null <"$vmdir/$j/secs" || { at='?' secs='?'; }
		printf '  %-48s at %5s for %5s s\n' "guest $j" "$at" "$secs"
	done
	printf '  %-48s          %5d s\n' "whole run" "$SECONDS"
	if [ ${#failures[@]} -gt 0 ]; then
		[ ! -s "$log/failed-output" ] || cat "$log/failed-output"
		printf 'failed: %s\n' "${failures[@]}"
		echo "logs in $log"
	fi
	echo "$passed passed, $failed failed, $skipped skipped"
	[ "$failed" -eq 0 ]
	exit
}


# kernel_checks: what the guests do not wait for: the boot tests, the
# series held to no warning and to rustfmt, clippy and rustfmt on the
# module. On the test kernel build_kernel found.
kernel_checks() {
	local kdir=$test_kdir log=$log/$MODULE_SERIES prefix="$MODULE_SERIES: " t
	[ -n "$kdir" ] || return 0
	echo "== $MODULE_SERIES: checks"
	# Host tests that boot the test kernel (scripts/vm-run itself).
	for t in "$top"/scripts/tests/boot/*.sh; do
		run "boot: $(basename "$t" .sh)" "$t" "$kdir"
		reported boot "$(basename "$t" .sh)"
	done

	# The repo's changes to the tree's rust/ (the patch series), as
	# kernel.sh recorded them. The kernel build ran rustc,
	# clippy and rustdoc over them: none may warn about one of them. rustfmt
	# checks them where they live, in the tree: they declare modules that
	# only exist there.
	rust_changes() { sed 's|^\./|rust/|' "$kdir/.macsec_bridge_overlay"; }
	rust_warnings() {
		local paths
		paths=$(rust_changes | paste -sd'|')
		[ -n "$paths" ] || return 0
		! grep -E -A3 '^(warning|error)' "$kdir/.macsec_bridge_build.log" | grep -E -e "--> ($paths)"
	}
	run "rust/ changes: no rustc, clippy or rustdoc warnings" rust_warnings
	rustfmt_rust() {
		local files
		mapfile -t files < <(rust_changes | grep '\.rs$')
		[ ${#files[@]} -eq 0 ] ||
			(cd "$kdir" && "$RUSTFMT" --check --edition 2021 --config-path .rustfmt.toml "${files[@]}")
	}
	run "rust/ changes: rustfmt clean (kernel .rustfmt.toml)" rustfmt_rust

	# The series' C API: what an offload notifier is told holds no way
	# to the driver's context, which holds an SA's key.
	run "offload notifiers cannot reach an SA's key (struct macsec_offload_info)" \
		"$top/scripts/tests/offload_info/check.sh" "$kdir" "$log/offload_info"
	# What the kernel crate reads without the writer's lock is marked on
	# both sides, as 7.3's Rust atomics require.
	run "lockless fields the kernel crate reads are marked in C and Rust" \
		"$top/scripts/tests/lockless_marks/check.sh" "$kdir"
	# The chain's place: macsec.ko holds it and alone calls it.
	run "the offload chain lives in macsec.ko, which alone announces" \
		"$top/scripts/tests/offload_chain/check.sh" "$kdir"
	# The series' C documents itself as the kernel's does.
	run "kernel-doc -Wall: the series adds no warning" \
		"$top/scripts/tests/kernel_doc/check.sh" "$kdir"
	# The kernel crate's feature writes: safe code gets NETIF_F_HW_MACSEC
	# alone, and no right to write it that the types cannot prove.
	run "safe Rust cannot write other feature bits, nor from a made-up context" \
		"$top/scripts/tests/features_api/check.sh" "$kdir" "$log/features_api"

	clippy_module() {
		local d=$log/clippy out=$log/clippy-build.log
		modsrc "$d"
		kmake -C "$kdir" M="$d" CLIPPY=1 modules >"$out" 2>&1 || { cat "$out"; return 1; }
		cat "$out"
		! grep -E '(warning|error)(\[|:)' "$out"
	}
	run "clippy (CLIPPY=1) clean" clippy_module

	rustfmt_check() {
		local files
		mapfile -t files < <(find "$top/drivers" "$top/selftests" -name '*.rs' -not -path '*/target/*' | sort)
		"$RUSTFMT" --check --edition 2021 --config-path "$kdir/.rustfmt.toml" "${files[@]}"
	}
	run "rustfmt clean (kernel .rustfmt.toml)" rustfmt_check
}

# host_tests: scripts/tests/*.sh, which test the kernel tooling (the
# patch series, its cache keys, the YNL generator, the shards and the
# sizes), and `cargo test` of every crate in the repo (each #[test]
# counts).
host_tests() {
	local t manifest crate
	echo "== host tests"
	for t in "$top"/scripts/tests/*.sh; do
		[ -e "$t" ] || continue
		run "host: $(basename "$t" .sh)" "$t"
		reported host "$(basename "$t" .sh)"
	done

	while IFS= read -r manifest; do
		crate=$(dirname "${manifest#"$top"/}")
		cargo_test "$manifest" "$crate" "" "$crate"
		# The module's core, also as it is built for a kernel without the
		# offload notifier (tests/host/build.rs).
		[ "$crate" != drivers/net/macsec_bridge ] ||
			cargo_test "$manifest" "$crate (interposer)" interposer "$crate+interposer"
	done < <(find "$top" -name Cargo.toml -not -path '*/target/*' | sort)
}

# cargo_test MANIFEST LABEL PATH NAME: `cargo test` of a crate, each #[test]
# counted; PATH is MB_HOST_PATH for the module's host build, NAME the
# crate's in the inventory. An ignored test is a skip the inventory must
# allow.
cargo_test() {
	local manifest=$1 crate=$2 out rc p f i why
	out=$log/cargo-$(echo "$crate" | tr -c 'a-zA-Z0-9\n' _).log
	if (export MB_HOST_PATH=${3:-notifier}
	    cargo_locked host_cargo test --locked --manifest-path "$manifest" --color never) >"$out" 2>&1
	then rc=0; else rc=1; fi
	p=$(awk '/^test result:/ {for (i = 1; i <= NF; i++) if ($(i+1) ~ /^passed/) s += $i} END {print s + 0}' "$out")
	f=$(awk '/^test result:/ {for (i = 1; i <= NF; i++) if ($(i+1) ~ /^failed/) s += $i} END {print s + 0}' "$out")
	i=$(awk '/^test result:/ {for (i = 1; i <= NF; i++) if ($(i+1) ~ /^ignored/) s += $i} END {print s + 0}' "$out")
	reported cargo "$4"
	if [ "$i" -gt 0 ] && ! why=$(inv_skip cargo "$4"); then
		f=$((f + i)) i=0
		echo "FAIL  cargo test $crate: ignored tests, and the inventory allows it no skip"
	fi
	passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + i))
	if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then
		# It did not even build: one failure for the crate.
		result "cargo test $crate (build)" 1 "$out"
	else
		echo "$( [ "$f" -eq 0 ] && echo PASS || echo FAIL)  cargo test $crate: $p passed, $f failed, $i ignored"
		[ "$f" -eq 0 ] || failures+=("cargo test $crate (log: $out)")
	fi
}

# build_kernel: build the test kernel and everything the host checks on
# it, and make its guests; its logs go to a directory of its own, its
# results are named after its series.
build_kernel() {
	export KERNEL_SERIES=$MODULE_SERIES
	local log=$log/$MODULE_SERIES
	local prefix="$MODULE_SERIES: "
	local MODULE_KO= DKMS_KO= INTERPOSER_TEST_KO= TEST_NIC_KO= DRANET_SEC=
	mkdir -p "$log"
	echo "== $KERNEL_SERIES: build"
	kout=$log/kernel.log
	if ! kdir=$("$top/scripts/kernel.sh" --variant "$variant" 2>"$kout"); then
		result "kernel build ($variant)" 1 "$kout"
		return
	fi
	result "kernel build ($variant): $(sed -n 1p "$kdir/.macsec_bridge_built")s when built" 0 "$kout"
	test_kdir=$kdir

	# Kbuild here runs one job at a time: DRANet-Sec and the DKMS build go
	# to the background, beside the modules. DRANet-Sec, for its kselftest
	# against the real module: a copy, which the `cargo test` running
	# beside the guests cannot rewrite.
	build_dranet_sec() {
		host_cargo build --locked --manifest-path "$top/tools/dranet-sec/Cargo.toml" &&
		cp "$cargo_target/debug/dranet-sec" "$log/dranet-sec"
	}
	cargo_locked build_dranet_sec >"$log/dranet-sec.log" 2>&1 &
	local dranet_pid=$!

	# The real `dkms add/build/install`.
	local dkms_pid=
	dkms_build() {
		dkms_tree "$log/dkms" "$kdir" && dkms_install || return 1
		[ -n "$(find "$log/dkms/install" -name 'macsec_bridge.ko*')" ]
	}
	if command -v dkms >/dev/null; then
		dkms_build >"$log/dkms.log" 2>&1 &
		dkms_pid=$!
	fi

	# Test modules the kselftests load (abstraction tests driven from user
	# space, the model NIC; the module's interposer, which the module itself
	# uses only on a kernel without the offload notifier).
	run "selftest modules build (clippy, W=1)" build_test_modules "$log/test_modules" "$kdir"
	INTERPOSER_TEST_KO=$log/test_modules/$test_modules_rel/macsec_interposer_test.ko
	TEST_NIC_KO=$log/test_modules/$test_modules_rel/macsec_test_nic.ko

	# The kernel build prints warnings for missing docs, unsafe
	# without SAFETY, ...
	build_module() {
		local d=$log/module out=$log/module.log
		modsrc "$d"
		kmake -C "$kdir" M="$d" W=1 modules >"$out" 2>&1 || return 1
		! grep -E '(warning|error)(\[|:)' "$out"
	}
	run "module builds with no warnings" build_module
	MODULE_KO=$log/module/drivers/net/macsec_bridge/macsec_bridge.ko

	if [ -n "$dkms_pid" ]; then
		wait "$dkms_pid"
		result "dkms add/build/install" $? "$log/dkms.log"
		DKMS_KO=$(find "$log/dkms/install" -name 'macsec_bridge.ko*' 2>/dev/null | head -1)
	else
		result "dkms add/build/install (dkms not installed: scripts/setup.sh installs it)" 1 -
	fi

	wait "$dranet_pid"
	result "dranet-sec builds" $? "$log/dranet-sec.log"
	DRANET_SEC=$log/dranet-sec
	dranet_sec=$DRANET_SEC
	local vm_tests
	mapfile -t vm_tests < <(inv_tests "$KERNEL_SERIES")

	# --shard I/N: the I-th of N parts of the module's kselftests (every
	# N-th, from the I-th), each with the final dmesg scan; the host tests
	# and builds run in every part.
	if [ -n "$shard" ]; then
		local i=${shard%/*} n=${shard#*/} p=0 t all=("${vm_tests[@]}")
		vm_tests=()
		for t in "${all[@]}"; do
			[ "$t" = dmesg_clean.sh ] && continue
			[ $((p % n)) -eq $((i - 1)) ] && vm_tests+=("$t")
			p=$((p + 1))
		done
		vm_tests+=(dmesg_clean.sh)
		shard_tests=("${vm_tests[@]}")
		echo "== $KERNEL_SERIES: shard $shard: ${vm_tests[*]}"
	fi

	# TCG is slow, and KASAN slower still: a lockstep table of 27 rows, each
	# running the YNL CLI and ethtool, takes longer than the tests' `settings`
	# (900 s) on a KASAN kernel. The kselftest runner's override (what
	# run_kselftest.sh -o sets) raises the per-test limit for that variant only.
	# The torture run: the tier's length here, the full 10,000 operations
	# under KASAN, where 2,000 took 483 s (2026-11-25): its limit, and the
	# VM's, make room for about 2,500 s of it.
	local vm_timeout=4200 ksft_override= torture_ops=
	if [ "$variant" = kasan ]; then
		vm_timeout=12000
		ksft_override=3600
		torture_ops=10000
	fi
	local envs=(MACSEC_BRIDGE_KO="$MODULE_KO" MACSEC_BRIDGE_DKMS_KO="$DKMS_KO"
		MACSEC_INTERPOSER_TEST_KO="$INTERPOSER_TEST_KO" MACSEC_TEST_NIC_KO="$TEST_NIC_KO"
		DRANET_SEC="$DRANET_SEC" MB_TORTURE_OPS="$torture_ops"
		kselftest_override_timeout="$ksft_override")
	# Two slots: the kselftests in two shards, the first followed by the
	# stock kernel's first shard, the second starting as late as the host
	# tests and the stock and Debian stages' host halves, followed by the
	# stock kernel's second shard and the Debian guest (the debug variant:
	# the others have no stock stage).
	if [ "$vms" -eq 2 ]; then
		local shards=() base k b1=0 b2
		b2=$(times_sum host "(tests)")
		if [ "$variant" = debug ]; then
			mapfile -t stock_shards < <("$top/scripts/ksft-shards" "$top/scripts/ksft-times" \
				stock 2 0,0 "${stock_tests[@]}")
			if [ ${#stock_shards[@]} -eq 2 ]; then
				# shellcheck disable=SC2086 # a shard is a list of words
				b1=$((40 + $(times_sum stock ${stock_shards[0]})))
				# shellcheck disable=SC2086
				b2=$((b2 + $(estimate stock ${stock_shards[1]})))
			else
				# No shards: one stock guest, in the second slot.
				stock_shards=()
				b2=$((b2 + $(estimate stock "${stock_tests[@]}")))
			fi
			b2=$((b2 + $(estimate debian "${debian_tests[@]}")))
		fi
		base=$b1,$b2
		mapfile -t shards < <("$top/scripts/ksft-shards" "$top/scripts/ksft-times" \
			"$KERNEL_SERIES" 2 "$base" "${vm_tests[@]}")
		for k in 1 2; do
			# shellcheck disable=SC2086 # a shard is a list of words
			vm_job "$KERNEL_SERIES-$k" "$prefix" "$([ "$k" = 1 ] && echo count || echo check)" \
				"$vm_timeout" "$kdir" "${envs[@]}" -- ${shards[$((k - 1))]}
		done
	else
		vm_job "$KERNEL_SERIES" "$prefix" count "$vm_timeout" "$kdir" "${envs[@]}" -- \
			"${vm_tests[@]}"
	fi
}

# What runs on the stock kernel, with the module as DKMS builds it (the
# interposer): the inventory's "stock" tests.
mapfile -t stock_tests < <(inv_tests stock)

# times_sum GUEST TEST...: the seconds scripts/ksft-times gives TESTs.
times_sum() { "$top/scripts/ksft-shards" --sum "$top/scripts/ksft-times" "$@"; }

# estimate GUEST TEST...: the seconds of a stage's host half (its
# "(build)" line in the times) and of its guest of kind GUEST running
# TESTs, 40 s for its boot included.
estimate() {
	local guest=$1
	shift
	echo $((40 + $(times_sum "$guest" "(build)" "$@")))
}

# build_stock: the module as a distribution ships it. A pristine kernel of
# the module's series (no patch series, the config of the test kernel), its
# headers installed as an Arch-family headers package installs them, the
# real `dkms build` against those alone (the abstractions compiled into the
# module), the Debian package built and installed; then a guest of that
# kernel runs the lockstep tables with that module.
build_stock() {
	export KERNEL_SERIES=$MODULE_SERIES
	# The headers stay outside the directory the guest gets as --rwdir:
	# there it would read them over an uncached mount, with them under
	# the root, cached (scripts/vm-run), and DKMS builds in the guest.
	local hdr=$log/stock-headers
	local log=$log/stock
	local prefix="$KERNEL_SERIES stock: "
	local kdir ko=
	mkdir -p "$log"
	echo "== $KERNEL_SERIES stock (no patch series): build, DKMS"
	if ! kdir=$("$top/scripts/kernel.sh" --variant "$variant" --stock 2>"$log/kernel.log"); then
		result "kernel build ($variant, stock)" 1 "$log/kernel.log"
		return
	fi
	result "kernel build ($variant, stock): $(sed -n 1p "$kdir/.macsec_bridge_built")s when built" 0 "$log/kernel.log"
	run "headers installed as a distribution's package" "$top/scripts/headers.sh" "$kdir" "$hdr"

	dkms_stock() {
		dkms_tree "$log/dkms" "$hdr" && dkms_install || return 1
		# The abstractions were compiled in, and nothing warned.
		local mlog
		mlog=$(find "$dkms_log" -name make.log | head -1)
		grep -q 'BINDGEN.*compat/bindings_generated.rs' "$mlog" &&
		! grep -E '(warning|error)(\[|:)|WARNING:' "$mlog"
	}
	clippy_stock() {
		modsrc "$log/clippy"
		kmake -C "$hdr" M="$log/clippy" CLIPPY=1 MACSEC_BRIDGE_COMPAT=y modules 2>&1 || return 1
	}
	out=$log/clippy.log
	clippy_stock >"$out" 2>&1 && ! grep -E '(warning|error)(\[|:)' "$out"
	result "clippy (CLIPPY=1) clean, abstractions compiled in" $? "$out"

	# The model NIC, which binds net/macsec.h itself here (its Kbuild),
	# for the tests of what the interposer sees and in which order.
	local nic=$log/test_modules/$test_modules_rel/macsec_test_nic.ko
	out=$log/test_modules.log
	build_test_modules "$log/test_modules" "$hdr" MACSEC_BRIDGE_COMPAT=y >"$out" &&
		[ -e "$nic" ] && ! grep -E '(warning|error)(\[|:)' "$out"
	result "the model NIC builds (clippy, W=1), net/macsec.h bound" $? "$out"

	out=$log/dkms.log
	BINDGEN=$BINDGEN dkms_stock >"$out" 2>&1
	result "dkms add/build/install against the headers alone" $? "$out"
	ko=$(find "$log/dkms/install" -name 'macsec_bridge.ko*' 2>/dev/null | head -1)

	# What a kernel that cannot take the module gets: one line, no
	# compiler error. Headers of a kernel without CONFIG_RUST (the same
	# headers, that option taken out), and headers without the Rust
	# artifacts.
	refused() {
		local bad=$log/$1 why=$2 want=$3 out
		rm -rf "$bad"
		cp -al "$hdr" "$bad"
		case "$why" in
		norust) sed -i '/^CONFIG_RUST=/d' "$bad/.config" ;;
		nometa) rm -rf "$bad/rust" ;;
		esac
		dkms_tree "$log/$1-dkms" "$bad" || return 1
		out=$({ dkms add "${dkms_args[@]}" && dkms build "${dkms_args[@]}"; } 2>&1
		      cat "$(find "$dkms_log" -name make.log | head -1)" 2>/dev/null)
		echo "$out"
		rm -rf "$bad"
		[ -z "$(find "$log/$1-dkms/tree" -name 'macsec_bridge.ko*')" ] &&
		grep -qF -- "$want" <<<"$out"
	}
	run "dkms refuses a kernel without CONFIG_RUST (BUILD_EXCLUSIVE_CONFIG)" \
		refused norust norust "BUILD_EXCLUSIVE directive which does not match this kernel"
	run "headers without rust/*.rmeta: one line says so" \
		refused nometa nometa "lacks the kernel's Rust artifacts (rust/*.rmeta, rust/*.so)"

	# The Debian package, built as a distribution builds it.
	deb_build() {
		local d=$log/deb
		rm -rf "$d"
		mkdir -p "$d"
		modsrc "$d/src"
		cp -r "$top/dkms.conf" "$top/debian" "$d/src/"
		(cd "$d/src" && dpkg-buildpackage -b -us -uc) || return 1
		deb=$(ls "$d"/macsec-bridge-dkms_*_all.deb) && dpkg-deb -c "$deb" > "$d/contents" &&
		cat "$d/contents" && grep -q '/usr/src/macsec_bridge-.*/dkms.conf$' "$d/contents"
	}
	deb=
	run "debian package builds (dpkg-buildpackage, dh-dkms)" deb_build
	deb=$(ls "$log"/deb/macsec-bridge-dkms_*_all.deb 2>/dev/null)

	# The package installed as a distribution installs it for a kernel it
	# is about to boot (in a mount namespace: the host stays untouched);
	# the guest then loads what it built (dkms_deb.sh). DKMS building the
	# module inside the guest, under TCG, took 566 to 869 s (2026-11-26/27),
	# 27 s here.
	local kver debmods=$log/deb-modules
	kver=$(make -s -C "$kdir" kernelrelease)
	deb_install() {
		# The kernel's own modules, as its package installs them.
		rm -rf "$log/modules" &&
		kmake -s -C "$kdir" INSTALL_MOD_PATH="$log/modules" modules_install &&
		RUSTC="$RUSTC" BINDGEN="$BINDGEN" "$top/scripts/deb-install.sh" "$deb" "$kver" \
			"$log/modules/lib/modules/$kver" "$hdr" "$debmods" || return 1
		# and the host's own package system never saw it.
		! dpkg -s macsec-bridge-dkms >/dev/null 2>&1 && [ ! -e /var/lib/dkms/macsec_bridge ] &&
		[ ! -e "/lib/modules/$kver" ]
	}
	run "the package installs for $kver: dpkg -i, dkms autoinstall, dpkg -r" deb_install

	local envs=(MACSEC_BRIDGE_KO="$ko" MACSEC_BRIDGE_DKMS_KO="$ko" DRANET_SEC="$dranet_sec"
		MACSEC_BRIDGE_DEB_MODULES="$debmods" MACSEC_TEST_NIC_KO="$nic") k
	# In the two shards build_kernel balanced the slots with, or one guest.
	if [ ${#stock_shards[@]} -eq 2 ]; then
		for k in 1 2; do
			# shellcheck disable=SC2086 # a shard is a list of words
			vm_job "stock-$k" "$prefix" none 4200 "$kdir" "${envs[@]}" -- \
				${stock_shards[$((k - 1))]}
		done
	else
		vm_job stock "$prefix" none 4200 "$kdir" "${envs[@]}" -- "${stock_tests[@]}"
	fi
}

# What runs on Debian's own kernel, with the module DKMS built there: the
# inventory's "debian" tests.
mapfile -t debian_tests < <(inv_tests debian)


# ktap_results FILE LOG NAME: one result per test line of the KTAP in FILE
# (the inventory's "ktap NAME"), and a failure if its plan is missing or
# does not match them.
ktap_results() {
	local line total=0 plan
	reported ktap "$3"
	while IFS= read -r line; do
		case "$line" in
		"ok "*"# SKIP"*) skip_result ktap "$3" "${line#ok * }" skipped "$2"
			total=$((total + 1)) ;;
		"ok "*) result "${line#ok * }" 0 "$2"; total=$((total + 1)) ;;
		"not ok "*) result "${line#not ok * }" 1 "$2"; total=$((total + 1)) ;;
		esac
	done <"$1"
	plan=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$1")
	[ "$plan" = "$total" ] || result "$(basename "$1"): plan '$plan', $total results" 1 "$2"
}

# build_debian: the package (the stock stage built it) on Debian 13 with
# Debian's own kernel: installed with apt in a cached trixie root (the
# Rust artifacts made from linux-source-7.3, the refusals), then a guest
# of Debian's vmlinuz and modules tree runs the tests above with the
# module DKMS built there (scripts/debian-install.sh).
build_debian() {
	local log=$log/debian prefix="Debian $DEBIAN_KERNEL_ABI: " tools out img ko
	mkdir -p "$log"
	echo "== Debian 13: the package on Debian's own $DEBIAN_KERNEL_ABI"
	if [ -z "$deb" ]; then
		result "the package to install (the stock stage builds it)" 1 "$log"
		return
	fi
	out=$log/install
	"$top/scripts/debian-install.sh" "$deb" "$out" >"$log/install.ktap" 2>"$log/install.err"
	ktap_results "$log/install.ktap" "$log/install.err" debian-install
	img=$out/kernel/boot/vmlinuz-$DEBIAN_KERNEL_ABI
	ko=$(find "$out/kernel/lib/modules/$DEBIAN_KERNEL_ABI/updates/dkms" -name 'macsec_bridge.ko*' \
		2>/dev/null | head -1)
	if [ ! -f "$img" ] || [ -z "$ko" ]; then
		result "the Debian guest (no kernel or module to boot it with)" 1 "$log/install.ktap"
		return
	fi
	# The kselftest runner and the YNL CLI come from the stock tree.
	if ! tools=$("$top/scripts/kernel.sh" --variant "$variant" --stock --print); then
		result "the Debian guest (no stock tree for its kselftest runner)" 1 "$log"
		return
	fi
	vm_kimg=$img vm_job debian "$prefix" none 2400 "$tools" \
		MACSEC_BRIDGE_KO="$ko" MACSEC_BRIDGE_DKMS_KO="$ko" MACSEC_TEST_NIC_KO="$out/macsec_test_nic.ko" \
		MACSEC_BRIDGE_DEB_MODULES="$out/kernel/lib/modules/$DEBIAN_KERNEL_ABI" -- "${debian_tests[@]}"
}

# Sourced with CHECK_SH_LIB=1 (scripts/tests/check_results.sh): the
# functions above, and no run.
if [ -n "${CHECK_SH_LIB:-}" ]; then
	# shellcheck disable=SC2317 # reached only when run, not sourced
	return 0 2>/dev/null || exit 2
fi

# The guests wait for the builds they need, no longer: with two slots the
# first shard starts as soon as the modules are built, beside the checks
# that no guest needs (kernel_checks, the host tests) and the stock
# stage's host half, and the rest follow them in the second
# slot (the shards were balanced for that: build_kernel). With one slot,
# every guest waits for every build.
queued=()
# A --shard run's part of the test kernel's kselftests (build_kernel).
shard_tests=()
test_kdir=
# The package the stock stage builds, which the Debian stage installs.
deb=
# DRANet-Sec as the test kernel's stage built it, for the stock guest too.
dranet_sec=
# The stock kernel's kselftests in two shards, one for each slot (two
# slots: build_kernel).
stock_shards=()
# However the run ends, a slot waiting for a guest a stage never made goes
# on (start_slot).
trap 'mkdir -p "$vmdir" && touch "$vmdir/.staged"' EXIT
stage_begin
build_kernel
stage_end "$MODULE_SERIES: kernel, modules, DKMS, dranet-sec"
if [ "$vms" -eq 2 ] && [ -e "$vmdir/$MODULE_SERIES-1" ]; then
	if [ ${#stock_shards[@]} -eq 2 ]; then
		start_slot "$MODULE_SERIES-1" stock-1
	else
		start_slot "$MODULE_SERIES-1"
	fi
	queued+=("$MODULE_SERIES-2")
else
	queued+=("${jobs[@]}")
fi
stage_begin
kernel_checks
stage_end "$MODULE_SERIES: boot tests, warnings, clippy, rustfmt"
stage_begin
host_tests
stage_end "host tests and cargo test"
echo "host $((stage_secs[-1] + stage_secs[-2])) (tests)" >>"$log/ksft-times"
# The stock kernel is built for the debug variant only: a KASAN build of
# it would double `make check-debug`'s kernel time.
if [ "$variant" = debug ]; then
	stage_begin
	build_stock
	stage_end "$MODULE_SERIES stock: kernel, DKMS, package"
	echo "stock ${stage_secs[-1]} (build)" >>"$log/ksft-times"
	[ ! -e "$vmdir/stock" ] || queued+=(stock)
	[ ! -e "$vmdir/stock-2" ] || queued+=(stock-2)
	stage_begin
	build_debian
	stage_end "Debian 13: the package, Debian's kernel"
	echo "debian ${stage_secs[-1]} (build)" >>"$log/ksft-times"
	[ ! -e "$vmdir/debian" ] || queued+=(debian)
fi
# Every guest there will be is made: a slot waiting for one that was not
# goes on.
mkdir -p "$vmdir" && touch "$vmdir/.staged"
start_slot "${queued[@]}"
wait
for j in "${jobs[@]}"; do
	collect "$j"
done

summary
