#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of `make bench`: how long after `ip` returns does
# `dranet-sec slice --watch` print the slice that says so? 100 SecY flips
# per command on an offloaded SecY (TX SA off/on, then encrypt off/on; each
# flips macsecEgress), next to DRANet's own bounds. Then 100 teardowns
# (the encoding SA deactivated) and restorations: how long from the
# command's start until the taint appears in (and leaves) the
# `slice --watch` stream and the `taint-rules --watch` directory.
#
# First, scripts/bench-scale.py: the bridge's own cost per event at 16, 128
# and 1,024 ports, for this module and, if given, earlier ones (BASES:
# `label=path,...`).
#
# and DRANet-Sec's cost at each size, for each binary of DRANETS
# (`label=path,...`): a SecY flip to the slice that shows it, and a
# webhook request.
#
#   scripts/bench-guest.sh MODULE.ko DRANET-SEC [FLIPS [SIZES [BASES [DRANETS]]]]
set -eu
ko=$1
bin=$2
flips=${3:-100}
sizes=${4:-16,128,1024,16}
IFS=, read -ra bases <<<"${5:-}"
dranets=${6:-after=$bin}
top=$(cd "$(dirname "$0")/.." && pwd)
KSFT_DIR=$(mktemp -d)
export KSFT_DIR
# lib.sh wants the kselftest helpers; the bench needs only its netdevsim ones.
touch "$KSFT_DIR/ktap_helpers.sh"
# shellcheck source=/dev/null
. "$top/selftests/net/macsec_bridge/lib.sh"

modprobe -a ib_core macsec
nsim_pair
ip link add link "$NSIM_A" macsec0 type macsec port 4 encrypt on offload mac
ip link set macsec0 up
rdma link add mb_rxe0 type rxe netdev macsec0
ip macsec add macsec0 tx sa 0 pn 1 on key 01 $MB_KEY

/usr/bin/python3 "$top/scripts/bench-scale.py" --sizes "$sizes" --dranet "$dranets" macsec0 \
	"${bases[@]}" "after=$ko"

insmod "$ko"
# macsec0 was made before this load: a key change (TX SA 1 made afresh,
# then made the encoding SA) shows it to the module and settles what its
# driver holds. The flips and teardowns then work on SA 1.
ip macsec add macsec0 tx sa 1 pn 1 on key 02 $MB_KEY
ip link set macsec0 type macsec encodingsa 1

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
    "ip macsec set macsec0 tx sa 1 on/off":
        lambda on: ["ip", "macsec", "set", "macsec0", "tx", "sa", "1", "on" if on else "off"],
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

# Taints: both watchers run at once; a thread per stream stamps each line
# as it arrives, so neither reader delays the other's measurement.
import os, queue, tempfile, threading

rules_dir = tempfile.mkdtemp()
rule = "dranet-sec.bench.macsec0"
procs = {
    "slice": subprocess.Popen([binary, "slice", "--node", "bench", "--output", "json", "--watch"],
                              stdout=subprocess.PIPE, text=True),
    "rules": subprocess.Popen([binary, "taint-rules", "--node", "bench", "--dir", rules_dir,
                               "--watch", "--output", "json"], stdout=subprocess.PIPE, text=True),
}
lines = {k: queue.Queue() for k in procs}
def reader(k):
    for line in procs[k].stdout:
        lines[k].put((time.monotonic(), line))
for k in procs:
    threading.Thread(target=reader, args=(k,), daemon=True).start()

def tainted(line):
    for d in json.loads(line)["spec"]["devices"]:
        if d["attributes"].get("dra.net/ifName", {}).get("string") == "macsec0":
            return any(t["key"] == domain + "/unprotected" for t in d.get("taints", []))
    return None

def wait(k, pred):
    """The arrival time of the first line of stream k for which pred holds."""
    while True:
        t, line = lines[k].get(timeout=60)
        if pred(line):
            return t

def rule_event(kind):
    return lambda line: json.loads(line)["event"] == kind and json.loads(line)["name"] == rule

# Protected at the start: the first slice untainted, no rule.
wait("slice", lambda l: tainted(l) is False)
taint = {"slice: taint appears": [], "rules: rule created": [],
         "slice: taint gone": [], "rules: rule deleted": []}
for _ in range(flips):
    t0 = time.monotonic()
    subprocess.run(["ip", "macsec", "set", "macsec0", "tx", "sa", "1", "off"], check=True)
    taint["slice: taint appears"].append((wait("slice", lambda l: tainted(l) is True) - t0) * 1000)
    taint["rules: rule created"].append((wait("rules", rule_event("create")) - t0) * 1000)
    assert os.path.exists(os.path.join(rules_dir, rule + ".yaml"))
    t0 = time.monotonic()
    subprocess.run(["ip", "macsec", "set", "macsec0", "tx", "sa", "1", "on"], check=True)
    taint["slice: taint gone"].append((wait("slice", lambda l: tainted(l) is False) - t0) * 1000)
    taint["rules: rule deleted"].append((wait("rules", rule_event("delete")) - t0) * 1000)
    assert not os.path.exists(os.path.join(rules_dir, rule + ".yaml"))
for p in procs.values():
    p.kill()

def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]

print()
print(f"{flips} teardowns (`ip macsec set macsec0 tx sa 1 off`) and restorations")
print("(`... on`), time from the command's start to the taint in the")
print("`slice --watch` stream and to the rule in the `taint-rules --watch` directory")
print()
print("| event | median | p99 | max |")
print("|---|---|---|---|")
for name, xs in taint.items():
    print(f"| {name} | {statistics.median(xs):.1f} ms | {pct(xs, 0.99):.1f} ms | {max(xs):.1f} ms |")
print("| DRANet alone: taints | never | | |")
PY
