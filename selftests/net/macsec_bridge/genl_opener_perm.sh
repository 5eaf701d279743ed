#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The host's authority (CAP_NET_ADMIN in the initial user namespace) is
# asked of the socket's opener too, as the generic netlink core asks it
# (netlink_ns_capable()). A pod's root, in a user namespace of its own,
# opens a generic netlink socket and hands it to the host's root; the port
# h0 lives in the pod. Through that socket the host's root may not bind h0
# to the DPU's macsec0, nor unbind it: the pod's root has no authority
# over the host. Through a socket of its own in the same namespace, it
# may. Each refusal carries EPERM and an extack and changes nothing.
set -u
. "$(dirname "$0")/lib.sh"

dpu_bed veth

ktap_print_header
ktap_set_plan 9

OUT=$ROW_DIR/opener
MSG="CAP_NET_ADMIN in the initial user namespace is needed: a binding is the host's claim"
EPERM=1
# said STEP WORDS...: the step's line reads STEP WORDS.
said() {
	local step=$1
	shift
	grep -qxF -- "$step $*" "$OUT" || { grep "^$step " "$OUT" | sed 's/^/# got: /'; false; }
}

check "load" insmod_bridge "$MODULE_KO"
/usr/bin/python3 "$lib_dir/mb_genl.py" opener "/run/netns/$DPU" "$(ifindex macsec0 "$DPU")" h0 \
	>"$OUT" 2>"$ROW_DIR/opener.err"
steps_ran() { [ "$(wc -l <"$OUT")" -eq 8 ] || { sed 's/^/# /' "$ROW_DIR/opener.err"; false; }; }
check "the steps ran" steps_ran
check "pod's socket: bind refused, EPERM and extack" said bind-pod-socket "$EPERM $MSG"
check "h0 not tracked after the refusal" said after-pod-bind untracked
check "own socket in the pod: bind" said bind-own-socket 0
check "h0 bound" said after-own-bind bound
check "pod's socket: unbind refused, EPERM and extack" said unbind-pod-socket "$EPERM $MSG"
check "h0 still bound" said after-pod-unbind bound
check "own socket: unbind" said unbind-own-socket 0
rmmod macsec_bridge

ktap_finished
