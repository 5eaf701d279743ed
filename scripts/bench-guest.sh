#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of `make bench`: how long after `ip` returns does
# `dranet-sec slice --watch` print the slice that says so? 100 SecY flips
# per command on an offloaded SecY (TX SA off/on, then encrypt off/on; each
# flips macsecEgress), next to DRANet's own bounds.
#
#   scripts/bench-guest.sh MODULE.ko DRANET-SEC [FLIPS]
set -eu
ko=$1
bin=$2
flips=${3:-100}
top=$(cd "$(dirname "$0")/.." && pwd)
KSFT_DIR=$(mktemp -d)
export KSFT_DIR
# lib.sh wants the kselftest helpers; the bench needs only its netdevsim ones.
touch "$KSFT_DIR/ktap_helpers.sh"
# shellcheck source=/dev/null
. "$top/selftests/drivers/net/macsec_bridge/lib.sh"

insmod_bridge "$ko"
nsim_pair
ip link add link "$NSIM_A" macsec0 type macsec port 4 encrypt on offload mac
ip link set macsec0 up
rdma link add mb_rxe0 type rxe netdev macsec0
ip macsec add macsec0 tx sa 0 pn 1 on key 01 $MB_KEY

/usr/bin/python3 - "$bin" "$flips" <<'PY'
import json, statistics, subprocess, sys, time

binary, flips = sys.argv[1], int(sys.argv[2])
domain = "macsec.dranet-sec.io"
watch = subprocess.Popen([binary, "slice", "--node", "bench", "--output", "json", "--watch"],
                         stdout=subprocess.PIPE, text=True)

def egress(line):
    for d in json.loads(line)["spec"]["devices"]:
        a = d["attributes"]
        if a.get("dra.net/ifName", {}).get("string") == "macsec0":
            return a[domain + "/macsecEgress"]["bool"]
    return None

start = egress(watch.stdout.readline())
assert start is True, f"start: macsecEgress {start}"

# Each flip is one command that turns hardware protection off or on.
FLIPS = {
    "ip macsec set macsec0 tx sa 0 on/off":
        lambda on: ["ip", "macsec", "set", "macsec0", "tx", "sa", "0", "on" if on else "off"],
    "ip link set macsec0 type macsec encrypt on/off":
        lambda on: ["ip", "link", "set", "macsec0", "type", "macsec",
                    "encrypt", "on" if on else "off"],
}

def flip(argv, want):
    """Run one flip; its time (ms) and the time until the slice says so."""
    t_start = time.monotonic()
    subprocess.run(argv(want), check=True)
    t_ret = time.monotonic()
    while egress(watch.stdout.readline()) != want:
        pass
    t_seen = time.monotonic()
    return (t_ret - t_start) * 1000, (t_seen - t_ret) * 1000

results = {}
for name, argv in FLIPS.items():
    # From protected: off, on, off, ...
    times = [flip(argv, i % 2 == 1) for i in range(flips)]
    results[name] = ([c for c, _ in times], [a for _, a in times])
    # An odd FLIPS ends unprotected; start the next command protected.
    if flips % 2:
        flip(argv, True)
watch.kill()

def row(name, cmd, xs):
    xs = sorted(xs)
    p99 = xs[min(len(xs) - 1, int(round(0.99 * (len(xs) - 1))))]
    return (f"| {name} | {statistics.median(cmd):.1f} ms | {statistics.median(xs):.1f} ms"
            f" | {p99:.1f} ms | {xs[-1]:.1f} ms |")

print()
print(f"{flips} SecY flips per command, netdevsim offload, TCG guest,")
print("time from the command returning to `dranet-sec slice --watch` printing")
print("the slice whose macsecEgress says so")
print()
print("| flip | command itself (median) | to updated slice: median | p99 | max |")
print("|---|---|---|---|---|")
for name, (cmd, after) in results.items():
    print(row(f"`{name}`", cmd, after))
print("| DRANet alone: rescan after a link event (rate limit) | | 2 s | | |")
print("| DRANet alone: rescan without an event (poll) | | 60 s | | |")
PY
