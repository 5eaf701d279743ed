#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Who may unbind: whoever may bind, the host's administrator
# (CAP_NET_ADMIN in the initial user namespace). The host binds h0 to the
# DPU's macsec0 and moves h0 into a pod whose network namespace belongs to
# a user namespace of its own (a container root, as an unprivileged runtime
# makes it). The pod's root administers the pod, not the host: its unbind
# is refused with EPERM and an extack, and the port stays bound. The
# host's root, in the same namespace, may unbind.
set -u
. "$(dirname "$0")/lib.sh"

dpu_bed veth
require_cmd unshare nsenter
POD_PID=
# unshare ignores SIGTERM while it waits for its child (which holds the
# runner's fds): SIGKILL, and --kill-child takes the child with it.
perm_cleanup() {
	[ -z "$POD_PID" ] || kill -KILL "$POD_PID" 2>/dev/null
	dpu_cleanup
}
on_exit perm_cleanup

# as_pod_root CMD...: CMD as the pod's root (its user and network
# namespaces); as_host_root CMD...: as root of the host, in the pod's
# network namespace.
as_pod_root() { nsenter -t "$POD_PID" -U -n --preserve-credentials -- "$@"; }
as_host_root() { nsenter -t "$POD_PID" -n -- "$@"; }
# cli WHO ARGS...: the YNL CLI as WHO (as_pod_root or as_host_root).
cli() {
	local who=$1
	shift
	"$who" /usr/bin/python3 "$YNL_CLI" --no-schema --spec "$YNL_SPEC" --output-json "$@"
}
# (sysfs shows the namespace it was mounted in: ask rtnetlink.)
pod_ifindex() { as_host_root ip -o link show h0 | cut -d: -f1; }
unbind_as() {
	cli "$1" --do unbind --json "{\"ifindex\": $(pod_ifindex)}"
}
relation_in_pod() {
	cli as_host_root --dump dev-get >"$ROW_DIR/pod.dump" 2>&1 &&
		[ "$(port_field "$ROW_DIR/pod.dump" h0 relation)" = "$1" ]
}
in_pod_userns() { [ "$(readlink "/proc/$POD_PID/ns/user")" != "$(readlink /proc/self/ns/user)" ]; }
EPERM="error: -1\b|: Operation not permitted"

ktap_print_header
ktap_set_plan 9

check "load" insmod_bridge "$MODULE_KO"
check "host: h0 bound to the DPU's macsec0" quiet dpu_bind h0
unshare --user --map-root-user --net --fork --kill-child sleep 600 </dev/null >/dev/null 2>&1 &
POD_PID=$!
check "a pod with a user namespace of its own" wait_for 50 in_pod_userns
check "h0 moved into the pod" ip link set h0 netns "$POD_PID"
check "h0 is bound in the pod" relation_in_pod bound
unbind_as as_pod_root >"$ROW_DIR/err" 2>&1
rc=$?
sed 's/^/# /' "$ROW_DIR/err"
check "pod root: unbind refused" [ $rc -ne 0 ]
check "with EPERM, and an extack asking for the host's authority" \
	bash -c "grep -Eq '$EPERM' '$ROW_DIR/err' &&
		grep -q 'CAP_NET_ADMIN in the initial user namespace' '$ROW_DIR/err'"
check "h0 is still bound" relation_in_pod bound
check "host root, in the pod's namespace: unbind" quiet unbind_as as_host_root
rmmod macsec_bridge

ktap_finished
