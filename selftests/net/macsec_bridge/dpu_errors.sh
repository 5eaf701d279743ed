#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `bind` and `unbind` refuse bad input with an extack message and change
# nothing; callers without CAP_NET_ADMIN in the initial user namespace get
# EPERM (a pod's root among them, even over devices and SecYs of its own),
# a port under the SecY gets EINVAL, and every caller sees only its own
# namespace's ports.
set -u
. "$(dirname "$0")/lib.sh"

dpu_bed veth
require_cmd setpriv unshare

ktap_print_header
ktap_set_plan 35

H=$(ifindex h0)
S=$(ifindex macsec0 "$DPU")
OUT=$ROW_DIR/out

# refused DESC ERRNO-NAME MESSAGE-PART JSON [CMD-PREFIX...]: `bind` (OP)
# with JSON (fd 9 is the DPU's namespace) fails with ERRNO-NAME and an
# extack message containing MESSAGE-PART. In namespace NS (default: this
# one), or as the CLI run by CMD-PREFIX (another process's credentials).
refused() {
	local desc=$1 err=$2 msg=$3 json=$4
	shift 4
	if [ $# -eq 0 ] || [ "$*" = env ]; then
		ynl_in "${NS:-}" --do "${OP:-bind}" --json "$json" >"$OUT" 2>&1 9<"/run/netns/$DPU"
	else
		"$@" /usr/bin/python3 "$YNL_CLI" --no-schema --spec "$YNL_SPEC" --do "${OP:-bind}" \
			--json "$json" >"$OUT" 2>&1 9<"/run/netns/$DPU"
	fi
	refusal "$desc" $? "$OUT" "$err" "$msg"
}
# The CLI prints the errno's strerror() text, after the extack message if
# there is one: "Netlink error: no such port: No such device".
EINVAL=": Invalid argument" EPERM=": Operation not permitted" \
	ENODEV=": No such device" EBADF=": Bad file descriptor" \
	EEXIST=": File exists" ENOENT=": No such file or directory" \
	ERANGE=": Numerical result out of range"

check "load" insmod_bridge "$MODULE_KO"
ynl --dump dev-get >"$ROW_DIR/before"
check "h0 carries no RDMA device: not a port yet" \
	[ "$(port_field "$ROW_DIR/before" h0 protection)" = absent ]

refused "missing ifindex" "$EINVAL" "'miss-type': 'ifindex'" \
	"{\"secy-ifindex\": $S, \"secy-netns-fd\": 9}"
refused "missing secy-ifindex" "$EINVAL" "'miss-type': 'secy-ifindex'" \
	"{\"ifindex\": $H, \"secy-netns-fd\": 9}"
refused "unknown ifindex" "$ENODEV" "no such port" \
	"{\"ifindex\": 999999, \"secy-ifindex\": $S, \"secy-netns-fd\": 9}"
refused "unknown secy-ifindex" "$ENODEV" "no such device in the SecY's namespace" \
	"{\"ifindex\": $H, \"secy-ifindex\": 999999, \"secy-netns-fd\": 9}"
refused "ifindex 0 is out of range" "$ERANGE|$EINVAL" "out of range" \
	"{\"ifindex\": 0, \"secy-ifindex\": $S, \"secy-netns-fd\": 9}"
refused "a netns fd above INT_MAX is out of range" "$ERANGE|$EINVAL" "out of range" \
	"{\"ifindex\": $H, \"secy-ifindex\": $S, \"secy-netns-fd\": 4294967295}"
refused "a closed fd" "$EBADF" "not an open network namespace" \
	"{\"ifindex\": $H, \"secy-ifindex\": $S, \"secy-netns-fd\": 77}"
refused "an fd that is no namespace" "$EINVAL" "not an open network namespace" \
	"{\"ifindex\": $H, \"secy-ifindex\": $S, \"secy-netns-fd\": 8}" \
	env 8</dev/null
refused "an unknown netns id" "$EINVAL" "no network namespace with this id" \
	"{\"ifindex\": $H, \"secy-ifindex\": $S, \"secy-netnsid\": 4242}"
refused "fd and id together" "$EINVAL" "not both" \
	"{\"ifindex\": $H, \"secy-ifindex\": $S, \"secy-netns-fd\": 9, \"secy-netnsid\": 0}"
refused "a target that is no MACsec netdev (d0)" "$EINVAL" "not a MACsec netdev" \
	"{\"ifindex\": $H, \"secy-ifindex\": $(ifindex d0 "$DPU"), \"secy-netns-fd\": 9}"
NS=$DPU refused "a MACsec netdev bound to itself" "$EINVAL" "to itself" \
	"{\"ifindex\": $S, \"secy-ifindex\": $S}"
ip link add link h0 hm0 type macsec port 9
refused "a MACsec netdev as the port" "$EINVAL" "its own SecY" \
	"{\"ifindex\": $(ifindex hm0), \"secy-ifindex\": $S, \"secy-netns-fd\": 9}"
ip link del hm0
OP=unbind refused "unbind of a port that is not bound" "$ENOENT" "not bound" "{\"ifindex\": $H}"

quiet() { "$@" >/dev/null 2>&1; }

# Privilege: dropped CAP_NET_ADMIN fails in the genl core; a user namespace
# that owns its own network namespace passes it there, and then needs the
# host's authority, CAP_NET_ADMIN in the initial user namespace.
refused "without CAP_NET_ADMIN: EPERM" "$EPERM" "" \
	"{\"ifindex\": $H, \"secy-ifindex\": $S, \"secy-netns-fd\": 9}" \
	setpriv --inh-caps=-all --bounding-set=-net_admin
refused "in a user namespace, over init_net: EPERM" "$EPERM" "" \
	"{\"ifindex\": $H, \"secy-ifindex\": $S, \"secy-netns-fd\": 9}" \
	unshare --user --map-root-user
# Inside its own user and network namespace, a veth of its own to bind.
userns_bind() {
	ip link add u0 type veth peer name u1 &&
		/usr/bin/python3 "$YNL_CLI" --no-schema --spec "$YNL_SPEC" --output-json \
			--dump dev-get >"$ROW_DIR/userns.dump" &&
		/usr/bin/python3 "$YNL_CLI" --no-schema --spec "$YNL_SPEC" --do bind \
			--json "{\"ifindex\": $(cat /sys/class/net/u0/ifindex),
				 \"secy-ifindex\": $S, \"secy-netns-fd\": 9}"
}
export -f userns_bind
export YNL_CLI YNL_SPEC ROW_DIR S
unshare --user --map-root-user --net --mount bash -c \
	'mount -t sysfs none /sys && userns_bind' >"$ROW_DIR/userns" 2>&1 9<"/run/netns/$DPU"
rc=$?
check "user namespace owning its netns: EPERM, the host's authority needed" \
	bash -c "[ $rc -ne 0 ] && grep -qE -- '$EPERM' '$ROW_DIR/userns' &&
		 grep -q 'CAP_NET_ADMIN in the initial user namespace' '$ROW_DIR/userns'"
check "... and its dump shows none of the host's ports" [ "$(cat "$ROW_DIR/userns.dump")" = "[]" ]

# A pod whose root owns its user and network namespaces, with a netdevsim
# port (a VF, as DRANet hands them to pods) and a veth of its own: it
# offloads a SecY to the VF and binds the veth to it. Allowed, the veth
# would report offload-mac on the pod's word alone, a claim the scheduler
# trusts. Then the host's root binds the VF itself to the SecY over it: the
# VF's own traffic does not cross that SecY (it is `upper`), so EINVAL.
unshare --user --map-root-user --net --fork --kill-child sleep 600 </dev/null >/dev/null 2>&1 &
POD_PID=$!
pod_cleanup() {
	kill -KILL "$POD_PID" 2>/dev/null
	ip netns del mb_errpod 2>/dev/null
	dpu_cleanup
}
on_exit pod_cleanup
as_pod_root() { nsenter -t "$POD_PID" -U -n --preserve-credentials -- "$@"; }
in_pod_userns() { [ "$(readlink "/proc/$POD_PID/ns/user")" != "$(readlink /proc/self/ns/user)" ]; }
pod_bed() {
	wait_for 50 in_pod_userns && ip netns attach mb_errpod "$POD_PID" &&
		nsim_new 1 mb_errpod &&
		ip -n mb_errpod link set "$(nsim_port "$NSIM_ID" 0 mb_errpod)" name vf0 &&
		as_pod_root ip link set vf0 up &&
		as_pod_root ip link add link vf0 pm0 type macsec port 5 encrypt on offload mac &&
		as_pod_root ip link set pm0 up &&
		as_pod_root ip link add pv0 type veth peer name pv1
}
check "a pod's root offloads a SecY to its VF and makes a veth" pod_bed
PV=$(ifindex pv0 mb_errpod) VF=$(ifindex vf0 mb_errpod) PM=$(ifindex pm0 mb_errpod)
refused "the pod's root binds its veth to its SecY: EPERM" "$EPERM" \
	"CAP_NET_ADMIN in the initial user namespace" \
	"{\"ifindex\": $PV, \"secy-ifindex\": $PM}" as_pod_root
check "... nothing bound: pv0 is no port" \
	[ "$(port_field <(ynl_in mb_errpod --dump dev-get) pv0 protection)" = absent ]
NS=mb_errpod refused "the host binds the VF to the SecY over it: EINVAL" "$EINVAL" \
	"the SecY runs over the port" "{\"ifindex\": $VF, \"secy-ifindex\": $PM}"
check "... nothing bound: vf0 is no port" \
	[ "$(port_field <(ynl_in mb_errpod --dump dev-get) vf0 protection)" = absent ]
check "the host binds the pod's veth to the pod's SecY: its claim to make" \
	quiet ynl_in mb_errpod --do bind --json "{\"ifindex\": $PV, \"secy-ifindex\": $PM}"
check "... and unbinds it" quiet ynl_in mb_errpod --do unbind --json "{\"ifindex\": $PV}"
check "after all that, nothing changed" [ "$(ynl --dump dev-get)" = "$(cat "$ROW_DIR/before")" ]

check "bind h0 (no RDMA device on it yet)" quiet dpu_bind h0
ynl --dump dev-get >"$ROW_DIR/bound"
check "... relation bound, no RDMA device" \
	[ "$(port_field "$ROW_DIR/bound" h0 relation)/$(port_field "$ROW_DIR/bound" h0 rdma-dev)" \
	  = bound/ ]
refused "binding twice: EEXIST" "$EEXIST" "already bound" \
	"{\"ifindex\": $H, \"secy-ifindex\": $S, \"secy-netns-fd\": 9}"
check "... and the object did not change" \
	[ "$(port_field <(ynl --dump dev-get) h0 generation)" = \
	  "$(port_field "$ROW_DIR/bound" h0 generation)" ]
OP=unbind refused "unbind without CAP_NET_ADMIN: EPERM" "$EPERM" "" "{\"ifindex\": $H}" \
	setpriv --inh-caps=-all --bounding-set=-net_admin
quiet dpu_unbind h0
check "unbind: h0, with no RDMA device, is no port any more" \
	[ "$(port_field <(ynl --dump dev-get) h0 protection)" = absent ]
check "unload" rmmod macsec_bridge

ktap_finished
