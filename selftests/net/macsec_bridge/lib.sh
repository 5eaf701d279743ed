# SPDX-License-Identifier: GPL-2.0
#
# Shared helpers for the macsec_bridge kselftests.  Sourced, not run.
#
# The tests run from a kselftest install (or a layout like it), so the
# kernel's KTAP helpers are two levels up.

# The logical path (not readlink -f): the runner reaches us through a symlink.
lib_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ksft_dir=${KSFT_DIR:-$lib_dir/../../kselftest}
# shellcheck source=/dev/null
. "$ksft_dir/ktap_helpers.sh"

# nap SECONDS: sleep in this shell. Under TCG every process costs about
# 0.2 s to start, more than a polling loop's `sleep 0.1` itself: `read -t`
# on a pipe that has a writer (this shell) and never gets a line times out
# without one.
exec {NAP_FD}<> <(:)
nap() {
	read -r -t "$1" -u "$NAP_FD" _
	return 0
}

# Where the module under test is: the runner exports it, or else the
# installed module's file.
MODULE_KO=${MACSEC_BRIDGE_KO:-$(modinfo -n macsec_bridge 2>/dev/null)}

# The tier's sizes (the file `sizes` beside this one): each variable that
# the environment leaves unset or empty takes its size for MB_TIER
# ("check" or "full", the default). Builtins only: under TCG every
# process costs about 0.2 s.
sizes_load() {
	local tier=${MB_TIER:-full} col var check full _
	case "$tier" in
	check) col=check ;;
	full) col=full ;;
	*) bed_broken "MB_TIER is '$tier', not check or full" ;;
	esac
	while read -r var check full _; do
		case "$var" in '' | '#'*) continue ;; esac
		[ -n "${!var:-}" ] && continue
		if [ "$col" = check ]; then
			printf -v "$var" %s "$check"
		else
			printf -v "$var" %s "$full"
		fi
	done <"$lib_dir/sizes"
}

# on_exit FUNC: run FUNC when the test exits, however it exits. When a test
# times out, the runner's two nested `timeout`s expire together and the
# test's process group is sent SIGTERM twice: the second would kill the
# cleanup half-way and leave netdevs and namespaces to the next test, so
# the cleanup (and what it runs) ignores it.
# After FUNC, splat_scan judges the kernel log of the test's own run.
on_exit() {
	# shellcheck disable=SC2064 # FUNC is expanded now, on purpose.
	trap "trap '' INT TERM; $1; splat_scan" EXIT
}

# bed_broken WHAT: a prerequisite that the test bed provides (a tool, a
# module built by the harness, root) is missing. That is a broken bed, not
# a kernel without the feature: fail, saying which. A SKIP is kept for what
# the kernel under test lacks.
bed_broken() {
	ktap_print_header
	ktap_set_plan 1
	ktap_test_fail "prerequisite: $1"
	exit "$KSFT_FAIL"
}

# setup_ns failed: a skip if the kernel has no network namespaces
# (CONFIG_NET_NS), a broken bed otherwise.
ns_broken() {
	if [ ! -e /proc/self/ns/net ]; then
		ktap_skip_all "the kernel has no network namespaces"
		exit "$KSFT_SKIP"
	fi
	bed_broken "network namespaces $*"
}

# Commands each test needs.
require_cmd() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || bed_broken "$c not installed"
	done
}

# require_ko PATH WHAT: the module (or binary) file PATH is readable.
require_ko() {
	if [ -z "$1" ] || [ ! -r "$1" ]; then
		bed_broken "$2 not found ('$1')"
	fi
}

# kernel_lacks MODULE WHAT: the kernel has no MODULE, built in or as a
# module: skip, saying it lacks WHAT. A MODULE the kernel has but that
# does not load (refused, failing its init) is a broken bed: fail.
kernel_lacks() {
	if ! modinfo "$1" >/dev/null 2>&1; then
		ktap_skip_all "the kernel has no $2"
		exit "$KSFT_SKIP"
	fi
	bed_broken "$1 is in this kernel but does not load ($(modprobe "$1" 2>&1 | head -1))"
}

# require_rxe: the RDMA core and RXE, built in or as modules; a skip only
# where the kernel has no RXE.
require_rxe() {
	[ -d /sys/class/infiniband ] || modprobe rdma_rxe 2>/dev/null
	[ -d /sys/class/infiniband ] || kernel_lacks rdma_rxe "RXE (CONFIG_RDMA_RXE)"
}

# require_rxe, and RXE devices made in a pod's namespace have their RoCE
# sockets there (rxe_ns.c, 7.x): skip otherwise, saying so.
require_pod_rxe() {
	require_rxe
	if ! grep -q ' rxe_ns_pernet_sk4' /proc/kallsyms; then
		ktap_skip_all "this kernel's RXE has no per-namespace sockets (no rxe_ns.c)"
		exit "$KSFT_SKIP"
	fi
}

# insmod_bridge KO: load the module after the RDMA core and MACsec, which
# it links against, when they are modules (INFINIBAND=m and MACSEC=m, as
# distributions build them); modprobe does nothing for built-in ones.
insmod_bridge() {
	modprobe -a ib_core macsec || return
	insmod "$1"
}

# offload_path: how the module must see offloaded MACsec operations on
# this kernel, by the kernel's own symbols, not the module's word:
# "notifier" where the MACsec core announces them (the patch series'
# register_macsec_offload_notifier, exported by macsec.ko, so loaded
# first: whatever ran before, the answer is the kernel's), "interposer"
# otherwise (the module interposes each device's macsec_ops).
offload_path() {
	modprobe -q macsec 2>/dev/null
	if awk '$3 == "register_macsec_offload_notifier" { f = 1 } END { exit !f }' \
		/proc/kallsyms; then
		echo notifier
	else
		echo interposer
	fi
}

require_root() {
	[ "$(id -u)" -eq 0 ] || bed_broken "must run as root"
}

# refusal DESCRIPTION RC FILE ERRNO-TEXT MESSAGE-PART: one KTAP result, a
# pass if a command that exited with RC and wrote FILE failed with
# ERRNO-TEXT (an extended regular expression) and a message containing
# MESSAGE-PART (the extack message, for the YNL CLI).
refusal() {
	if [ "$2" -ne 0 ] && grep -qE -- "$4" "$3" && grep -qi -- "$5" "$3"; then
		ktap_test_pass "$1"
	else
		echo "# rc $2: $(tail -1 "$3")"
		ktap_test_fail "$1"
	fi
}

# check DESCRIPTION CMD...: one KTAP result from a command's status.
check() {
	local desc=$1
	shift
	if "$@"; then
		ktap_test_pass "$desc"
	else
		ktap_test_fail "$desc"
	fi
}

# quiet CMD...: CMD with its output dropped.
quiet() { "$@" >/dev/null; }

# check_fail DESCRIPTION CMD...: the command must fail.
check_fail() {
	local desc=$1
	shift
	if "$@" 2>/dev/null; then
		ktap_test_fail "$desc (unexpectedly succeeded)"
	else
		ktap_test_pass "$desc"
	fi
}

# Network namespaces made by setup_ns, deleted by cleanup_ns.
NS_LIST=()
setup_ns() {
	local _name _ns
	for _name in "$@"; do
		_ns=$_name-$(mktemp -u XXXXXX)
		ip netns add "$_ns" || return 1
		ip -n "$_ns" link set lo up
		NS_LIST+=("$_ns")
		eval "$_name=$_ns"
	done
}

cleanup_ns() {
	local ns
	for ns in "${NS_LIST[@]}"; do
		ip netns del "$ns" 2>/dev/null
	done
	NS_LIST=()
}

# netdevsim: nsim_new PORTS [NS] makes a device with PORTS ports in
# namespace NS (default: the current one) and sets NSIM_ID; nsim_del_all
# deletes every device made so far. Not in a command substitution: the
# list must reach the caller's shell.
NSIM_IDS=()
NSIM_ID=
nsim_new() {
	local ports=${1:-1} ns=${2:-} id
	[ -d /sys/bus/netdevsim ] || modprobe netdevsim 2>/dev/null
	[ -w /sys/bus/netdevsim/new_device ] || return 1
	for id in $(seq 100 199); do
		[ -e "/sys/bus/netdevsim/devices/netdevsim$id" ] && continue
		# A device's ports appear in the namespace of the writer.
		in_ns "$ns" sh -c "echo $id $ports > /sys/bus/netdevsim/new_device" || return 1
		NSIM_IDS+=("$id")
		udev_settle_nsim "$id" "$ports" "$ns" || return 1
		NSIM_ID=$id
		return 0
	done
	return 1
}

# in_ns NS CMD...: CMD in namespace NS (with its own /sys), or here if NS
# is empty.
in_ns() {
	local ns=$1
	shift
	if [ -n "$ns" ]; then
		ip netns exec "$ns" "$@"
	else
		"$@"
	fi
}

# Until the device's ports exist and udev (when it runs, as in virtme-ng)
# has renamed them from eth%d: a name read before that goes stale.
# `udevadm settle` alone is not enough: on a slow kernel (KASAN under TCG)
# it can return before udevd has even received the device's uevent. So
# while udevd runs, wait for the names themselves to change; should udev
# keep eth%d (no naming rule), go on after 10 s with the names as they are.
# Ports made in another namespace are never renamed: a netdev's uevents
# go only to its own namespace (kobject_uevent_net_broadcast()), and udevd
# listens in the initial one.
udev_settle_nsim() {
	local id=$1 ports=$2 ns=${3:-} names deadline=$((SECONDS + 15))
	local rename=
	[ -z "$ns" ] && [ -S /run/udev/control ] && rename=1
	while [ "$SECONDS" -lt "$deadline" ]; do
		names=$(in_ns "$ns" ls "/sys/bus/netdevsim/devices/netdevsim$id/net" 2>/dev/null)
		if [ "$(grep -c . <<<"$names")" -ge "$ports" ]; then
			[ -n "$rename" ] || return 0
			command -v udevadm >/dev/null && udevadm settle -t 10 2>/dev/null
			grep -qE '^eth[0-9]+$' <<<"$names" || return 0
			# No rename yet: give udev until 10 s from the start.
			[ "$SECONDS" -lt $((deadline - 5)) ] || return 0
		fi
		nap 0.1
	done
	return 1
}

# nsim_require: skip unless the kernel under test has netdevsim (built in
# or a module). Anything else that stops a bed of netdevsim ports is a
# broken bed, a failure.
nsim_require() {
	[ -d /sys/bus/netdevsim ] || modprobe netdevsim 2>/dev/null
	[ -d /sys/bus/netdevsim ] || kernel_lacks netdevsim "netdevsim (CONFIG_NETDEVSIM)"
}

# The netdev name of port PORT (0-based) of netdevsim device ID, in NS.
nsim_port() {
	in_ns "${3:-}" ls "/sys/bus/netdevsim/devices/netdevsim$1/net" | sort |
		sed -n "$(( ${2:-0} + 1 ))p"
}

nsim_del_all() {
	local id
	for id in "${NSIM_IDS[@]}"; do
		echo "$id" > /sys/bus/netdevsim/del_device 2>/dev/null
	done
	NSIM_IDS=()
}

# hw_macsec DEV [NS]: ethtool's view of NETIF_F_HW_MACSEC, on or off.
hw_macsec() {
	local l
	while IFS= read -r l; do
		case $l in
		macsec-hw-offload:*)
			l=${l#macsec-hw-offload: }
			echo "${l%% *}"
			;;
		esac
	done < <(in_ns "${2:-}" ethtool -k "$1" 2>/dev/null)
}

# wait_for TENTHS CMD...: until CMD succeeds, for at most TENTHS tenths of
# a second; fails as its last try does.
wait_for() {
	local n=$1 i
	shift
	for ((i = 0; i < n; i++)); do
		"$@" && return 0
		nap 0.1
	done
	"$@"
}

# json_field FILE EXPR: a Python expression over the JSON object in FILE
# (d): the whole file, or else its first line that is one.
json_field() {
	py -c "import json, sys
text = open(sys.argv[1]).read()
try:
    d = json.loads(text)
except ValueError:
    d = next(json.loads(l) for l in text.splitlines() if l.startswith('{'))
print($2)" "$1" 2>/dev/null
}

# ---- The macsec-bridge family through the kernel's own YNL CLI ----------

YNL_SPEC=$lib_dir/../../../Documentation/netlink/specs/macsec_bridge.yaml
[ -r "$YNL_SPEC" ] || YNL_SPEC=${KSFT_KDIR:-}/Documentation/netlink/specs/macsec_bridge.yaml
[ -r "$YNL_SPEC" ] || YNL_SPEC=${MACSEC_BRIDGE_SPEC:-}
# The kernel tree's YNL CLI.
YNL_CLI=${KSFT_KDIR:-}/tools/net/ynl/pyynl/cli.py

# The YNL CLI, the spec and python3-yaml: the kernel tree under test and
# set-up provide them, so a missing one is a broken test bed, not a
# feature the kernel lacks: fail, saying which.
require_ynl() {
	local missing=
	[ -r "$YNL_SPEC" ] || missing="the spec ($YNL_SPEC)"
	[ -r "$YNL_CLI" ] || missing="the YNL CLI ($YNL_CLI; KSFT_KDIR=${KSFT_KDIR:-unset})"
	/usr/bin/python3 -c 'import yaml' 2>/dev/null || missing="python3-yaml"
	[ -z "$missing" ] || bed_broken "$missing missing"
	py_server_start
}

# py_server.py runs the YNL CLI and the tests' Python helpers for this
# test: one Python process that imported the CLI's library once, and forks
# for each call (starting Python costs seconds under TCG, the CLI about
# ten). require_ynl starts it, in the test's own shell; a shell that does
# not know it (bash -c: PY_FIFO is not exported) runs Python itself.
# PY_SERVER=0: every call runs Python as a process of its own.
PY_FIFO=
PY_REQ=0

py_server_start() {
	# One server a test, however many beds it sets up.
	[ "${PY_SERVER:-1}" = 1 ] && [ -z "$PY_FIFO" ] || return 0
	PY_FIFO=$ROW_DIR/py.fifo
	mkfifo "$PY_FIFO" || { PY_FIFO=; return 1; }
	# Not a job of this shell (a test's bare `wait` must not wait for it):
	# it ends when this shell does.
	(/usr/bin/python3 "$lib_dir/py_server.py" "$YNL_CLI" "$PY_FIFO" $$ \
		</dev/null >/dev/null 2>"$ROW_DIR/py_server.err" &)
}

# json_str STRING: STRING as a JSON string, into JSON_STR (no subshell).
json_str() {
	local a=${1//\\/\\\\}
	a=${a//\"/\\\"}
	a=${a//$'\n'/\\n}
	a=${a//$'\t'/\\t}
	JSON_STR="\"${a//$'\r'/\\r}\""
}

# py_req NS PROGRAM ARGS...: one call through the server, in namespace NS
# (empty: this one); PROGRAM as py_server.py takes it.
# Its stdout and stderr are printed here, its status returned. The caller's
# stdin goes along when it is a pipe or a file; `secy-netns-fd` values in
# ARGS, and ARGS that are /dev/fd/N (process substitutions), name fds of
# the caller, which the server opens through /proc.
py_req() {
	local ns=$1 prog=$2 a argv= fds= n rest out tok t rc stdin= deadline
	local -a lines
	shift 2
	for a in "$@"; do
		# A process substitution's path names an fd of this shell.
		[[ $a =~ ^/dev/fd/([0-9]+)$ ]] && a=/proc/$BASHPID/fd/${BASH_REMATCH[1]}
		json_str "$a"
		argv+="$JSON_STR,"
		rest=$a
		while [[ $rest =~ \"secy-netns-fd\":\ *([0-9]+) ]]; do
			n=${BASH_REMATCH[1]}
			rest=${rest#*"${BASH_REMATCH[0]}"}
			# A number no fd can have names nothing, for the server as here.
			[ ${#n} -le 4 ] || continue
			if [ -e "/proc/$BASHPID/fd/$n" ]; then
				fds+="\"$n\": \"/proc/$BASHPID/fd/$n\","
			else
				fds+="\"$n\": null,"
			fi
		done
	done
	{ [ -p /dev/stdin ] || [ -f /dev/stdin ]; } && stdin=/proc/$BASHPID/fd/0
	json_str "$prog"
	prog=$JSON_STR
	[ -z "$ns" ] || ns=/run/netns/$ns
	json_str "$PWD"
	PY_REQ=$((PY_REQ + 1))
	# One set of files a shell, reused: the token tells this call's answer
	# from a last one's (a subshell inherits PY_REQ, and pids come back).
	out=$ROW_DIR/py.$BASHPID
	tok=$BASHPID.$PY_REQ.$RANDOM$RANDOM
	local req="{\"out\": \"$out\", \"token\": \"$tok\", \"program\": $prog,"
	req+=" \"argv\": [${argv%,}], \"stdin\": \"$stdin\", \"cwd\": $JSON_STR,"
	req+=" \"fds\": {${fds%,}}, \"netns\": \"$ns\"}"
	echo "$req" >"$PY_FIFO"
	deadline=$((SECONDS + 120))
	# The answer is read on an fd of its own: `<` would point this shell's
	# fd 0, which the server opens for the program's stdin when it gets to
	# the request, at the answer file for that instant (a program then ran
	# with a last answer, `TOKEN 0`, as its source).
	until [ -e "$out.rc" ] && read -r -u 3 t rc 3<"$out.rc" && [ "$t" = "$tok" ]; do
		if [ "$SECONDS" -ge "$deadline" ]; then
			echo "py_server.py did not answer: $(<"$ROW_DIR/py_server.err")" >&2
			return 1
		fi
		nap 0.05
	done
	# Builtins (mapfile, printf), not cat: a process costs 0.2 s here.
	# (A last line without a newline gets one.)
	mapfile -t lines <"$out.stdout"
	[ ${#lines[@]} -eq 0 ] || printf '%s\n' "${lines[@]}"
	mapfile -t lines <"$out.stderr"
	[ ${#lines[@]} -eq 0 ] || printf '%s\n' "${lines[@]}" >&2
	return "$rc"
}

# py PROGRAM ARGS...: `python3 PROGRAM ARGS...` (PROGRAM a script, `-` or
# `-c CODE`), through the server once it runs. py_in NS ...: the same in
# namespace NS (empty: this one), as `ip netns exec NS python3 ...`.
py() {
	py_in "" "$@"
}

py_in() {
	local ns=$1
	shift
	if [ -n "$PY_FIFO" ]; then
		py_req "$ns" "$@"
	else
		in_ns "$ns" /usr/bin/python3 "$@"
	fi
}

# gids_are PORT N: PORT's object lists N protected GIDs.
gids_are() { [ "$(py "$lib_dir/mb_genl.py" gids "$1")" = "$2" ]; }

# listed_on PORT RDMA NETDEV [GID]: PORT lists GIDs in a dump, each one
# RDMA has on NETDEV with the value sysfs shows (none on another netdev),
# and GID (as sysfs writes one) is not among them.
listed_on() {
	ynl --dump dev-get --output-json >"$ROW_DIR/gids.json" || return 1
	py - "$ROW_DIR/gids.json" "$@" <<'PY'
import json, sys
dump, port, rdma, netdev = sys.argv[1:5]
gid = sys.argv[5] if len(sys.argv) > 5 else None
obj = [o for o in json.load(open(dump)) if o['ifname'] == port][0]
listed = obj.get('protected-gid', [])
d = f'/sys/class/infiniband/{rdma}/ports/1'
def on(i):
    try:
        return open(f'{d}/gid_attrs/ndevs/{i}').read().strip()
    except OSError:
        return None
bad = [g for g in listed if g['rdma-dev'] != rdma or on(g['index']) != netdev
       or open(f"{d}/gids/{g['index']}").read().strip() != g['gid'] or g['gid'] == gid]
print(f'# {port}: {[g["gid"] for g in listed]} listed; not on {netdev}, or {gid}: {bad}')
sys.exit(0 if listed and not bad else 1)
PY
}

# ynl ARGS...: the CLI in this namespace, through the server once it runs:
# the same code with the same output and status.
ynl() {
	ynl_in "" "$@"
}

# ynl_in NS ARGS...: the CLI in namespace NS (empty: this one), through
# the server as ynl, which enters /run/netns/NS for it.
ynl_in() {
	local ns=$1
	shift
	py_in "$ns" "$YNL_CLI" --no-schema --spec "$YNL_SPEC" --output-json "$@"
}


# wait_subscribed PID [NS]: until process PID has a generic netlink socket
# in NS that joined a multicast group (/proc/net/netlink: protocol 16, port
# id = PID, group bitmap non-zero).
wait_subscribed() {
	local i
	for i in $(seq 300); do
		in_ns "${2:-}" awk -v pid="$1" \
			'$2 == 16 && $3 == pid && $4 != "00000000" {f = 1} END {exit !f}' \
			/proc/net/netlink && return 0
		kill -0 "$1" 2>/dev/null || return 1
		nap 0.1
	done
	return 1
}

# A lockstep table. One `cli.py --subscribe monitor` spans the table
# (ynl_monitor.py ends its sleep when the table is over); each row runs an
# action, then records `ethtool -k` and a dump, which ynl_dumper.py (the
# CLI's library, loaded once per table) makes as `cli.py --dump dev-get`
# would. At the end lockstep_check.py judges every row three ways: ethtool,
# the dump, and the notifications for the generations the row moved
# through.
ROW_DIR=$(mktemp -d /tmp/macsec_bridge-rows.XXXXXX)
ROW_N=0
ROW_MON=
ROW_DUMPER=

table_begin() {
	ROW_N=0
	: >"$ROW_DIR/rows"
	exec /usr/bin/python3 "$lib_dir/ynl_monitor.py" "$YNL_CLI" --no-schema \
		--spec "$YNL_SPEC" --output-json --subscribe monitor --sleep 3600 \
		>"$ROW_DIR/ntf" 2>"$ROW_DIR/ntf.err" &
	ROW_MON=$!
	rm -f "$ROW_DIR/dumps" && mkfifo "$ROW_DIR/dumps" || return 1
	/usr/bin/python3 "$lib_dir/ynl_dumper.py" "$YNL_CLI" "$YNL_SPEC" "$ROW_DIR/dumps" \
		2>"$ROW_DIR/dumper.err" &
	ROW_DUMPER=$!
	wait_subscribed "$ROW_MON" || return 1
	# Where the table starts from.
	table_dump "$ROW_DIR/dump.0"
}

# table_dump FILE: the dump, as `cli.py --dump dev-get` prints it, in FILE.
table_dump() {
	rm -f "$1"
	echo "$1" >"$ROW_DIR/dumps"
	wait_for 600 test -e "$1"
}

# json_of CMD...: CMD's JSON output, or null if it printed nothing.
json_of() {
	local out
	out=$("$@" 2>/dev/null)
	echo "${out:-null}"
}

# table_oracle FILE: what the port objects are checked against, from the
# kernel's other interfaces: each namespace's MACsec links (`ip -d -j`:
# SCI, cipher suite, encrypt), the namespace ids as this namespace sees
# them, and the RDMA links (`rdma -j link`: which RDMA device is on which
# netdev).
table_oracle() {
	local ns
	{
		printf '{"links": {"": %s' "$(json_of ip -d -j link show type macsec)"
		for ns in "${NS_LIST[@]}"; do
			printf ', "%s": %s' "$ns" \
				"$(json_of ip -n "$ns" -d -j link show type macsec)"
		done
		printf '}, "nsids": %s' "$(json_of ip -j netns list-id)"
		printf ', "rdma": %s}\n' "$(json_of rdma -j link show)"
	} >"$1"
}

# row DESC PORT BIT PROTECTION REASON [relation=R] [owner=O] [seq=S] [validate=V] -- ACTION...
#   BIT: expected macsec-hw-offload (on/off, - when the netdev is gone);
#   PROTECTION: expected protection, or `absent`; REASON: expected reason
#   (empty for none); S: the port's notifications during the row, in
#   order, as PROTECTION/REASON separated by commas (`seq=`: none at all);
#   V: the object's validate (`none`: absent);
#   ACTION: run with eval, must succeed.
row() {
	local desc=$1 port=$2 bit=$3 prot=$4 reason=$5 relation=- owner=- seq=- vld=- rc
	shift 5
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		case $1 in
		relation=*) relation=${1#relation=} ;;
		owner=*) owner=${1#owner=} ;;
		seq=*) seq==${1#seq=} ;;
		validate=*) vld=${1#validate=} ;;
		esac
		shift
	done
	shift
	ROW_N=$((ROW_N + 1))
	eval "$*" >"$ROW_DIR/action.$ROW_N" 2>&1
	rc=$?
	table_dump "$ROW_DIR/dump.$ROW_N"
	table_oracle "$ROW_DIR/oracle.$ROW_N"
	printf '%s\t' "$ROW_N" "$desc" "$port" "$bit" "$(hw_macsec "$port")" \
		"$prot" "${reason:--}" "$relation" "$owner" "$rc" "$seq" "$vld" >>"$ROW_DIR/rows"
	echo >>"$ROW_DIR/rows"
}

# Ends the monitor and reports one KTAP result per row.
table_end() {
	local verdict desc
	echo quit >"$ROW_DIR/dumps"
	wait "$ROW_DUMPER"
	kill -USR1 "$ROW_MON" 2>/dev/null
	wait "$ROW_MON"
	while IFS=$'\t' read -r verdict desc; do
		case $verdict in
		PASS) ktap_test_pass "$desc" ;;
		FAIL) ktap_test_fail "$desc" ;;
		*) echo "$verdict${desc:+ $desc}" ;;
		esac
	done < <(/usr/bin/python3 "$lib_dir/lockstep_check.py" "$ROW_DIR")
}

# delivered OUT DEV SECY COPY: a broadcast Ethernet frame (a local
# experimental EtherType, a payload of its own) sent out of OUT from a
# packet socket is received on DEV, and SECY, a MACsec netdev over DEV,
# gets a copy of it if COPY is 1 (the receive path of an offloaded SecY,
# handle_not_macsec(), hands it one), none (within 2 s of DEV's) if 0.
delivered() {
	python3 - "$@" <<'PY'
import os, socket, sys, time
out, dev, secy, copy = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == '1'
PACKET_OUTGOING = 4

def listen(name):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
    s.bind((name, 0))
    s.setblocking(False)
    return s

on_dev, on_secy = listen(dev), listen(secy)
tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
tx.bind((out, 0))
tag = os.urandom(8) * 8
tx.send(b'\xff' * 6 + bytes.fromhex('020000000001') + b'\x88\xb5' + tag)
got_dev = got_secy = False
end = time.monotonic() + 20
while time.monotonic() < end and not (got_dev and (got_secy or not copy)):
    for s in (on_dev, on_secy):
        try:
            data, addr = s.recvfrom(2048)
        except BlockingIOError:
            continue
        if tag not in data or addr[2] == PACKET_OUTGOING:
            continue
        if s is on_dev:
            if not got_dev:
                end = time.monotonic() + 2
            got_dev = True
        else:
            got_secy = True
    time.sleep(0.01)
if got_dev and got_secy == copy:
    sys.exit(0)
print(f'# {dev} got it: {got_dev}; {secy} got a copy: {got_secy}, wanted {copy}')
sys.exit(1)
PY
}

# nsim_pair [NS]: two netdevsim devices with one port each, linked back to
# back in namespace NS (default: the current one) and up, so that both have
# carrier. Sets NSIM_A/NSIM_B and NSIM_A_ID.
nsim_pair() {
	local ns=${1:-} a b
	nsim_new 1 "$ns" && a=$NSIM_ID && nsim_new 1 "$ns" && b=$NSIM_ID || return 1
	NSIM_A=$(nsim_port "$a" 0 "$ns")
	NSIM_B=$(nsim_port "$b" 0 "$ns")
	NSIM_A_ID=$a
	nsim_link "$ns" "$NSIM_A" "$ns" "$NSIM_B" &&
		ip ${ns:+-n "$ns"} link set "$NSIM_A" up && ip ${ns:+-n "$ns"} link set "$NSIM_B" up
}

# nsim_link NS-A PORT-A NS-B PORT-B: links two netdevsim ports back to back
# (an empty NS is the current namespace).
nsim_link() {
	local fa fb rc
	exec {fa}<"$(ns_path "$1")" {fb}<"$(ns_path "$3")"
	echo "$fa:$(ifindex "$2" "$1") $fb:$(ifindex "$4" "$3")" > /sys/bus/netdevsim/link_device
	rc=$?
	exec {fa}<&- {fb}<&-
	return $rc
}

ns_path() {
	if [ -n "$1" ]; then echo "/run/netns/$1"; else echo /proc/self/ns/net; fi
}

# The bed every lockstep table starts from: root, the tools, the module, the
# YNL CLI, the RDMA core (the tables run in init_net) and a netdevsim pair
# (NSIM_A, NSIM_B); all cleaned up on exit.
lockstep_bed() {
	bed_require
	on_exit lockstep_cleanup
	# No IPv6 link-local addresses on the devices the table makes: an
	# upper port lists the GIDs of its SecY's addresses, which the RDMA
	# core adds when it gets to them, not when a row does.
	LOCKSTEP_GEN_MODE=$(sysctl -n net.ipv6.conf.default.addr_gen_mode)
	sysctl -qw net.ipv6.conf.default.addr_gen_mode=1
	nsim_require
	nsim_pair || bed_broken "a linked pair of netdevsim ports"
}

# What every test bed with the module, RXE and ynl needs; skips otherwise.
bed_require() {
	require_root
	require_cmd ip ethtool rdma insmod rmmod
	require_ko "$MODULE_KO" "module under test (MACSEC_BRIDGE_KO)"
	require_ynl
	require_rxe
}

# dpu_bed [veth|nsim|dummy|vlan]: the DPU split in one kernel. Namespace DPU is
# the DPU: the uplink UPLINK (a netdevsim pair, for carrier) with the
# offloaded SecY macsec0 on it, and d0, the DPU end of the host link. This
# namespace is the host: h0 is the RDMA port. The host link is a veth pair
# (the module owns h0's feature bit) or two linked netdevsim ports (the
# driver owns it; unlike a veth, h0 outlives the DPU namespace: a veth dies
# with its peer's namespace). `dummy` makes h0 a dummy device with no link
# to the DPU: the module owns its bit, and it is ops-locked (its features
# are written under its instance lock), as a host function such as mlx5e
# is. `vlan` makes h0 VLAN 100 over a netdevsim port of the host's: it has
# macsec_ops (every VLAN does, forwarding to its real device), so its bit is
# its driver's.
dpu_bed() {
	local hp dp
	bed_require
	on_exit dpu_cleanup
	setup_ns DPU || ns_broken DPU
	nsim_require
	nsim_pair "$DPU" || bed_broken "a linked pair of netdevsim ports in the DPU namespace"
	UPLINK=$NSIM_A
	case "${1:-veth}" in
	veth)
		ip link add h0 type veth peer name d0 netns "$DPU" &&
			ip -n "$DPU" link set d0 up ;;
	nsim)
		nsim_new 1 && hp=$(nsim_port "$NSIM_ID" 0) &&
			nsim_new 1 "$DPU" && dp=$(nsim_port "$NSIM_ID" 0 "$DPU") &&
			nsim_link "" "$hp" "$DPU" "$dp" &&
			ip link set "$hp" name h0 && ip -n "$DPU" link set "$dp" name d0 &&
			ip -n "$DPU" link set d0 up ;;
	dummy)
		ip link add h0 type dummy ;;
	vlan)
		nsim_new 1 && hp=$(nsim_port "$NSIM_ID" 0) && ip link set "$hp" name h0r &&
			ip link set h0r up && ip link add link h0r name h0 type vlan id 100 ;;
	esac &&
		ip link set h0 up &&
		ip -n "$DPU" link add link "$NSIM_A" macsec0 type macsec port 4 encrypt on \
			offload mac &&
		ip -n "$DPU" link set macsec0 up ||
		bed_broken "cannot build the DPU bed"
}

dpu_cleanup() {
	rdma link del mb_rxe0 2>/dev/null
	ip link del h0 2>/dev/null
	ip link del h0r 2>/dev/null
	cleanup_ns
	nsim_del_all
	rmmod macsec_bridge 2>/dev/null
	rm -rf "$ROW_DIR"
}

# Monitors outside a table: mon_start NAME [NS [GROUP]] subscribes a
# `cli.py --subscribe GROUP` (default monitor) in NS (empty: this one);
# mon_stop NAME ends it, leaving its notifications (JSON) in
# $ROW_DIR/mon.NAME.
declare -A MON_PID
mon_start() {
	local name=$1 ns=${2:-} group=${3:-monitor}
	local cmd=(/usr/bin/python3 "$lib_dir/ynl_monitor.py" "$YNL_CLI" --no-schema
		   --spec "$YNL_SPEC" --output-json --subscribe "$group" --sleep 3600)
	# Simple commands, so that $! is the monitor itself (its netlink port
	# id); `ip netns exec` execs without forking.
	if [ -n "$ns" ]; then
		ip netns exec "$ns" "${cmd[@]}" >"$ROW_DIR/mon.$name" 2>"$ROW_DIR/mon.$name.err" &
	else
		"${cmd[@]}" >"$ROW_DIR/mon.$name" 2>"$ROW_DIR/mon.$name.err" &
	fi
	MON_PID[$name]=$!
	wait_subscribed "${MON_PID[$name]}" "$ns"
}

mon_stop() {
	kill -USR1 "${MON_PID[$1]}" 2>/dev/null
	wait "${MON_PID[$1]}"
}

# ifindex NETDEV [NS]
ifindex() {
	local i
	if [ -n "${2:-}" ]; then
		in_ns "$2" cat "/sys/class/net/$1/ifindex"
	else
		read -r i <"/sys/class/net/$1/ifindex" && echo "$i"
	fi
}

# dpu_bind PORT [JSON-EXTRA]: binds PORT (here) to the DPU's macsec0 through
# a netns fd; prints cli.py's output, fails as it does.
dpu_bind() {
	local extra=${2:-}
	ynl --do bind --json "{\"ifindex\": $(ifindex "$1"),
		\"secy-ifindex\": $(ifindex macsec0 "$DPU"), \"secy-netns-fd\": 9$extra}" \
		9<"/run/netns/$DPU"
}

# bind_here PORT SECY: binds PORT to SECY, both in this namespace.
bind_here() {
	ynl --do bind --json "{\"ifindex\": $(ifindex "$1"), \"secy-ifindex\": $(ifindex "$2")}"
}

dpu_unbind() {
	ynl --do unbind --json "{\"ifindex\": $(ifindex "$1")}"
}

# port_field JSON-FILE IFNAME FIELD: FIELD of port IFNAME in a dump (empty
# if absent, lists joined with commas; `absent` if the port is not there).
port_field() {
	py - "$@" <<'PY'
import json, sys
path, name, field = sys.argv[1:4]
try:
    ports = json.load(open(path))
except (OSError, ValueError):
    ports = []
found = [p for p in ports if isinstance(p, dict) and p.get('ifname') == name]
v = found[0].get(field, '') if found else 'absent'
print(','.join(map(str, v)) if isinstance(v, list) else v)
PY
}

lockstep_cleanup() {
	[ -z "${LOCKSTEP_GEN_MODE:-}" ] ||
		sysctl -qw net.ipv6.conf.default.addr_gen_mode="$LOCKSTEP_GEN_MODE"
	rdma link del mb_rxe0 2>/dev/null
	ip link del macsec0 2>/dev/null
	cleanup_ns
	nsim_del_all
	rmmod macsec_bridge 2>/dev/null
	rm -rf "$ROW_DIR"
}

# The model NIC, mtn0 (test_modules/macsec_test_nic.rs): its MACsec
# operations succeed unless its alias names one (`fail:mdo_dev_stop`).
NIC_KO=${MACSEC_TEST_NIC_KO:-$lib_dir/test_modules/macsec_test_nic.ko}

# nic_bed: what every bed needs, and the model NIC loaded and up; all
# cleaned up on exit. The module is built with the tests: failing to load
# it fails the test.
nic_bed() {
	bed_require
	require_ko "$NIC_KO" "model NIC test module (MACSEC_TEST_NIC_KO)"
	on_exit nic_cleanup
	# It calls into macsec.ko (macsec_pn_wrapped()) when MACsec is a module.
	modprobe -q macsec 2>/dev/null
	insmod "$NIC_KO" && ip link set mtn0 up || ktap_exit_fail_msg "cannot load the model NIC"
}

nic_cleanup() {
	ip link set mtn0 alias '' 2>/dev/null
	rdma link del mb_rxe0 2>/dev/null
	rdma link del mb_rxe1 2>/dev/null
	ip link del h0 2>/dev/null
	ip link del macsec0 2>/dev/null
	rmmod macsec_bridge 2>/dev/null
	rmmod macsec_test_nic 2>/dev/null
	rm -rf "$ROW_DIR"
}

# ops_are OP...: since the trace buffer ($T, tracefs_require) was emptied,
# the model NIC returned from exactly these operations, in this order, each
# as "mdo_NAME RET" ("phy mdo_NAME RET" for its PHY's).
ops_are() {
	local got
	got=$(sed -n 's/.*macsec_test_nic: \(\(phy \)\?mdo_[a-z_]*\) exit \(-\?[0-9]*\)$/\1 \3/p' \
		"$T/trace")
	[ "$got" = "$(printf '%s\n' "$@")" ] && return 0
	echo "# operations: $(echo $got)"
	return 1
}

# failslab_require: the kernel fails allocations on demand (failslab,
# through a task's fail-nth knob), or the test fails: the test config asks
# for it. Set up as mb_genl.FailNth sets it: sleeping allocations fail
# too, and no stack trace is printed per failure.
failslab_require() {
	[ -d /sys/kernel/debug/failslab ] && [ -e /proc/self/fail-nth ] ||
		ktap_exit_fail_msg "no failslab or fail-nth: the kernel lacks CONFIG_FAILSLAB or" \
			"CONFIG_FAULT_INJECTION_DEBUG_FS"
	echo N >/sys/kernel/debug/failslab/ignore-gfp-wait &&
		echo 0 >/sys/kernel/debug/failslab/verbose || bed_broken "cannot set failslab up"
}

# tracefs_require: tracefs at $T (set here), mounted if it was not, and
# writable; a broken bed otherwise.
tracefs_require() {
	T=/sys/kernel/tracing
	[ -e "$T/trace" ] || mount -t tracefs nodev "$T" 2>/dev/null
	[ -w "$T/trace" ] || bed_broken "tracefs at $T (CONFIG_TRACING)"
}

# The kernel log by its records' sequence numbers (/dev/kmsg), so that a
# scan never misses a line: a count of lines stops growing once the ring
# buffer is full. kmsg prints the records the buffer still holds, as
# "SEQ MESSAGE" (one read a record, until none is left), and fails if it
# could not read them all: dd stops at its first error, EAGAIN once every
# record was read, EPIPE when one was overwritten while it read.
kmsg() {
	local err=${TMPDIR:-/tmp}/macsec_bridge-kmsg.$BASHPID
	dd if=/dev/kmsg iflag=nonblock bs=64k status=none 2>"$err" |
		sed -nE 's/^[0-9]+,([0-9]+),[^;]*;/\1 /p'
	if grep -qv 'Resource temporarily unavailable' "$err"; then
		echo "# the kernel log could not be read whole: $(<"$err")" >&2
		rm -f "$err"
		return 1
	fi
	rm -f "$err"
}

# dmesg_mark: notes the last record; dmesg_since then prints the messages
# logged after it, or fails (saying how many) if the buffer no longer
# holds the first of them.
dmesg_mark() {
	local last
	last=$(kmsg | tail -n 1)
	DMESG_MARK=${last%% *}
	[ -n "$DMESG_MARK" ] || DMESG_MARK=-1
}
dmesg_since() {
	local log first
	log=$(kmsg)
	first=${log%% *}
	if [ -n "$first" ] && [ "$first" -gt $((DMESG_MARK + 1)) ]; then
		echo "# the kernel log lost $((first - DMESG_MARK - 1)) lines since the mark" >&2
		return 1
	fi
	awk -v m="$DMESG_MARK" '$1 > m { sub(/^[0-9]+ /, ""); print }' <<<"$log"
}

# The records of the kernel log that tests raised on purpose (a contract
# broken to see lockdep report it), one "FIRST LAST" range of sequence
# numbers a line: the kernel log scans leave them out. One file per boot, as
# the numbers are.
SPLATS_FILE=/tmp/macsec_bridge-expected-splats.$(</proc/sys/kernel/random/boot_id)

# splat_expected FIRST LAST: records FIRST to LAST are a warning the test
# raised on purpose.
splat_expected() {
	echo "$1 $2" >>"$SPLATS_FILE"
}

# What lockdep, KASAN, kmemleak, DEBUG_ATOMIC_SLEEP and WARN()/BUG() print,
# then what a leaked netdev reference (netdev_wait_allrefs()), a refcount
# misuse, an RCU stall and the hung task detector print.
SPLAT_PATTERN='WARNING:|BUG:|Oops|general protection fault|possible circular locking'
SPLAT_PATTERN+='|possible recursive locking|inconsistent lock state|suspicious RCU usage'
SPLAT_PATTERN+='|DEBUG_LOCKS_WARN_ON|lock held when returning'
SPLAT_PATTERN+='|sleeping function called from invalid context|KASAN:|UBSAN:'
SPLAT_PATTERN+='|kmemleak: [0-9]+ new suspected|unreferenced object|Call Trace:'
SPLAT_PATTERN+='|unregister_netdevice: waiting for|refcount_t: |detected stalls? on CPU'
SPLAT_PATTERN+='|self-detected stall|blocked for more than [0-9]+ seconds'

# kmsg_unexpected AFTER: the kernel log's messages after record AFTER (-1:
# since boot), less the records tests raised on purpose
# (splat_expected); fails if the log could not be read whole, or no longer
# holds the record after AFTER.
kmsg_unexpected() {
	local raw first
	raw=$(kmsg) || return 1
	first=${raw%% *}
	[ -z "$first" ] || [ "$first" -le $(($1 + 1)) ] || return 1
	awk -v after="$1" -v f="$SPLATS_FILE" '
		BEGIN {
			while ((getline l < f) > 0) {
				split(l, r, " ")
				lo[++n] = r[1]
				hi[n] = r[2]
			}
		}
		{
			s = $1 + 0
			if (s <= after)
				next
			for (i = 1; i <= n; i++)
				if (s >= lo[i] && s <= hi[i])
					next
			sub(/^[0-9]+ /, "")
			print
		}' <<<"$raw"
}

# splats AFTER: each SPLAT_PATTERN match in kmsg_unexpected AFTER, with
# its context (at most 120 lines in all); nothing when there is none.
# Fails as kmsg_unexpected does.
splats() {
	local log
	log=$(kmsg_unexpected "$1") || return 1
	grep -E -B2 -A20 "$SPLAT_PATTERN" <<<"$log" | head -120
	return 0
}

# splat_scan: at a test's exit (on_exit), whatever the kernel logged while
# the test ran, from the record the log ended at when it started: a splat
# there fails the test, whatever ran before or runs after it. It also
# fails if the log lost the test's records.
splat_scan() {
	local bad
	if ! bad=$(splats "$KMSG_START"); then
		echo "# the kernel log lost records of this test: cannot tell whether it is clean"
		exit "$KSFT_FAIL"
	fi
	[ -n "$bad" ] || return 0
	echo "# the kernel logged a splat while this test ran:"
	sed 's/^/# /' <<<"$bad"
	exit "$KSFT_FAIL"
}

# dmesg_clean_since DESCRIPTION: one KTAP result, whether the kernel
# printed a warning, bug, sanitizer report, leaked netdev reference or hung
# task after the mark (a log that lost lines since fails).
dmesg_clean_since() {
	local log splats
	if ! log=$(dmesg_since); then
		ktap_test_fail "$1 (the kernel log lost lines: cannot tell)"
		return
	fi
	splats=$(grep -E 'WARNING:|BUG:|Oops|lockdep|KASAN:|UBSAN:|refcount_t: '\
'|unregister_netdevice: waiting for|blocked for more than' <<<"$log")
	[ -z "$splats" ] || echo "$splats" | head -20 | sed 's/^/# /'
	check "$1" [ -z "$splats" ]
}

# sw_macsec_pod NS LOWER MACSEC ADDR TXKEY PEER_MAC RXKEY: in namespace NS,
# a software SecY MACSEC (encrypting) on LOWER with address ADDR/24, its TX
# key TXKEY and an RX SC for PEER_MAC with key RXKEY; both up.
sw_macsec_pod() {
	ip -n "$1" link add link "$2" "$3" type macsec port 1 encrypt on &&
		ip -n "$1" macsec add "$3" tx sa 0 pn 1 on key 01 "$5" &&
		ip -n "$1" macsec add "$3" rx port 1 address "$6" &&
		ip -n "$1" macsec add "$3" rx port 1 address "$6" sa 0 pn 1 on key 02 "$7" &&
		ip -n "$1" addr add "$4/24" dev "$3" &&
		ip -n "$1" link set "$2" up &&
		ip -n "$1" link set "$3" up
}

# A 128-bit key for `ip macsec`.
MB_KEY=01234567890123456789012345678901
# A 96-bit salt, for the extended packet number cipher suites.
MB_SALT=0123456789abcdef01234567

sizes_load

# Where the test's own records start (splat_scan), and the scan, for a test
# that sets no cleanup of its own.
dmesg_mark
KMSG_START=$DMESG_MARK
on_exit :
