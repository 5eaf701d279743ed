#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The lockstep at size, and what each event costs the module in ports.

    scale.py N

Ports mbv0 ... mbv(N-1) are bound, each to its own software MACsec netdev
mbs0 ... on top of its partner (mbv1 for mbv0, mbv0 for mbv1, and so on:
scale.sh made them). With the module's
macsec_bridge_update tracepoint on and a socket on the monitor group,
runs three rows and prints one JSON object:

  "quiet":     events on netdevs the module does not track (a dummy made,
               flapped ten times and deleted in another namespace): the
               notifications (none expected), the most ports any of
               those events recomputed (`visited`) and the most slots of
               the module's hash tables one examined (`probes`);
  "down"/"up": mbs(N/2) taken down, then up: every notification, and the
               most ports and slots an event on it recomputed and
               examined;
  "dumps":     the whole dump before, between and after (each port's
               protection, reason, relation, secy-ifindex, generation).

Each change is an RTM_NEWLINK whose ack comes after every notification
it caused was queued, so "every notification" is what the socket holds
once the ack is in.
"""
import json
import os
import socket
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mb_genl  # noqa: E402

TRACING = '/sys/kernel/tracing'
EVENT = TRACING + '/events/macsec_bridge/macsec_bridge_update/enable'
RTM_NEWLINK, IFF_UP, NLM_F_REQUEST, NLM_F_ACK = 16, 1, 1, 4
A = {'ifindex': 1, 'ifname': 2, 'protection': 4, 'reason': 5, 'relation': 6,
     'secy-ifindex': 7, 'generation': 12}


def obj(a):
    """A port's attributes, by name (the ones the rows check)."""
    out = {}
    for name, kind in A.items():
        if kind not in a:
            continue
        v = a[kind]
        if name == 'ifname':
            out[name] = v.rstrip(b'\0').decode()
        elif name == 'generation':
            out[name] = mb_genl.uint(v)
        else:
            out[name] = struct.unpack('I', v[:4])[0]
    return out


def ifindex(name):
    with open(f'/sys/class/net/{name}/ifindex') as f:
        return int(f.read())


def trace():
    """The macsec_bridge_update entries since the last call, oldest
    first: each a dict of its fields (cause, code, ifindex, ns, visited,
    probes, ports, secys, ...), numbers as ints."""
    with open(TRACING + '/trace') as f:
        text = f.read()
    with open(TRACING + '/trace', 'w') as f:
        f.write('')
    out = []
    for line in text.splitlines():
        if 'macsec_bridge_update:' not in line:
            continue
        f = dict(kv.split('=', 1) for kv in line.split('macsec_bridge_update:')[1].split())
        out.append({k: v if k == 'cause' else int(v) for k, v in f.items()})
    return out


def link_set(rt, idx, up):
    ifi = struct.pack('BxHiII', socket.AF_UNSPEC, 0, idx, IFF_UP if up else 0, IFF_UP)
    rt.send(struct.pack('IHHII', 16 + len(ifi), RTM_NEWLINK,
                        NLM_F_REQUEST | NLM_F_ACK, 1, 0) + ifi)
    err = struct.unpack_from('i', rt.recv(4096), 16)[0]
    if err:
        raise OSError(-err, os.strerror(-err))


def notes(mon):
    """Every notification queued on the monitor socket."""
    out = []
    while True:
        try:
            batch = mon.messages(65536)
        except BlockingIOError:
            return out
        out += [obj(mb_genl.attrs(body[4:])) for kind, _, body in batch
                if kind == mon.family]


def row(events, mon):
    """A row's figures: how many events, the most ports one recomputed
    and slots one examined (-1 for none), and the notifications queued."""
    return {'events': len(events),
            'visited': max((t['visited'] for t in events), default=-1),
            'probes': max((t['probes'] for t in events), default=-1),
            'notes': notes(mon)}


def dump():
    g = mb_genl.Genl()
    try:
        return {name: obj(a) for name, a in g.ports().items()}
    finally:
        g.sock.close()


def main():
    n = int(sys.argv[1])
    mid = f'mbs{n // 2}'
    rt = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
    rt.bind((0, 0))
    mon = mb_genl.Genl()
    mon.join('monitor')
    mon.sock.setblocking(False)
    with open(EVENT, 'w') as f:
        f.write('1')
    out = {'dumps': [dump()]}
    trace()

    subprocess.run(['ip', 'netns', 'add', 'mbpod'], check=True)
    steps = ['link add mbd0 type dummy'] + ['link set mbd0 up', 'link set mbd0 down'] * 10
    subprocess.run(['ip', '-n', 'mbpod', '-batch', '-'], check=True, text=True,
                   input='\n'.join(steps + ['link del mbd0']) + '\n')
    subprocess.run(['ip', 'netns', 'del', 'mbpod'], check=True)
    out['quiet'] = row([t for t in trace() if t['cause'] == 'event'], mon)

    for name, up in (('down', False), ('up', True)):
        link_set(rt, ifindex(mid), up)
        out[name] = row([t for t in trace()
                         if t['cause'] == 'event' and t['ifindex'] == ifindex(mid)], mon)
        out['dumps'].append(dump())
    with open(EVENT, 'w') as f:
        f.write('0')
    print(json.dumps(out))


if __name__ == '__main__':
    main()
