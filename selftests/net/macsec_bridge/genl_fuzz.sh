#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The family's requests fuzzed (genl_fuzz.py): a fixed list of malformed
# requests, each with the errno and extack it must get, then random ones
# from a seed (MB_FUZZ_SEED, printed; the count MB_FUZZ_COUNT, from
# `sizes`), then dumps abandoned half-way; asked by root, by an
# unprivileged user, by a user namespace's root over the initial
# namespace and by one in a network namespace of its own. Nothing may
# change: the dump stays the same, field for field, and root's monitor
# hears nothing. Its kernel log scan (splat_scan) catches any splat.
set -u
. "$(dirname "$0")/lib.sh"

bed_require
require_cmd setpriv unshare
SEED=${MB_FUZZ_SEED:-1}
COUNT=$MB_FUZZ_COUNT

cleanup() {
	rm -rf "${FUZZ_DIR:-}" "$ROW_DIR"
	ip link del fz0 2>/dev/null
	rmmod macsec_bridge 2>/dev/null
}
on_exit cleanup

ktap_print_header
ktap_set_plan 25
ktap_print_msg "seed $SEED, $COUNT random requests per asker (MB_FUZZ_SEED, MB_FUZZ_COUNT)"

check "load" insmod_bridge "$MODULE_KO"
# A software SecY on one end of a veth pair; the other end bound to it,
# the only port.
bed() {
	ip link add fz0 type veth peer name fz1 &&
		ip link set fz0 up && ip link set fz1 up &&
		ip link add link fz0 fzm0 type macsec encrypt on &&
		ip link set fzm0 up &&
		/usr/bin/python3 "$lib_dir/mb_genl.py" bind "$(ifindex fzm0)" "$(ifindex fz1)"
}
check "a port bound to a software SecY" bed
PORT=$(ifindex fz1)
SECY=$(ifindex fzm0)

# The fuzzer, where an unprivileged user can read it (the kselftest
# directory is root's alone).
FUZZ_DIR=$(mktemp -d /tmp/macsec_bridge-fuzz.XXXXXX)
chmod 755 "$FUZZ_DIR"
cp "$lib_dir/genl_fuzz.py" "$lib_dir/mb_genl.py" "$FUZZ_DIR/"

# fuzz ASKER [WRAPPER...]: runs the fuzzer as ASKER, one KTAP line per
# check it makes, and one that it ran to its end.
fuzz() {
	local asker=$1 verdict desc
	shift
	"$@" /usr/bin/python3 "$FUZZ_DIR/genl_fuzz.py" "$asker" "$SEED" "$COUNT" "$PORT" "$SECY" \
		>"$ROW_DIR/fuzz.$asker" 2>&1
	echo "exit $?" >>"$ROW_DIR/fuzz.$asker"
	while IFS=$'\t' read -r verdict desc; do
		case $verdict in
		PASS) ktap_test_pass "$desc" ;;
		FAIL) ktap_test_fail "$desc" ;;
		*) echo "# $verdict${desc:+ $desc}" ;;
		esac
	done <"$ROW_DIR/fuzz.$asker"
	check "$asker: the fuzzer ran to its end" \
		grep -qx "# $asker: .* abandoned dumps" "$ROW_DIR/fuzz.$asker"
}

fuzz root
fuzz unpriv setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all
fuzz userns unshare --user --map-root-user
fuzz own-netns unshare --user --map-root-user --net
still_bound() { [ "$(port_field <(ynl --dump dev-get) fz1 relation)" = bound ]; }
check "the port is still bound" still_bound
check "unload" rmmod macsec_bridge

ktap_finished
