#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Guest side of `make eval`: what MACsec costs RDMA, and what the bridge
and the audit cost it.

Two pod namespaces, each with its own RXE device, over a veth wire:
plaintext (RXE on the veth), then software MACsec with GCM-AES-128,
GCM-AES-256 and GCM-AES-XPN-256 (RXE on the MACsec netdev); each without
and with macsec_bridge loaded and tracking the ports; and plaintext once
more with `dranet-sec audit` attached to pod A's wire. For each:
ib_write_bw and ib_send_bw (average MB/s) and ib_send_lat (median and
p99, us) at 64 B, 4 KiB and 64 KiB, with the guest's CPU time per GB
moved by the bandwidth tests. The states of one topology (module
unloaded, unloaded again, loaded; audit attached) take turns for each
figure, REPS times (default 3), and the medians are kept. Prints the
table of each figure, then the ratios against plaintext, of unloaded to
unloaded again (the noise floor: nothing differs between the two), of
module loaded to unloaded, and of audit attached to not. While the module
is loaded, its macsec_bridge_update tracepoint counts the work it did
during the traffic (every netdev event it acts on, SecY operation it
sees and request it answers is one).

    eval.py MODULE.ko DRANET-SEC
ITERS scales the iteration counts (default 0.25).
"""

import math
import os
import re
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '../selftests/net/macsec_bridge'))
from scale import EVENT, TRACING, trace  # noqa: E402

KO, BIN = sys.argv[1], sys.argv[2]
SCALE = float(os.environ.get("ITERS", "0.25"))
REPS = int(os.environ.get("REPS", "3"))
SIZES = [64, 4096, 65536]
# Iterations per size: a few seconds each under TCG.
BW_ITERS = {64: 2000, 4096: 1000, 65536: 200}
LAT_ITERS = {64: 500, 4096: 300, 65536: 100}
KEY128 = "0123456789abcdef0123456789abcdef"
KEY256 = KEY128 * 2
SALT = "0123456789abcdef01234567"
CIPHERS = {
    "gcm-aes-128": KEY128,
    "gcm-aes-256": KEY256,
    "gcm-aes-xpn-256": KEY256,
}


def sh(cmd, check=True, **kw):
    return subprocess.run(cmd, shell=True, check=check, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, **kw).stdout


def setup(cipher):
    """Pods pa and pb, the wire va-vb, RXE devices rxea and rxeb on the
    devices that carry 10.9.0.1 and 10.9.0.2."""
    sh("ip netns add pa; ip netns add pb")
    sh("ip link add va netns pa type veth peer name vb netns pb")
    for ns in ("pa", "pb"):
        sh(f"ip -n {ns} link set lo up")
    mac = {ns: sh(f"ip netns exec {ns} cat /sys/class/net/{d}/address").strip()
           for ns, d in (("pa", "va"), ("pb", "vb"))}
    for ns, wire, dev, addr, me, peer, ssci, pssci in (
            ("pa", "va", "maca", "10.9.0.1", "01", "02", 1, 2),
            ("pb", "vb", "macb", "10.9.0.2", "02", "01", 2, 1)):
        other = mac["pb" if ns == "pa" else "pa"]
        sh(f"ip -n {ns} link set {wire} up")
        if cipher is None:
            dev = wire
        else:
            key = CIPHERS[cipher]
            xpn = "xpn" in cipher
            tx = f"ssci {ssci} salt {SALT} " if xpn else ""
            rx = f"ssci {pssci} salt {SALT} " if xpn else ""
            pn = "xpn 1" if xpn else "pn 1"
            sh(f"ip -n {ns} link add link {wire} {dev} type macsec port 1 encrypt on cipher {cipher}")
            sh(f"ip -n {ns} macsec add {dev} tx sa 0 {pn} on {tx}key {me} {key}")
            sh(f"ip -n {ns} macsec add {dev} rx port 1 address {other}")
            sh(f"ip -n {ns} macsec add {dev} rx port 1 address {other} sa 0 {pn} on {rx}key {peer} {key}")
        sh(f"ip -n {ns} addr add {addr}/24 dev {dev}")
        sh(f"ip -n {ns} link set {dev} up")
        sh(f"ip netns exec {ns} rdma link add rxe{ns[1]} type rxe netdev {dev}")


def teardown():
    sh("rdma link del rxea; rdma link del rxeb; ip netns del pa; ip netns del pb", check=False)
    # RXE devices go with their netdevs; wait until they are gone.
    for _ in range(100):
        if not os.path.exists("/sys/class/infiniband/rxea") and \
                not os.path.exists("/sys/class/infiniband/rxeb"):
            return
        time.sleep(0.1)


def busy():
    """CPU seconds spent outside idle and iowait, all CPUs."""
    v = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    return (sum(v) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")


def perftest(tool, size, iters):
    """The client's result line, split; the server runs in pod B."""
    args = f"-R -F -s {size} -n {iters}"
    for _ in range(60):
        srv = subprocess.Popen(f"ip netns exec pb {tool} -d rxeb {args}", shell=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1)
        t0 = busy()
        out = sh(f"ip netns exec pa timeout 300 {tool} -d rxea {args} 10.9.0.2", check=False)
        cpu = busy() - t0
        try:
            srv.wait(timeout=30)
        except subprocess.TimeoutExpired:
            srv.kill()
            srv.wait()
        for line in out.splitlines():
            f = line.split()
            if len(f) >= 5 and f[0] == str(size) and f[1] == str(iters):
                vals = [float(x) for x in f[2:]]
                # ib_send_lat prints inf when TCG's clock misleads it, and
                # the bandwidth tests now and then an average of 0.00: a
                # figure to take again, never to keep.
                if all(math.isfinite(v) for v in vals) and \
                        (tool == "ib_send_lat" or vals[1] > 0):
                    return vals, cpu
        time.sleep(1)
    raise RuntimeError(f"{tool} -s {size}: no result:\n{out}")


def metrics():
    """(name, tool, size, iterations) of every figure but CPU."""
    out = []
    for tool in ("ib_write_bw", "ib_send_bw"):
        for sz in SIZES:
            out.append((f"{tool} {sz}", tool, sz, max(5, int(BW_ITERS[sz] * SCALE))))
    for sz in SIZES:
        out.append((f"lat {sz}", "ib_send_lat", sz, max(5, int(LAT_ITERS[sz] * SCALE))))
    return out


NAMES = {"off": "", "again": " again", "module": " +module", "audit": " +audit"}


class State:
    """What runs beside the RDMA traffic: nothing (off, and again), the
    module (loaded, and tracking pod A's port), or the audit on pod A's
    wire. `seen` is what the audit counted (cleartext RoCE frames out of
    pod A), or the module's updates during the traffic and their ns."""

    def __init__(self, kind, port):
        self.kind, self.port, self.mon, self.seen = kind, port, None, 0

    def __enter__(self):
        if self.kind == "module":
            sh(f"insmod {KO}")
            ports = sh(f"ip netns exec pa {BIN} status")
            if self.port not in ports:
                raise RuntimeError(f"the module does not track {self.port}:\n{ports}")
            # From here on, every update the module makes is an event.
            with open(EVENT, "w") as f:
                f.write("1")
            trace()
        elif self.kind == "audit":
            self.mon = subprocess.Popen(["ip", "netns", "exec", "pa", BIN, "audit", "va"],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            # It says so once the program is attached, or exits.
            line = self.mon.stderr.readline()
            if "audit: on va" not in line:
                raise RuntimeError(f"audit: {line}{self.mon.stderr.read()}")
        return self

    def __exit__(self, *exc):
        if self.kind == "module":
            during = trace()
            # A dump is an update: the count means something only if the
            # tracepoint records one.
            sh(f"ip netns exec pa {BIN} status")
            if not trace():
                raise RuntimeError("macsec_bridge_update recorded no dump")
            with open(EVENT, "w") as f:
                f.write("0")
            self.seen = (len(during), sum(e["ns"] for e in during))
            sh("rmmod macsec_bridge", check=False)
        elif self.mon is not None:
            self.mon.terminate()
            out, _ = self.mon.communicate(timeout=60)
            m = re.search(r"^va\s+egress\s+(\d+)", out, re.M)
            self.seen = int(m.group(1)) if m else -1


def config(label, cipher, kinds, rows, seen):
    """Every figure in each state of `kinds`, on one topology: the states
    take turns for each figure, REPS times, in an order that alternates,
    so that drift over the run falls on all of them alike; the median of
    the repeats is kept."""
    setup(cipher)
    port = "maca" if cipher else "va"
    got = {k: {} for k in kinds}
    cpu = {k: [] for k in kinds}
    try:
        for name, tool, sz, n in metrics():
            for rep in range(REPS):
                for kind in (kinds if rep % 2 == 0 else kinds[::-1]):
                    with State(kind, port) as st:
                        f, c = perftest(tool, sz, n)
                    if kind in ("audit", "module"):
                        seen[kind].append(st.seen)
                    if tool == "ib_send_lat":
                        # t_min t_max t_typical t_avg t_stdev p99 p99.9
                        got[kind].setdefault(name, []).append(f[2])
                        p99 = f"p99 {sz}"
                        got[kind].setdefault(p99, []).append(f[5])
                    else:
                        # BW-peak BW-average MsgRate
                        got[kind].setdefault(name, []).append(f[1])
                        cpu[kind].append((c, sz * n))
    finally:
        teardown()
    for kind in kinds:
        r = {k: statistics.median(v) for k, v in got[kind].items()}
        r["cpu s/GB"] = sum(c for c, _ in cpu[kind]) / (sum(b for _, b in cpu[kind]) / 1e9)
        name = label + NAMES[kind]
        rows[name] = r
        print(f"# {name}: " + ", ".join(f"{k} {v:.4g}" for k, v in r.items()), flush=True)


def main():
    sh("modprobe -a ib_core macsec rdma_rxe")
    if not os.path.exists(f"{TRACING}/trace"):
        sh(f"mount -t tracefs nodev {TRACING}")
    rows, seen = {}, {"audit": [], "module": []}
    config("plaintext", None, ["off", "again", "module", "audit"], rows, seen)
    for cipher in CIPHERS:
        config(cipher, cipher, ["off", "again", "module"], rows, seen)

    cols = list(rows["plaintext"])

    def table(title, data):
        print(f"\n{title}")
        print("| " + " | ".join(["configuration"] + cols) + " |")
        print("|" + "---|" * (len(cols) + 1))
        for name, r in data.items():
            print("| " + " | ".join([name] + [f"{r[c]:.4g}" for c in cols]) + " |")

    def ratio(a, b):
        return {c: a[c] / b[c] if b[c] else float("nan") for c in cols}

    print(f"\n{REPS} repeats of each figure, medians; ITERS={SCALE}")
    table("Measured (MB/s; latency and p99 in us; CPU s per GB moved):", rows)
    table("Against plaintext in the same run (module unloaded):",
          {c: ratio(rows[c], rows["plaintext"]) for c in CIPHERS})
    table("Unloaded / unloaded again (the noise floor: the two states are the same):",
          {c: ratio(rows[c], rows[c + " again"]) for c in ["plaintext", *CIPHERS]})
    table("Module loaded / unloaded (goal: 0.99 or better for bandwidth):",
          {c: ratio(rows[c + " +module"], rows[c]) for c in ["plaintext", *CIPHERS]})
    table("Audit attached / not (plaintext):",
          {"plaintext": ratio(rows["plaintext +audit"], rows["plaintext"])})
    audited = seen["audit"]
    print(f"\naudit: cleartext RoCE frames counted on pod A's wire egress per attachment: "
          f"min {min(audited)}, max {max(audited)}")
    work = seen["module"]
    print(f"module: updates during the traffic, over {len(work)} loaded runs: "
          f"{sum(n for n, _ in work)} ({sum(t for _, t in work)} ns in all)")


if __name__ == "__main__":
    main()
