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
moved by the bandwidth tests. Prints the table of each figure, then the
ratios against plaintext and of module loaded to unloaded.

    eval.py MODULE.ko DRANET-SEC
ITERS scales the iteration counts (default 1).
"""

import os
import re
import subprocess
import sys
import time

KO, BIN = sys.argv[1], sys.argv[2]
SCALE = float(os.environ.get("ITERS", "1"))
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
                return [float(x) for x in f[2:]], cpu
        time.sleep(1)
    raise RuntimeError(f"{tool} -s {size}: no result:\n{out}")


def measure():
    r = {}
    for tool in ("ib_write_bw", "ib_send_bw"):
        for s in SIZES:
            n = max(5, int(BW_ITERS[s] * SCALE))
            f, cpu = perftest(tool, s, n)
            # #bytes #iterations BW-peak BW-average MsgRate
            r[f"{tool} {s}"] = f[1]
            r.setdefault("cpu", []).append((cpu, s * n))
    for s in SIZES:
        n = max(5, int(LAT_ITERS[s] * SCALE))
        f, _ = perftest("ib_send_lat", s, n)
        # t_min t_max t_typical t_avg t_stdev p99 p99.9
        r[f"lat {s}"] = f[2]
        r[f"p99 {s}"] = f[5]
    cpu = r.pop("cpu")
    r["cpu s/GB"] = sum(c for c, _ in cpu) / (sum(b for _, b in cpu) / 1e9)
    return r


def run(name, cipher, module, audit=False):
    if module:
        sh(f"insmod {KO}")
    setup(cipher)
    mon = None
    try:
        if audit:
            mon = subprocess.Popen(["ip", "netns", "exec", "pa", BIN, "audit", "va"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            # It says so once the program is attached, or exits.
            line = mon.stderr.readline()
            if "audit: on va" not in line:
                raise RuntimeError(f"audit: {line}{mon.stderr.read()}")
        if module:
            ports = sh(f"ip netns exec pa {BIN} status")
            if ("maca" if cipher else "va") not in ports:
                raise RuntimeError(f"the module does not track pod A's port:\n{ports}")
        res = measure()
    finally:
        if mon is not None:
            mon.terminate()
            res_audit, _ = mon.communicate(timeout=60)
        teardown()
        if module:
            sh("rmmod macsec_bridge", check=False)
    if audit:
        m = re.search(r"^va\s+egress\s+(\d+)", res_audit, re.M)
        res["audited RoCE frames"] = int(m.group(1)) if m else -1
    print(f"# {name}: " + ", ".join(f"{k} {v:.4g}" for k, v in res.items()), flush=True)
    return res


def main():
    sh("modprobe -a ib_core macsec rdma_rxe")
    rows = {}
    for cipher in [None, *CIPHERS]:
        label = cipher or "plaintext"
        rows[label] = run(label, cipher, False)
        rows[label + " +module"] = run(label + " +module", cipher, True)
    rows["plaintext +audit"] = run("plaintext +audit", None, False, audit=True)

    cols = [k for k in rows["plaintext"]]
    w = max(len(r) for r in rows) + 2

    def table(title, data, fmt):
        print(f"\n{title}")
        print("| " + " | ".join(["configuration"] + cols) + " |")
        print("|" + "---|" * (len(cols) + 1))
        for name, r in data.items():
            print("| " + " | ".join([name] + [fmt(r.get(c)) for c in cols]) + " |")

    table("Measured (MB/s; latency and p99 in us; CPU s per GB moved):", rows,
          lambda v: "-" if v is None else f"{v:.4g}")
    ratio = {}
    for name, r in rows.items():
        base = rows["plaintext +module" if name.endswith("+module") else "plaintext"]
        if name not in ("plaintext", "plaintext +module"):
            ratio[name] = {c: r[c] / base[c] if base[c] else None for c in cols}
    table("Against plaintext in the same run (same module state):", ratio,
          lambda v: "-" if v is None else f"{v:.3f}")
    loaded = {}
    for cipher in [None, *CIPHERS]:
        label = cipher or "plaintext"
        a, b = rows[label + " +module"], rows[label]
        loaded[label] = {c: a[c] / b[c] if b[c] else None for c in cols}
    table("Module loaded / unloaded (goal 0.99 to 1.01 for bandwidth):", loaded,
          lambda v: "-" if v is None else f"{v:.3f}")
    print(f"\naudit: {rows['plaintext +audit'].get('audited RoCE frames')} cleartext RoCE "
          "frames counted on pod A's wire egress while attached")


if __name__ == "__main__":
    main()
