#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Guest side of `make bench`, at scale: what the bridge costs per event
with P = 16, 128 and 1,024 ports, measured inside the kernel.

    bench-scale.py [--sizes 16,128,1024,16] [--dranet LABEL=BIN,...] SECY LABEL=MODULE.ko...

For each size, in the order given, it grows or shrinks the topology to P
veths (peers in another namespace), each carrying a software MACsec
netdev: P SecYs, 3P netdevs; the veths go in pairs, each SecY on the
partner of the veth it is for (a SecY over the port itself is refused by
`bind`). SECY is an offloaded MACsec netdev that already exists with
an RXE device on it (one port). Then, for each module given (LABEL=path,
e.g. before=... after=...), on the same topology, it loads the module,
binds each veth to its own MACsec netdev (P more ports, relation
`bound`), and reads:

  - load: the module's own figure (`loaded: N ports, M SecYs, in X us`),
    with every netdev and SecY present and one port; the P veths are
    bound after it, a binding not surviving an unload;
  - bind: the kernel time of binding all P ports, one request each;
  - memory: Slab + VmallocUsed (/proc/meminfo) after the load (the
    SecYs tracked) and once all are bound (the ports too), each minus
    before the load;
  - per event: the `macsec_bridge_update` tracepoint's `ns` (the kernel
    time from entry into the bridge to return, feature writes and
    notifications included), `visited` (port objects recomputed) and
    `probes` (slots of the module's hash tables examined: its work in a
    unit that the guest's speed does not change), for
    (a) netdev events on devices the bridge does not track (a dummy made,
    flapped and deleted in a pod namespace), (b) link events on one port's
    SecY (`ip link set SECY0 down/up`), (c) offload operations on SECY
    (`ip macsec set SECY tx sa 0 off/on`: before and after the driver,
    summed per operation);
  - dump: the kernel time of a whole `dev-get` dump (its rounds and
    re-reads), from the same tracepoint;
  - delivery: from sending an RTM_NEWLINK that takes SECY0 down or up to
    receiving the `dev-change-ntf` it causes (user space: a socket each);
  - events elsewhere, a measure the module does not report: the wall time,
    in user space, of one up-down pair of a dummy in a namespace of its own
    (the fastest of 9 rounds of 50 pairs: noise only adds), before the
    load and once every port is bound. The notifier chain runs before the
    request's ack, so work the module does per event is in that time
    whatever its tracepoint counts.

(Ports backed by RXE devices would be present at load, but TCG makes an
RXE device in about 1.4 s, and every new netdev makes the RDMA core look
at every RoCE port: 1,024 of them take most of an hour to make.)

With --dranet, at each size and with the last module loaded and every
port bound, each DRANet-Sec binary in turn runs `slice --watch` while the
SecY of the middle port goes down and up 20 times (ms from the
RTM_NEWLINK's ack to the line that shows the port's new reason, and its
CPU time per new set of slices, from /proc), then serves 20 webhook
GetDeviceAttributes requests about that port.

It prints one table with a column per module and size, one of the ratios
between the largest and the smallest size, per module, and the whole as
JSON lines on stdout (prefixed `json:`). A size given twice is measured
twice: the default measures 16 ports again after 1,024, and a ratio then
divides by the mean of the two, which cancels a drift of the guest's
speed that is linear in time (TCG's drifts by up to 1.7 times within a
run); how far the two disagree is printed beside it.
"""
import os
import re
import socket
import statistics
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '../selftests/net/macsec_bridge'))
import mb_genl  # noqa: E402
from scale import ifindex, link_set, trace  # noqa: E402

TRACING = '/sys/kernel/tracing'
EVENT = TRACING + '/events/macsec_bridge/macsec_bridge_update/enable'
# struct macsec_ops order, as Mdo numbers it: mdo_upd_txsa.
MDO_UPD_TXSA = 12
A_IFINDEX = 1


def sh(*argv, stdin=None):
    subprocess.run(argv, check=True, input=stdin, text=True,
                   stdout=subprocess.DEVNULL)


def batch(lines, tool='ip', ns=None):
    argv = [tool] + (['-n', ns] if ns else []) + ['-b', '-']
    sh(*argv, stdin='\n'.join(lines) + '\n')


def meminfo():
    out = {}
    with open('/proc/meminfo') as f:
        for line in f:
            k, v = line.split(':')
            out[k] = int(v.split()[0]) * 1024
    return out['Slab'] + out['VmallocUsed']


def write(path, value):
    with open(path, 'w') as f:
        f.write(value)


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def summary(xs):
    if not xs:
        raise RuntimeError('no samples')
    return {'median': statistics.median(xs), 'p99': pct(xs, 0.99), 'n': len(xs)}


def resize(have, p):
    """From HAVE veths to P: veths HAVE to P-1 made, each with a software
    SecY (their peers in namespace mbpeer), or veths P to HAVE-1 deleted
    (their peers and SecYs with them)."""
    if p < have:
        batch([f'link delete mbv{i}' for i in range(p, have)])
        return
    new = range(have, p)
    if not have:
        sh('ip', 'netns', 'add', 'mbpeer')
    steps = [
        ('veth', lambda: batch([f'link add mbv{i} type veth peer name mbp{i} netns mbpeer'
                                for i in new])),
        ('peer up', lambda: batch([f'link set mbp{i} up' for i in new], ns='mbpeer')),
        ('macsec', lambda: batch([f'link set mbv{i} up' for i in new]
                                 + [f'link add link mbv{i ^ 1} name mbs{i} type macsec port 1 '
                                    'encrypt on' for i in new]
                                 + [f'link set mbs{i} up' for i in new])),
        ]
    for name, step in steps:
        t0 = time.monotonic()
        step()
        print(f'#   {name}: {time.monotonic() - t0:.1f} s', file=sys.stderr)


def teardown(p):
    batch([f'link delete mbv{i}' for i in range(p)])
    sh('ip', 'netns', 'delete', 'mbpeer')


def settled():
    """Slab + VmallocUsed once deferred frees have run their course."""
    sh('sync')
    write('/proc/sys/vm/drop_caches', '3')
    last = meminfo()
    for _ in range(20):
        time.sleep(0.5)
        now = meminfo()
        if abs(now - last) < 16384:
            return now
        last = now
    return last


def load(ko):
    sh('insmod', ko)
    log = subprocess.run(['dmesg'], check=True, capture_output=True, text=True).stdout
    m = re.findall(r'macsec_bridge: loaded: (\d+) ports, (\d+) SecYs, in (\d+) us', log)
    if not m:
        raise RuntimeError('no load line in the kernel log')
    return tuple(map(int, m[-1]))


def delivery(secy, port, reps):
    """ms from sending SECY up/down to the port's dev-change-ntf."""
    rt = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
    rt.bind((0, 0))
    mon = mb_genl.Genl()
    mon.join('monitor')
    want, idx = ifindex(port), ifindex(secy)
    out = []
    for i in range(reps):
        t0 = time.monotonic()
        link_set(rt, idx, i % 2 == 1)
        while True:
            got = [mb_genl.attrs(body[4:]) for kind, _, body in mon.messages(65536)
                   if kind == mon.family]
            if any(struct.unpack('I', a[A_IFINDEX])[0] == want for a in got):
                break
        out.append((time.monotonic() - t0) * 1000)
    link_set(rt, idx, True)
    rt.close()
    mon.sock.close()
    return out


# The whole of an entry, the time the state was locked (the bridge's own
# work), and the time its effects took once unlocked (notifications sent,
# feature bits written, and what the core does for them).
PARTS = ('ns', 'state_ns', 'apply_ns')


def parts(r, name, entries):
    """r[name], r[name + '_state'], r[name + '_apply']: the summaries
    of each part of `entries` (None for a part a module older than the
    split does not report)."""
    for k, suffix in zip(PARTS, ('', '_state', '_apply')):
        have = all(k in e for e in entries)
        r[name + suffix] = summary([e[k] for e in entries]) if have else None


def probes(r, name, entries):
    """r[name + '_probes']: the summary of the entries' `probes`, with
    their maximum (None for a module older than the count)."""
    have = all('probes' in e for e in entries)
    r[name + '_probes'] = None
    if have:
        r[name + '_probes'] = summary([e['probes'] for e in entries])
        r[name + '_probes']['max'] = max(e['probes'] for e in entries)


QUIET_FLAPS, QUIET_ROUNDS = 50, 9


def quiet_time(flaps, rounds):
    """Seconds per up-down pair of a dummy made in the namespace this runs
    in, without IPv6 (whose work on each up is not what is measured): the
    fastest of `rounds` rounds of `flaps` pairs."""
    for cmd in (['link', 'add', 'mbq0', 'type', 'dummy'],
                ['link', 'set', 'mbq0', 'addrgenmode', 'none']):
        sh('ip', *cmd)
    rt = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
    rt.bind((0, 0))
    idx = ifindex('mbq0')
    times = []
    try:
        for _ in range(rounds):
            start = time.perf_counter()
            for _ in range(flaps):
                link_set(rt, idx, True)
                link_set(rt, idx, False)
            times.append(time.perf_counter() - start)
    finally:
        rt.close()
        sh('ip', 'link', 'del', 'mbq0')
    return min(times) / flaps


def quiet_us():
    """quiet_time() in microseconds, in a namespace of its own."""
    sh('ip', 'netns', 'add', 'mbquiet')
    try:
        out = subprocess.run(['ip', 'netns', 'exec', 'mbquiet', sys.executable,
                              os.path.abspath(__file__), 'quiet-time'],
                             check=True, capture_output=True, text=True).stdout
    finally:
        sh('ip', 'netns', 'delete', 'mbquiet')
    return float(out) * 1e6


def measure(label, ko, p, secy, reps):
    r = {'module': label, 'ports': p}
    before = settled()
    r['quiet_none_us'] = quiet_us()
    ports, secys, us = load(ko)
    if ports != 1 or secys != p + 1:
        raise RuntimeError(f'{label}: tracks {ports} ports and {secys} SecYs, not 1 and {p + 1}')
    r['load_us'] = us
    # The SecYs are tracked from the load on; the ports come with the binds.
    r['mem_load_bytes'] = meminfo() - before
    write(TRACING + '/buffer_size_kb', '8192')
    write(EVENT, '1')
    trace()
    g = mb_genl.Genl()
    for i in range(p):
        g.request(g.family, mb_genl.CMD_BIND, 0,
                  mb_genl.requests(ifindex(f'mbv{i}'), ifindex(f'mbs{i}'))[mb_genl.CMD_BIND])
    r['bind_us'] = sum(e['ns'] for e in trace() if e['cause'] == 'request') / 1000
    r['mem_bytes'] = meminfo() - before
    r['quiet_us'] = quiet_us()
    # The offloaded SecY, known: one operation shows it.
    sh('ip', 'macsec', 'set', secy, 'tx', 'sa', '0', 'on')
    trace()

    # (a) Events on devices the bridge does not track.
    sh('ip', 'netns', 'add', 'mbpod')
    batch(['link add mbd0 type dummy'] + ['link set mbd0 up', 'link set mbd0 down'] * reps
          + ['link delete mbd0'], ns='mbpod')
    sh('ip', 'netns', 'delete', 'mbpod')
    ev = [e for e in trace() if e['cause'] == 'event']
    parts(r, 'unrelated', ev)
    r['unrelated_visited'] = max(e['visited'] for e in ev)
    probes(r, 'unrelated', ev)

    # (b) Link events on one port's SecY.
    s0 = ifindex('mbs0')
    batch(['link set mbs0 down', 'link set mbs0 up'] * reps)
    ev = [e for e in trace() if e['cause'] == 'event' and e['ifindex'] == s0]
    parts(r, 'secy_event', ev)
    r['secy_event_visited'] = max(e['visited'] for e in ev)
    probes(r, 'secy_event', ev)

    # (c) Offload operations: before + after, per operation.
    batch([f'macsec set {secy} tx sa 0 off', f'macsec set {secy} tx sa 0 on'] * reps)
    ops = [e for e in trace() if e['cause'] in ('op-before', 'op-after')
           and e['code'] == MDO_UPD_TXSA]
    if len(ops) != 4 * reps:
        raise RuntimeError(f'{label}: {len(ops)} operation entries, not {4 * reps}')
    per_op = [{k: ops[i][k] + ops[i + 1][k] for k in PARTS + ('probes',) if k in ops[i]}
              for i in range(0, len(ops), 2)]
    parts(r, 'op', per_op)
    r['op_visited'] = max(e['visited'] for e in ops)
    probes(r, 'op', per_op)

    # A whole dump, ten times.
    dumps = []
    for _ in range(10):
        trace()
        got = g.ports()
        if len(got) != p + 1:
            raise RuntimeError(f'{label}: the dump has {len(got)} ports, not {p + 1}')
        rounds = [e for e in trace() if e['cause'] in ('dump', 'request')]
        # Each dump as one entry: its rounds summed.
        dumps.append({k: sum(e[k] for e in rounds) for k in ('ns', 'probes')
                      if all(k in e for e in rounds)})
    g.sock.close()
    r['dump'] = summary([d['ns'] for d in dumps])
    probes(r, 'dump', dumps)

    r['delivery_ms'] = summary(delivery('mbs0', 'mbv0', reps))
    write(EVENT, '0')
    sh('rmmod', 'macsec_bridge')
    return r


def cpu_s(pid):
    """User + system CPU seconds of process `pid`."""
    with open(f'/proc/{pid}/stat') as f:
        fields = f.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


class Lines:
    """The lines of a process's stdout, each with its arrival time, read
    by a thread so that waiting for one never delays the stamp of the
    next."""

    def __init__(self, proc):
        import queue
        import threading
        self.q = queue.Queue()
        threading.Thread(target=self._read, args=(proc,), daemon=True).start()

    def _read(self, proc):
        for line in proc.stdout:
            self.q.put((time.monotonic(), line))

    def get(self):
        return self.q.get(timeout=600)


def reason_in(line, port, domain='macsec.dranet-sec.io'):
    """The port's macsecReason in one slice line, or None if it is not in
    that slice; and the slice's (generation, resourceSliceCount)."""
    import json
    s = json.loads(line)
    pool = s['spec']['pool']
    for d in s['spec']['devices']:
        a = d['attributes']
        if a['dra.net/ifName']['string'] == port:
            return a[domain + '/macsecReason']['string'], pool
    return None, pool


def watch_flips(binary, p, reps):
    """`slice --watch` while the SecY of the middle port goes down and up:
    ms from the RTM_NEWLINK's ack to the line that shows the port's new
    reason, and CPU seconds per new set of slices."""
    port, secy = f'mbv{p // 2}', f'mbs{p // 2}'
    # The ports are veths, which `slice` leaves out as DRANet does unless
    # told otherwise; a binary from before that has no such option.
    usage = subprocess.run([binary, 'slice', '--help'], capture_output=True, text=True)
    veth = ['--include-veth'] if '--include-veth' in usage.stdout + usage.stderr else []
    proc = subprocess.Popen([binary, 'slice', '--node', 'bench', '--output', 'json', '--watch']
                            + veth, stdout=subprocess.PIPE, text=True)
    lines = Lines(proc)

    def until(pred):
        """Reads lines until one whose port reason `pred` accepts; then
        the rest of that set. Returns the accepting line's time."""
        seen, when, want = {}, None, None
        while True:
            t, line = lines.get()
            r, pool = reason_in(line, port)
            g = pool['generation']
            seen[g] = seen.get(g, 0) + 1
            if when is None and r is not None and pred(r):
                when, want = t, g
            if want is not None and seen[want] == pool['resourceSliceCount']:
                return when, seen

    t0 = time.monotonic()
    until(lambda r: True)
    first_ms = (time.monotonic() - t0) * 1000
    cpu0 = cpu_s(proc.pid)
    rt = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
    rt.bind((0, 0))
    idx = ifindex(secy)
    lat, sets = [], 0
    for i in range(reps):
        up = i % 2 == 1
        t0 = time.monotonic()
        link_set(rt, idx, up)
        when, seen = until((lambda r: r != 'secy-down') if up else (lambda r: r == 'secy-down'))
        lat.append((when - t0) * 1000)
        sets += len(seen)
    cpu = cpu_s(proc.pid) - cpu0
    proc.kill()
    proc.wait()
    rt.close()
    return {'first_ms': first_ms, 'flip_ms': summary(lat), 'sets': sets,
            'cpu_ms_per_set': cpu * 1000 / max(sets, 1)}


def webhook_asks(binary, p, reps):
    """The webhook: ms per GetDeviceAttributes for the middle port, as
    DRANet asks it about every device on every scan, and CPU ms per
    request."""
    import json
    import tempfile
    path = os.path.join(tempfile.mkdtemp(), 'hook.sock')
    proc = subprocess.Popen([binary, 'webhook', '--socket', path],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(600):
        if os.path.exists(path):
            break
        time.sleep(0.1)
    body = json.dumps({'name': f'mbv{p // 2}'}).encode()
    req = (b'POST /GetDeviceAttributes HTTP/1.1\r\nHost: x\r\nConnection: close\r\n'
           b'Content-Type: application/json\r\nContent-Length: %d\r\n\r\n' % len(body)) + body
    lat = []
    cpu0 = cpu_s(proc.pid)
    for _ in range(reps):
        t0 = time.monotonic()
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(path)
        s.sendall(req)
        got = b''
        while True:
            b = s.recv(65536)
            if not b:
                break
            got += b
        s.close()
        lat.append((time.monotonic() - t0) * 1000)
        if not got.startswith(b'HTTP/1.1 200') or b'macsecReason' not in got:
            raise RuntimeError(f'webhook: {got[:200]!r}')
    cpu = cpu_s(proc.pid) - cpu0
    proc.kill()
    proc.wait()
    return {'ask_ms': summary(lat), 'cpu_ms_per_ask': cpu * 1000 / reps}


def dranet(bins, ko, p, reps):
    """DRANet-Sec at P ports: each binary in turn, on the module `ko`
    loaded with every port bound."""
    load(ko)
    g = mb_genl.Genl()
    for i in range(p):
        g.request(g.family, mb_genl.CMD_BIND, 0,
                  mb_genl.requests(ifindex(f'mbv{i}'), ifindex(f'mbs{i}'))[mb_genl.CMD_BIND])
    g.sock.close()
    out = []
    for label, binary in bins:
        r = {'dranet': label, 'ports': p}
        r.update(watch_flips(binary, p, reps))
        r.update(webhook_asks(binary, p, reps))
        out.append(r)
        print('json:', r, flush=True)
    sh('rmmod', 'macsec_bridge')
    return out


DRANET_ROWS = [
    ('`slice --watch`: first set of slices', lambda r: f"{r['first_ms']:.0f} ms"),
    ('`slice --watch`: SecY flip to the slice that shows it (median / p99)',
     lambda r: f"{r['flip_ms']['median']:.0f} / {r['flip_ms']['p99']:.0f} ms"),
    ('`slice --watch`: CPU per new set of slices', lambda r: f"{r['cpu_ms_per_set']:.0f} ms"),
    ('webhook: GetDeviceAttributes for one port (median / p99)',
     lambda r: f"{r['ask_ms']['median']:.1f} / {r['ask_ms']['p99']:.1f} ms"),
    ('webhook: CPU per request', lambda r: f"{r['cpu_ms_per_ask']:.1f} ms"),
]


def fmt_ns(s):
    if s is None:
        return '-'
    return f"{s['median'] / 1000:.1f} / {s['p99'] / 1000:.1f} us"


def fmt_probes(s):
    return '-' if s is None else f"{s['median']:.0f} / {s['max']}"


ROWS = [
    ('event on an untracked netdev (median / p99)', lambda r: fmt_ns(r['unrelated'])),
    ('  of which the state locked', lambda r: fmt_ns(r['unrelated_state'])),
    ('  of which effects applied', lambda r: fmt_ns(r['unrelated_apply'])),
    ('  ports recomputed per such event (max)', lambda r: str(r['unrelated_visited'])),
    ('  slots of the tables examined (median / max)', lambda r: fmt_probes(r['unrelated_probes'])),
    ("link event on one port's SecY", lambda r: fmt_ns(r['secy_event'])),
    ('  of which the state locked', lambda r: fmt_ns(r['secy_event_state'])),
    ('  of which effects applied', lambda r: fmt_ns(r['secy_event_apply'])),
    ('  ports recomputed per such event (max)', lambda r: str(r['secy_event_visited'])),
    ('  slots of the tables examined (median / max)',
     lambda r: fmt_probes(r['secy_event_probes'])),
    ('offload operation, before + after the driver', lambda r: fmt_ns(r['op'])),
    ('  of which the state locked', lambda r: fmt_ns(r['op_state'])),
    ('  of which effects applied', lambda r: fmt_ns(r['op_apply'])),
    ('  ports recomputed per update (max)', lambda r: str(r['op_visited'])),
    ('  slots of the tables examined (median / max)', lambda r: fmt_probes(r['op_probes'])),
    ('module load (netdevs and SecYs present)', lambda r: f"{r['load_us'] / 1000:.1f} ms"),
    ('binding all ports (sum over requests)', lambda r: f"{r['bind_us'] / 1000:.1f} ms"),
    ('full dev-get dump (median)', lambda r: f"{r['dump']['median'] / 1000:.1f} us"),
    ('  slots of the tables examined (median / max)',
     lambda r: fmt_probes(r['dump_probes'])),
    ('op to dev-change-ntf, user space (median)',
     lambda r: f"{r['delivery_ms']['median']:.2f} ms"),
    ('memory, loaded (Slab + VmallocUsed)',
     lambda r: f"{r['mem_load_bytes'] / 1024:.0f} KiB"),
    ('memory, loaded and bound (Slab + VmallocUsed)',
     lambda r: f"{r['mem_bytes'] / 1024:.0f} KiB"),
    ('dummy up-down pair elsewhere, user space: before the load / bound',
     lambda r: f"{r['quiet_none_us']:.0f} / {r['quiet_us']:.0f} us"),
    ('  bound to before the load', lambda r: f"{r['quiet_us'] / r['quiet_none_us']:.2f}"),
]

def median(s):
    return None if s is None else s['median']


RATIOS = [
    ('event on an untracked netdev', lambda r: r['unrelated']['median']),
    ('  of which the state locked', lambda r: median(r['unrelated_state'])),
    ('  slots of the tables examined', lambda r: median(r['unrelated_probes'])),
    ("link event on one port's SecY", lambda r: r['secy_event']['median']),
    ('  of which the state locked', lambda r: median(r['secy_event_state'])),
    ('  slots of the tables examined', lambda r: median(r['secy_event_probes'])),
    ('offload operation', lambda r: r['op']['median']),
    ('  of which the state locked', lambda r: median(r['op_state'])),
    ('  slots of the tables examined', lambda r: median(r['op_probes'])),
    ('module load', lambda r: r['load_us']),
    ('binding all ports, per port', lambda r: r['bind_us'] / r['ports']),
    ('full dump', lambda r: r['dump']['median']),
    ('  slots of the tables examined', lambda r: median(r['dump_probes'])),
    ('op to dev-change-ntf', lambda r: r['delivery_ms']['median']),
    ('dummy up-down pair elsewhere, bound', lambda r: r['quiet_us']),
]


def tables(results, col, title, rows, ratios, sizes):
    """One table of `rows` with a column per result (`col` names its
    label key), then one of `ratios` at the largest size to the smallest,
    per label."""
    print()
    print(title)
    print()
    def head(r):
        runs = [x for x in results if (x[col], x['ports']) == (r[col], r['ports'])]
        again = ' again' if runs.index(r) else ''
        return f"{r[col]}/{r['ports']}{again}"
    print('| | ' + ' | '.join(head(r) for r in results) + ' |')
    print('|---|' + '---|' * len(results))
    for name, f in rows:
        print(f'| {name} | ' + ' | '.join(f(r) for r in results) + ' |')
    lo, hi = min(sizes), max(sizes)
    if lo == hi:
        return
    by = {}
    for r in results:
        by.setdefault((r[col], r['ports']), []).append(r)
    labels = list(dict.fromkeys(r[col] for r in results))
    print()
    print(f'Ratio of each figure at {hi} ports to the figure at {lo} (of medians; '
          'where a size was measured more than once, of the means of its runs, and in '
          'brackets the least and the greatest ratio of one run to another)')
    print()
    print('| | ' + ' | '.join(labels) + ' |')
    print('|---|' + '---|' * len(labels))
    def ratio(m, f):
        a, b = [f(x) for x in by[(m, lo)]], [f(x) for x in by[(m, hi)]]
        if None in a or None in b:
            return '-'
        out = f'{statistics.mean(b) / max(statistics.mean(a), 1e-9):.2f}'
        if len(a) > 1 or len(b) > 1:
            out += f' ({min(b) / max(max(a), 1e-9):.2f} to {max(b) / max(min(a), 1e-9):.2f})'
        return out
    for name, f in ratios:
        print(f'| {name} | ' + ' | '.join(ratio(m, f) for m in labels) + ' |')


DRANET_RATIOS = [
    ('flip to slice', lambda r: r['flip_ms']['median']),
    ('CPU per set of slices', lambda r: r['cpu_ms_per_set']),
    ('webhook request', lambda r: r['ask_ms']['median']),
]


def main():
    if sys.argv[1:] == ['quiet-time']:
        print(f'{quiet_time(QUIET_FLAPS, QUIET_ROUNDS):.9f}')
        return
    # `ip -batch` keeps the namespace file of every `netns` it reads open.
    import resource
    resource.setrlimit(resource.RLIMIT_NOFILE, (8192, 8192))
    args = sys.argv[1:]
    sizes = [16, 128, 1024, 16]
    if '--sizes' in args:
        i = args.index('--sizes')
        sizes = [int(x) for x in args[i + 1].split(',')]
        del args[i:i + 2]
    bins = []
    if '--dranet' in args:
        i = args.index('--dranet')
        bins = [b.split('=', 1) for b in args[i + 1].split(',')]
        del args[i:i + 2]
    secy, mods = args[0], [a.split('=', 1) for a in args[1:]]
    reps = 100
    results, tools = [], []
    have = 0
    for p in sizes:
        t0 = time.monotonic()
        resize(have, p)
        have = p
        print(f'# {p} ports made in {time.monotonic() - t0:.0f} s', file=sys.stderr)
        for label, ko in mods:
            r = measure(label, ko, p, secy, reps)
            results.append(r)
            print('json:', r, flush=True)
        if bins and not any(t['ports'] == p for t in tools):
            tools += dranet(bins, mods[-1][1], p, 20)
    teardown(have)
    if tools:
        tables(tools, 'dranet', 'DRANet-Sec at scale, TCG guest: 20 SecY flips (down, up) of the '
               'middle port,\nand 20 webhook requests about it (`binary/ports` per column)',
               DRANET_ROWS, DRANET_RATIOS, sizes)

    tables(results, 'module', 'Bridge cost at scale, TCG guest; kernel times from the '
           f'macsec_bridge_update\ntracepoint, {reps} repetitions each (`module/ports` per column)',
           ROWS, RATIOS, sizes)
    lo, hi = min(sizes), max(sizes)
    by = {}
    for r in results:
        by.setdefault((r['module'], r['ports']), r)  # the first run of each size
    if lo == hi:
        return
    for m in [m[0] for m in mods]:
        a, b = by[(m, lo)], by[(m, hi)]
        secy = (b['mem_load_bytes'] - a['mem_load_bytes']) / (hi - lo)
        port = ((b['mem_bytes'] - b['mem_load_bytes'])
                - (a['mem_bytes'] - a['mem_load_bytes'])) / (hi - lo)
        print(f'{m}: memory per SecY tracked at load (slope {lo} to {hi}): {secy:.0f} bytes; '
              f'per port bound after: {port:.0f} bytes')


if __name__ == '__main__':
    main()
