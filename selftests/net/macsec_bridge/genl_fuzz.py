#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Malformed and random requests to the macsec-bridge family.

    genl_fuzz.py MODE SEED COUNT PORT SECY

MODE says who is asking, and so what bind and unbind may answer:
  root      the initial namespace's root: the requests reach the module;
  unpriv    an unprivileged user: bind and unbind are refused (EPERM) by
            the generic netlink core before their attributes are read;
  userns    a user namespace's root, in the initial network namespace,
            which it does not administer: as unpriv;
  own-netns a user namespace's root in a network namespace of its own: the
            requests reach the module, which refuses bind and unbind
            (EPERM, with an extack: they need the host's authority) before
            it reads their attributes; dev-get names nothing there.

PORT is a port bound to SecY SECY (both ifindexes in the initial
namespace); no other device is a port there. First a fixed list of cases,
each with the errno it must get and whether an extack must explain it; then
COUNT random requests from SEED: random commands, flags and attributes
(unknown, duplicate, rejected, short, long, truncated, nested where no nest
is), each bind with no SecY to name and each unbind of anything but PORT,
so that none can change a thing. Every answer must be an errno from the
expected set, and an error the policy or the module gives (EINVAL, ERANGE,
ENODEV, EEXIST, ENOENT, EBADF) to a request that reached its operation
must carry an extack. Then interrupted dumps: requested and
the socket closed after none or one datagram. Finally nothing may have
changed: the same dump as before (every field, the generation too), and,
for root, not one notification on the `monitor` group.

Prints `PASS<TAB>description` or `FAIL<TAB>description` per check, with
`# ...` diagnostics before a failure, and the number of cases sent.
"""

import errno
import os
import random
import socket
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mb_genl import (  # noqa: E402  (the family's numbers and framing)
    A_IFINDEX, A_SECY_IFINDEX, A_SECY_NETNS_FD, CMD_BIND, CMD_DEV_GET, CMD_UNBIND,
    GENL_ID_CTRL, CTRL_CMD_GETFAMILY, CTRL_ATTR_FAMILY_NAME, NLM_F_ACK, NLM_F_ACK_TLVS,
    NLM_F_DUMP, NLM_F_REQUEST, NLMSG_DONE, NLMSG_ERROR, SOL_NETLINK, Genl, attr, attrs, u32)

A_PROTECTION, A_SECY_NETNSID = 4, 14
CTRL_ATTR_MCAST_GROUPS, CTRL_ATTR_MCAST_GRP_NAME, CTRL_ATTR_MCAST_GRP_ID = 7, 1, 2
NETLINK_ADD_MEMBERSHIP = 1
NLMSGERR_ATTR_MSG, NLMSGERR_ATTR_OFFS, NLMSGERR_ATTR_MISS_TYPE = 1, 2, 5
NLA_F_NESTED = 0x8000
CMD_DEV_CHANGE_NTF = 2

# What any request may be answered with.
ALLOWED = {0, errno.EINVAL, errno.ERANGE, errno.EOPNOTSUPP, errno.ENODEV, errno.EPERM,
           errno.EBADF, errno.EMSGSIZE, errno.ENOENT, errno.EEXIST, errno.EALREADY}
# Errors that must say why, once a request reached its operation.
EXPLAINED = {errno.EINVAL, errno.ERANGE, errno.ENODEV, errno.EEXIST, errno.ENOENT, errno.EBADF}


class Answer:
    def __init__(self, err, tlvs, replies):
        self.err, self.tlvs, self.replies = err, tlvs, replies

    @property
    def explained(self):
        return any(k in self.tlvs for k in
                   (NLMSGERR_ATTR_MSG, NLMSGERR_ATTR_OFFS, NLMSGERR_ATTR_MISS_TYPE))

    def __str__(self):
        msg = self.tlvs.get(NLMSGERR_ATTR_MSG, b'').rstrip(b'\0').decode(errors='replace')
        name = errno.errorcode.get(self.err, str(self.err)) if self.err else '0'
        if self.err < 0:
            return 'no answer in 10 s'
        return f'{name}{" (" + msg + ")" if msg else ""}'


def exchange(g, cmd, flags, payload, header=True):
    """Sends one request (its genl header cut off unless HEADER) and reads
    until its error or ACK, or a dump's end (a dump that started has no
    ACK): the answer. Messages of earlier requests are skipped."""
    g.seq += 1
    msg = (struct.pack('BBH', cmd, 1, 0) if header else b'') + payload
    g.sock.send(struct.pack('IHHII', 16 + len(msg), g.family, NLM_F_REQUEST | NLM_F_ACK | flags,
                            g.seq, 0) + msg)
    replies = []
    while True:
        try:
            data = g.sock.recv(65536)
        except socket.timeout:
            return Answer(-1, {}, replies)
        while len(data) >= 16:
            n, kind, mflags, seq, _pid = struct.unpack_from('IHHII', data)
            body, data = data[16:n], data[(n + 3) & ~3:]
            if seq != g.seq:
                continue
            if kind in (NLMSG_ERROR, NLMSG_DONE):
                err = -struct.unpack_from('i', body)[0]
                # An error carries the request's header (NETLINK_CAP_ACK).
                tlvs = attrs(body[4 if kind == NLMSG_DONE else 20:]) \
                    if mflags & NLM_F_ACK_TLVS else {}
                return Answer(err, tlvs, replies)
            replies.append(body)


def snapshot(g):
    """The whole dump, every attribute of every port, as bytes."""
    a = exchange(g, CMD_DEV_GET, NLM_F_DUMP, b'')
    if a.err:
        return f'dump failed: {a}'
    return sorted(a.replies)


def monitor():
    """A socket subscribed to the family's `monitor` group."""
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 16)
    s.bind((0, 0))
    s.send(struct.pack('IHHII', 16 + 4 + 20, GENL_ID_CTRL, NLM_F_REQUEST, 1, 0) +
           struct.pack('BBH', CTRL_CMD_GETFAMILY, 1, 0) +
           attr(CTRL_ATTR_FAMILY_NAME, b'macsec-bridge\0'))
    data = s.recv(65536)
    body = data[20:]
    group = None
    while len(body) >= 4:
        n, kind = struct.unpack_from('HH', body)
        if n < 4:
            break
        if kind & 0x3fff == CTRL_ATTR_MCAST_GROUPS:
            nest = body[4:n]
            while len(nest) >= 4:
                m, _ = struct.unpack_from('HH', nest)
                g = attrs(nest[4:m])
                if g.get(CTRL_ATTR_MCAST_GRP_NAME, b'').rstrip(b'\0') == b'monitor':
                    group = struct.unpack('I', g[CTRL_ATTR_MCAST_GRP_ID][:4])[0]
                nest = nest[(m + 3) & ~3:]
        body = body[(n + 3) & ~3:]
    s.setsockopt(SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, group)
    s.setblocking(False)
    return s


def notifications(s):
    count = 0
    while True:
        try:
            data = s.recv(65536)
        except BlockingIOError:
            return count
        while len(data) >= 20:
            n, kind = struct.unpack_from('IH', data)
            if kind != NLMSG_ERROR and data[16] == CMD_DEV_CHANGE_NTF:
                count += 1
            data = data[(n + 3) & ~3:]


def fixed_cases(port, secy, reaches, host, here):
    """(description, cmd, flags, payload, expected errnos, extack needed).
    REACHES: bind and unbind get past the core's permission check; HOST:
    the asker holds the host's authority (CAP_NET_ADMIN in the initial user
    namespace), which they need then; HERE: PORT is a port in the asker's
    namespace."""
    missing = 0x7fffffff
    get = u32(A_IFINDEX, port)
    cases = [
        ('command 0', 0, 0, b'', {errno.EOPNOTSUPP}, False),
        ('dev-change-ntf as a request', CMD_DEV_CHANGE_NTF, 0, get, {errno.EOPNOTSUPP}, False),
        ('command 5', 5, 0, b'', {errno.EOPNOTSUPP}, False),
        ('command 255', 255, 0, b'', {errno.EOPNOTSUPP}, False),
        ('bind as a dump', CMD_BIND, NLM_F_DUMP, b'', {errno.EOPNOTSUPP}, False),
        ('dev-get without ifindex', CMD_DEV_GET, 0, b'', {errno.EINVAL}, True),
        ('dev-get ifindex 0', CMD_DEV_GET, 0, u32(A_IFINDEX, 0), {errno.ERANGE}, True),
        ('dev-get ifindex of 1 byte', CMD_DEV_GET, 0, attr(A_IFINDEX, b'\1'),
         {errno.ERANGE, errno.EINVAL}, True),
        ('dev-get ifindex of 8 bytes', CMD_DEV_GET, 0, attr(A_IFINDEX, struct.pack('Q', port)),
         {errno.EINVAL}, True),
        ('dev-get ifindex flagged nested', CMD_DEV_GET, 0,
         attr(A_IFINDEX | NLA_F_NESTED, struct.pack('I', port)), {errno.EINVAL}, True),
        ('dev-get unknown attribute 16', CMD_DEV_GET, 0, get + u32(16, 1), {errno.EINVAL}, True),
        ('dev-get unknown attribute 0x3fff', CMD_DEV_GET, 0, get + u32(0x3fff, 1),
         {errno.EINVAL}, True),
        ('dev-get attribute 0', CMD_DEV_GET, 0, u32(0, 1) + get, {errno.EINVAL}, True),
        ("dev-get with a reply's attribute (protection)", CMD_DEV_GET, 0,
         get + u32(A_PROTECTION, 2), {errno.EINVAL}, True),
        ('dev-get attribute longer than the message', CMD_DEV_GET, 0,
         struct.pack('HH', 64, A_IFINDEX) + struct.pack('I', port), {errno.EINVAL}, True),
        ('dev-get attribute length 2', CMD_DEV_GET, 0, struct.pack('HH', 2, A_IFINDEX) + b'\0' * 4,
         {errno.EINVAL}, True),
        ('dev-get 3 bytes after the attributes', CMD_DEV_GET, 0, get + b'\1\2\3',
         {errno.EINVAL}, True),
        ('dev-get of no port', CMD_DEV_GET, 0, u32(A_IFINDEX, missing), {errno.ENODEV}, True),
        ('dev-get ifindex twice: the last counts', CMD_DEV_GET, 0,
         u32(A_IFINDEX, missing) + get, {0} if here else {errno.ENODEV}, not here),
        ('dev-get ifindex twice, the last no port', CMD_DEV_GET, 0,
         get + u32(A_IFINDEX, missing), {errno.ENODEV}, True),
        ('dev-get dump with an attribute', CMD_DEV_GET, NLM_F_DUMP, get, {errno.EINVAL}, True),
    ]
    # Refused before the operation reads an attribute: by the genl core
    # (no extack), or by the operation (own-netns: the host's authority).
    refused = None if host else {errno.EPERM}
    binds = [
        # The port is looked up first: where there is none, that is the error.
        ('bind without secy-ifindex', CMD_BIND, 0, get,
         {errno.EINVAL} if here else {errno.ENODEV}, True),
        ('bind with secy-netns-fd and secy-netnsid', CMD_BIND, 0,
         get + u32(A_SECY_IFINDEX, secy) + u32(A_SECY_NETNS_FD, 0) +
         u32(A_SECY_NETNSID, 0), {errno.EINVAL}, True),
        ('bind secy-netns-fd past INT_MAX', CMD_BIND, 0,
         get + u32(A_SECY_IFINDEX, secy) + u32(A_SECY_NETNS_FD, 0x80000000), {errno.ERANGE}, True),
        ('bind secy-netns-fd not a namespace (stdin)', CMD_BIND, 0,
         get + u32(A_SECY_IFINDEX, secy) + u32(A_SECY_NETNS_FD, 0),
         {errno.EINVAL, errno.EBADF}, True),
        ('bind secy-netnsid of no namespace', CMD_BIND, 0,
         get + u32(A_SECY_IFINDEX, secy) + u32(A_SECY_NETNSID, 0x7ffffff0), {errno.EINVAL}, True),
        ('bind a port of no device', CMD_BIND, 0,
         u32(A_IFINDEX, missing) + u32(A_SECY_IFINDEX, secy), {errno.ENODEV}, True),
        ('bind to a SecY of no device', CMD_BIND, 0,
         get + u32(A_SECY_IFINDEX, missing), {errno.ENODEV}, True),
        ('bind a port to itself', CMD_BIND, 0, get + u32(A_SECY_IFINDEX, port),
         {errno.EINVAL, errno.ENODEV}, True),
        ('bind to loopback, no SecY', CMD_BIND, 0, get + u32(A_SECY_IFINDEX, 1),
         {errno.EINVAL, errno.ENODEV}, True),
        ('unbind without ifindex', CMD_UNBIND, 0, b'', {errno.EINVAL}, True),
        ('unbind of no device', CMD_UNBIND, 0, u32(A_IFINDEX, missing), {errno.ENODEV}, True),
        ('unbind loopback, not bound', CMD_UNBIND, 0, u32(A_IFINDEX, 1),
         {errno.EINVAL, errno.ENODEV, errno.ENOENT}, True),
    ]
    for desc, cmd, flags, payload, want, explained in binds:
        cases.append((desc, cmd, flags, payload, refused or want, explained and reaches))
    # Rejected by the policy, which the core applies first.
    cases.append(('unbind with a SecY attribute', CMD_UNBIND, 0, get + u32(A_SECY_IFINDEX, secy),
                  {errno.EINVAL} if reaches else {errno.EPERM}, reaches))
    return cases


def random_attr(rng, values):
    kind = rng.choice([A_IFINDEX, A_SECY_IFINDEX, A_SECY_NETNS_FD, A_SECY_NETNSID,
                       A_PROTECTION, 0, 13, 15, 16, rng.randrange(0x4000)])
    if rng.random() < 0.05:
        kind |= NLA_F_NESTED
    r = rng.random()
    if r < 0.6:
        payload = struct.pack('I', rng.choice(values))
    elif r < 0.7:
        payload = struct.pack('Q', rng.choice(values))
    else:
        payload = bytes(rng.randrange(256) for _ in range(rng.randrange(13)))
    return attr(kind, payload)


def random_request(rng, port, secy, lo):
    """A random request that can change nothing: a bind names no SecY, an
    unbind anything but PORT."""
    cmd = rng.choice([CMD_DEV_GET] * 4 + [CMD_BIND] * 3 + [CMD_UNBIND] * 3 +
                     [0, CMD_DEV_CHANGE_NTF, 5, rng.randrange(256)])
    flags = NLM_F_DUMP if rng.random() < 0.2 else 0
    values = [0, 1, lo, port, 0x7fffffff, 0xffffffff, 0x80000000, rng.randrange(1 << 32)]
    if cmd == CMD_UNBIND:
        values = [v for v in values if v != port]
    payload = b''.join(random_attr(rng, values) for _ in range(rng.randrange(5)))
    if cmd == CMD_BIND:
        # Whatever else it carries, its last SecY names none.
        payload += u32(A_SECY_IFINDEX, rng.choice([0x7fffffff, lo, port]))
    r = rng.random()
    if r < 0.1 and payload:
        payload = payload[:rng.randrange(len(payload))]
    elif r < 0.2 and payload:
        i = rng.randrange(len(payload))
        payload = payload[:i] + bytes([rng.randrange(256)]) + payload[i + 1:]
        if cmd in (CMD_BIND, CMD_UNBIND):
            # A flipped byte could name PORT or a SecY: the last word is
            # a device that does not exist.
            last = A_SECY_IFINDEX if cmd == CMD_BIND else A_IFINDEX
            payload += u32(last, 0x7fffffff)
    return cmd, flags, payload


def main():
    mode, seed, count, port, secy = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \
        int(sys.argv[4]), int(sys.argv[5])
    reaches = mode in ('root', 'own-netns')
    failures = 0

    def report(ok, desc, notes=()):
        nonlocal failures
        for n in notes:
            print(f'# {n}')
        print(f'{"PASS" if ok else "FAIL"}\t{mode}: {desc}')
        failures += not ok

    g = Genl()
    g.sock.settimeout(10)
    mon = monitor() if mode == 'root' else None
    before = snapshot(g)
    lo = socket.if_nametoindex('lo')

    bad = []
    cases = fixed_cases(port, secy, reaches, mode == 'root', mode != 'own-netns')
    for desc, cmd, flags, payload, want, explained in cases:
        a = exchange(g, cmd, flags, payload)
        if a.err not in want or (explained and not a.explained):
            bad.append(f'{desc}: {a}, want {"/".join(errno.errorcode.get(e, "0") for e in want)}'
                       f'{" with an extack" if explained else ""}')
    a = exchange(g, CMD_DEV_GET, 0, b'\1', header=False)
    if a.err != errno.EINVAL:
        bad.append(f'a request shorter than its genl header: {a}, want EINVAL')
    report(not bad, f'{len(cases) + 1} malformed requests: each its errno and extack', bad)

    rng = random.Random(seed)
    bad, seen = [], {}
    for i in range(count):
        cmd, flags, payload = random_request(rng, port, secy, lo)
        a = exchange(g, cmd, flags, payload)
        seen[a.err] = seen.get(a.err, 0) + 1
        why = None
        if a.err not in ALLOWED:
            why = 'unexpected errno'
        elif cmd in (CMD_BIND, CMD_UNBIND) and not flags and a.err == 0:
            why = 'a bind or unbind that cannot succeed did'
        elif cmd in (CMD_BIND, CMD_UNBIND) and not flags and not reaches and a.err != errno.EPERM:
            why = 'not refused by the permission check'
        elif (cmd in (CMD_DEV_GET, CMD_BIND, CMD_UNBIND) and a.err in EXPLAINED and
              not a.explained and (reaches or cmd == CMD_DEV_GET)):
            why = 'no extack'
        if why:
            bad.append(f'case {i} (seed {seed}): cmd {cmd} flags {flags:#x} '
                       f'payload {payload.hex()}: {a}: {why}')
            if len(bad) == 10:
                break
    counts = ', '.join(f'{errno.errorcode.get(e, "0") if e else "ok"} {n}'
                       for e, n in sorted(seen.items()))
    report(not bad, f'{count} random requests from seed {seed}: expected errnos, each explained',
           bad + [f'answers: {counts}'])

    # Dumps abandoned: after the request, and after the first datagram.
    for i in range(100):
        s = Genl()
        s.send(s.family, CMD_DEV_GET, NLM_F_DUMP, b'')
        if i % 2:
            s.sock.recv(16)  # a datagram cut short: MSG_TRUNC, not read again
        s.sock.close()
    after_dumps = exchange(g, CMD_DEV_GET, NLM_F_DUMP, b'')
    report(after_dumps.err == 0, '100 dumps abandoned half-way; the next one completes',
           [f'dump: {after_dumps}'] if after_dumps.err else [])

    after = snapshot(g)
    report(after == before, 'nothing changed: the same dump, every field and generation',
           [f'before: {before}', f'after: {after}'] if after != before else [])
    if mon is not None:
        n = notifications(mon)
        report(n == 0, 'not one notification', [f'{n} notifications'] if n else [])
    print(f'# {mode}: {len(cases) + 1} malformed, {count} random requests, 100 abandoned dumps')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
