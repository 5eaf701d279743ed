#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/vm-run keeps every line of the guest's stdout and stderr when
# both go to one file (`make check` writes vm.log that way), and stops
# everything it started at its time limit.
#
# QEMU, as virtme-ng drives it, does not write to the fds it inherits: it
# opens /proc/self/fd/1 and /proc/self/fd/2 again, once per serial port.
# On a regular file each open is a new file description at offset 0, so
# the ports overwrite each other. A stand-in vng that opens its fds the
# same way shows whether vm-run protects against that, without a VM.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

mkdir -p "$tmp/kdir/arch/x86/boot" "$tmp/tools/venv/bin"
touch "$tmp/kdir/arch/x86/boot/bzImage"
cat > "$tmp/tools/venv/bin/vng" <<'EOF'
#!/bin/bash
# Runs --exec on the host, its stdout and stderr through fresh opens of
# /proc/self/fd/{1,2}, as QEMU's file chardevs do.
while [ $# -gt 0 ]; do
	case "$1" in
	--exec) cmd=$2; shift 2 ;;
	*) shift ;;
	esac
done
exec 5>/proc/self/fd/1 6>/proc/self/fd/2
bash -c "$cmd" >&5 2>&6
EOF
chmod +x "$tmp/tools/venv/bin/vng"
vm_run() { TOOLS_PREFIX=$tmp/tools "$top/scripts/vm-run" --kdir "$tmp/kdir" "$@"; }

vm_run sh -c 'echo out-line-1; echo err-line-1 >&2; echo out-line-2; echo err-line-2 >&2; exit 3' \
	>"$tmp/log" 2>&1
rc=$?
[ $rc -eq 3 ] || { echo "FAIL: exit status $rc, not the command's 3"; exit 1; }
for l in out-line-1 out-line-2 err-line-1 err-line-2; do
	grep -qx "$l" "$tmp/log" || {
		echo "FAIL: '$l' lost from the log:"
		cat "$tmp/log"
		exit 1
	}
done

# The streams stay apart when they go to different places.
vm_run sh -c 'echo to-out; echo to-err >&2' >"$tmp/out" 2>"$tmp/err"
[ "$(cat "$tmp/out")" = to-out ] && [ "$(cat "$tmp/err")" = to-err ] || {
	echo "FAIL: stdout '$(cat "$tmp/out")', stderr '$(cat "$tmp/err")'"
	exit 1
}

# At the limit, what vng started dies with it: QEMU is vng's grandchild,
# as the command is the stand-in's. Had it survived, it would have held
# the pipes and vm-run until it finished, and left the marker.
vm_run --timeout 1 sh -c "echo \$\$ > $tmp/pid; sleep 60; touch $tmp/finished" >/dev/null 2>&1
rc=$?
[ $rc -eq 124 ] || { echo "FAIL: exit status $rc at the limit, not 124"; exit 1; }
[ ! -e "$tmp/finished" ] || { echo "FAIL: the command ran to its end past the limit"; exit 1; }
# Gone, or dead and not yet reaped (a zombie: whoever adopted it reaps it).
state=$(awk '{ print $3 }' "/proc/$(cat "$tmp/pid")/stat" 2>/dev/null)
[ -z "$state" ] || [ "$state" = Z ] || { echo "FAIL: the command outlived the limit (state $state)"; exit 1; }
echo "ok: vm-run keeps the guest's stdout and stderr whole and stops it at the limit"
