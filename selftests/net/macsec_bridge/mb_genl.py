#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The macsec-bridge family on a raw generic netlink socket, for what the
YNL CLI cannot do: many requests in one process, and a dump read one
datagram at a time with a change made between two of them.

    mb_genl.py bind SECY_IFINDEX IFINDEX...
        binds each port to the SecY (both in this namespace); exits 1 at
        the first refusal, printing its errno.
    mb_genl.py bind-pairs
        binds each port to its SecY: one pair of ifindexes per line of
        stdin, `PORT SECY` (both in this namespace); exits 1 at the first
        refusal.
    mb_genl.py dump-split CMD
        starts a dev-get dump, reads its first datagram, runs the shell
        command CMD, reads the rest; prints one JSON object: "parts" (the
        datagrams), "intr" (whether a message carried NLM_F_DUMP_INTR) and
        "ifnames" (every port, in order).
    mb_genl.py dump-names IFINDEX N
        dumps N times and prints, as one JSON list, every name the port
        IFINDEX had in those dumps ("" for a dump that lacked it).
    mb_genl.py opener NETNS SECY_IFINDEX PORT
        a socket opened by a pod's root, handed to this (privileged)
        process: a child unshares a user and a network namespace of its
        own, opens a socket there and passes it over; PORT moves into the
        child's namespace. Through the pod's socket, then one of this
        process' own in the same namespace, binds PORT to SECY_IFINDEX (in
        the namespace file NETNS), unbinds it, and after each step dumps.
        Prints a line per step: its name, the errno (0 on success) and
        the extack message, or the port's relation after a dump.
    mb_genl.py faults OP NETNS SECY_IFINDEX PORT [KO]
        fails the 1st, 2nd, ... slab allocation of OP (bind, unbind, or
        unload, which reloads the module from KO after each try) until OP
        runs through with none failed. Before each try PORT is unbound
        (bind) or bound to SECY_IFINDEX in NETNS (the others); after it,
        whatever OP returned, the port must be what OP's result says:
        bound with the feature bit set, or untracked with it clear. The
        try with no fault must succeed (bind and unbind: done, and the port
        as it says), and (bind, unbind) make more allocations than the
        same request for a port that does not exist, which the module
        refuses before allocating: the faults reached past the netlink
        cores into what the module does (its own allocations, and the
        notifications its feature write makes the core send). A monitor
        listener in PORT's namespace follows bind and unbind: every try
        that changed the port must reach it as a notification for PORT or
        as ENOBUFS on its next read (the module's word for a notification
        it could not allocate), and at least one try must end with the
        latter. Prints "OP: N allocations failed in turn" or the first
        violation, and exits 1 on one.
    mb_genl.py rdma-faults NETDEV NAME
        counts the slab allocations of `rdma link add NAME type rxe netdev
        NETDEV`, then fails them one at a time from the last backwards,
        past those of the module's RDMA client. After each try NETDEV must
        be a port naming NAME only if NAME exists, and no port once NAME
        is deleted (a client whose add failed is never told of the
        removal). Prints the counts of each outcome; exits 1 on a
        violation, or if no try left the device untracked (no fault
        reached the module).
    mb_genl.py secy-faults NETNS LOWER PORT SECY
        counts the slab allocations of creating mbf0, a MACsec netdev
        offloaded to LOWER in the namespace file NETNS (RTM_NEWLINK), then
        fails them one at a time from the last backwards (from 32 past the
        count to 100 before it; up to three passes, each counting again)
        until one leaves mbf0 created but not tracked by
        the module (PORT, bound to it, reports reason unknown, where a
        tracked SecY's reason is secy-down). Then, with PORT bound to that
        SecY, an offload operation on it (an active TX SA added), which the
        module sees before and after the driver; then PORT is bound to SECY
        (an ifindex in NETNS), which protects. PORT must then say offload-mac:
        the operation on the untracked SecY held it down no longer than it
        ran. Prints what happened; exits 1 if PORT stays down, or if no
        fault left mbf0 untracked.
    mb_genl.py lower-faults NETNS NIC PORT SECY PATH
        moves the NIC NIC (the real device of a VLAN carrying the
        offloaded SecY SECY, to which PORT is bound and protected) into the
        namespace file NETNS and back, failing the allocations of the move
        there one at a time from the last backwards (from 16 past the
        count to 60 before it). PATH is how the module sees offloaded
        operations, as its load line says. "interposer": up to five
        passes, each counting again, until one fault is the module's
        interposer at the NIC's REGISTER (the kernel log says it cannot
        observe the NIC). Then, with the NIC up in NETNS, PORT must say
        none/unknown; back and observed again, still none/unknown; after a
        key change on SECY (TX SA 1 added and made the encoding SA: it
        settles the driver), offload-mac. "notifier": the MACsec core
        announces every device's operations, so there is nothing to lose:
        one pass, in which no fault may reach the module, and the key
        change after it must leave PORT offload-mac. Either way every
        fault that missed the module must leave PORT offload-mac. Prints
        what happened; exits 1 on a violation, or (interposer) if no fault
        reached the module.
    mb_genl.py churn NETNS SECY_IFINDEX PORT STOP
        until the file STOP exists: binds PORT to SECY_IFINDEX (in the
        namespace file NETNS), dumps, unbinds, dumps, finding the family
        again whenever it went away (the module is being reloaded). Prints
        one JSON object: the requests that succeeded, by command, and the
        errnos of the others.
    mb_genl.py reload KO CYCLES PORT
        unloads and loads the module (file KO) CYCLES times, whatever else
        runs. Before each unload it dumps (the greatest generation, and
        whether PORT's feature bit is set: the first unload waits until
        it is, at most 60 s); after it, PORT's bit must be
        clear; after each load PORT must be tracked again with every
        generation above all before. Prints one JSON object (cycles, the
        unloads that found the bit set, the unloads that had to wait for a
        dump in flight, the violations); exits 1 on a violation.
    mb_genl.py gids PORT
        prints how many protected GIDs PORT lists in a dump (-1: not in
        it).
    mb_genl.py readers PORT IFINDEX
        as nobody (uid and gid 65534, no groups, no capability): a dump,
        then a dev-get of IFINDEX. Prints "dump VERDICT" and "get VERDICT"
        (PORT's protection/reason), each as soon as it is answered.

Attribute and command numbers are the YNL spec's.
"""

import ctypes
import errno
import json
import os
import socket
import struct
import subprocess
import sys
import threading
import time

NETLINK_GENERIC = 16
GENL_ID_CTRL = 0x10
CTRL_CMD_GETFAMILY = 3
CTRL_ATTR_FAMILY_ID = 1
CTRL_ATTR_FAMILY_NAME = 2
CTRL_ATTR_MCAST_GROUPS, CTRL_ATTR_MCAST_GRP_NAME, CTRL_ATTR_MCAST_GRP_ID = 7, 1, 2
NLM_F_REQUEST, NLM_F_MULTI, NLM_F_ACK, NLM_F_DUMP_INTR = 0x1, 0x2, 0x4, 0x10
NLM_F_DUMP = 0x300
NLMSG_ERROR, NLMSG_DONE = 2, 3
SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, NETLINK_CAP_ACK, NETLINK_EXT_ACK = 270, 1, 10, 11
NLM_F_ACK_TLVS, NLMSGERR_ATTR_MSG = 0x200, 1
CLONE_NEWUSER, CLONE_NEWNET = 0x10000000, 0x40000000

CMD_DEV_GET, CMD_BIND, CMD_UNBIND = 1, 3, 4
A_IFINDEX, A_IFNAME, A_RELATION, A_SECY_IFINDEX, A_SECY_NETNS_FD = 1, 2, 6, 7, 15
A_PROTECTION, A_REASON = 4, 5
PROTECTIONS = {0: 'none', 1: 'software', 2: 'offload-mac', 3: 'offload-phy'}
REASONS = {0: 'none', 1: 'unknown', 4: 'secy-down', 6: 'no-active-tx-sa', 9: 'offload-off', 11: 'unsettled',
           12: 'offload-unreachable'}
# rtnetlink (include/uapi/linux/rtnetlink.h, if_link.h): a MACsec link.
RTM_NEWLINK = 16
NLM_F_EXCL, NLM_F_CREATE, NLA_F_NESTED = 0x200, 0x400, 0x8000
IFLA_IFNAME, IFLA_LINK, IFLA_LINKINFO, IFLA_NET_NS_FD = 3, 5, 18, 28
IFF_UP = 0x1
IFLA_INFO_KIND, IFLA_INFO_DATA = 1, 2
IFLA_MACSEC_OFFLOAD, MACSEC_OFFLOAD_MAC = 15, 2
A_GENERATION = 12
A_PROTECTED_GID = 16
SYS_FINIT_MODULE, SYS_DELETE_MODULE = 313, 176
A_RDMA_DEV = 3
# RDMA netlink (include/uapi/rdma/rdma_netlink.h): RDMA_NL_NLDEV's
# RDMA_NLDEV_CMD_NEWLINK, and its attributes.
NETLINK_RDMA = 20
RDMA_NEWLINK = (5 << 10) + 3
RDMA_ATTR_DEV_NAME, RDMA_ATTR_NDEV_NAME, RDMA_ATTR_LINK_TYPE = 2, 51, 65
RELATIONS = {0: 'self', 1: 'upper', 2: 'bound'}


class NlError(OSError):
    """A request's error, with its extack message ('' without one)."""

    def __init__(self, err, msg):
        super().__init__(err, os.strerror(err))
        self.extack = msg


def attr(kind, payload):
    n = 4 + len(payload)
    return struct.pack('HH', n, kind) + payload + b'\0' * ((4 - n % 4) % 4)


def attrs_all(buf):
    """Every attribute's payload, in order (a nested array's entries)."""
    out = []
    while len(buf) >= 4:
        n, _kind = struct.unpack_from('HH', buf)
        if n < 4:
            break
        out.append(buf[4:n])
        buf = buf[(n + 3) & ~3:]
    return out


def attrs(buf):
    out = {}
    while len(buf) >= 4:
        n, kind = struct.unpack_from('HH', buf)
        if n < 4:
            break
        out.setdefault(kind & 0x3fff, buf[4:n])
        buf = buf[(n + 3) & ~3:]
    return out


class Genl:
    def __init__(self, sock=None):
        self.sock = sock or socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_GENERIC)
        self.sock.bind((0, 0))
        # Errors carry the extack message, and not the request back.
        self.sock.setsockopt(SOL_NETLINK, NETLINK_EXT_ACK, 1)
        self.sock.setsockopt(SOL_NETLINK, NETLINK_CAP_ACK, 1)
        self.seq = 0
        reply = self.request(GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 0,
                             attr(CTRL_ATTR_FAMILY_NAME, b'macsec-bridge\0'))
        family = attrs(reply[0][4:])
        self.family = struct.unpack('H', family[CTRL_ATTR_FAMILY_ID][:2])[0]
        self.groups = {}
        for g in attrs_all(family.get(CTRL_ATTR_MCAST_GROUPS, b'')):
            g = attrs(g)
            name = g[CTRL_ATTR_MCAST_GRP_NAME].rstrip(b'\0').decode()
            self.groups[name] = struct.unpack('I', g[CTRL_ATTR_MCAST_GRP_ID][:4])[0]

    def join(self, group):
        """Subscribes this socket to one of the family's groups."""
        self.sock.setsockopt(SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, self.groups[group])

    def send(self, kind, cmd, flags, payload, now=True):
        """Sends a request, or with now=False only builds it (pending)."""
        self.seq += 1
        msg = struct.pack('BBH', cmd, 1, 0) + payload
        self.pending = struct.pack('IHHII', 16 + len(msg), kind, NLM_F_REQUEST | flags,
                                   self.seq, 0) + msg
        if now:
            self.sock.send(self.pending)

    def messages(self, size=4096):
        """One datagram: (type, flags, payload) of each message in it. The
        kernel sizes a dump's datagrams by the largest buffer a socket read
        with: this one reads with a page, so that a dump of a hundred ports
        takes several."""
        data, _, flags, _ = self.sock.recvmsg(size)
        if flags & socket.MSG_TRUNC:
            raise RuntimeError(f'a datagram longer than {size} bytes')
        out = []
        while len(data) >= 16:
            n, kind, flags, _seq, _pid = struct.unpack_from('IHHII', data)
            out.append((kind, flags, data[16:n]))
            data = data[(n + 3) & ~3:]
        return out

    def request(self, kind, cmd, flags, payload):
        """A do request: its replies' payloads; raises NlError on an error."""
        self.send(kind, cmd, flags | NLM_F_ACK, payload)
        replies = []
        while True:
            for mkind, mflags, body in self.messages():
                if mkind == NLMSG_ERROR:
                    err = struct.unpack_from('i', body)[0]
                    if err:
                        # The error, the request's header (NETLINK_CAP_ACK),
                        # then the extack's attributes.
                        tlvs = attrs(body[20:]) if mflags & NLM_F_ACK_TLVS else {}
                        msg = tlvs.get(NLMSGERR_ATTR_MSG, b'').rstrip(b'\0').decode()
                        raise NlError(-err, msg)
                    return replies
                replies.append(body)

    def ports(self):
        """A dev-get dump: each port's attributes, by ifname."""
        self.send(self.family, CMD_DEV_GET, NLM_F_DUMP, b'')
        out = {}
        while True:
            for kind, _flags, body in self.messages(65536):
                if kind == NLMSG_DONE:
                    # A dump that failed part-way says so here.
                    err = struct.unpack_from('i', body)[0] if len(body) >= 4 else 0
                    if err:
                        raise NlError(-err, 'dump')
                    return out
                if kind == NLMSG_ERROR:
                    raise NlError(-struct.unpack_from('i', body)[0], '')
                a = attrs(body[4:])
                out[a[A_IFNAME].rstrip(b'\0').decode()] = a


def u32(kind, value):
    return attr(kind, struct.pack('I', value))


def requests(ifindex, secy, secy_ns=None):
    """The payloads of bind (to SECY_IFINDEX, in the namespace of the fd
    SECY_NS if given) and unbind for port IFINDEX, by command."""
    bind = u32(A_IFINDEX, ifindex) + u32(A_SECY_IFINDEX, secy)
    if secy_ns is not None:
        bind += u32(A_SECY_NETNS_FD, secy_ns)
    return {CMD_BIND: bind, CMD_UNBIND: u32(A_IFINDEX, ifindex)}


def relation(a):
    """A port's relation in a dump (`untracked` when the dump lacks it)."""
    if a is None:
        return 'untracked'
    if A_RELATION not in a:
        return 'none'
    return RELATIONS.get(struct.unpack('I', a[A_RELATION])[0], 'unknown')


def nscall(func, *args):
    """Calls a libc function that returns -1 and sets errno on failure."""
    if func(*args) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


class FailNth:
    """This thread's fail-nth knob (CONFIG_FAULT_INJECTION): the n-th
    allocation after arming fails. Opened once, so arming allocates
    nothing; failslab must not skip sleeping allocations."""

    def __init__(self):
        with open('/sys/kernel/debug/failslab/ignore-gfp-wait', 'w') as f:
            f.write('N')
        with open('/sys/kernel/debug/failslab/verbose', 'w') as f:
            f.write('0')
        self.path = f'/proc/self/task/{threading.get_native_id()}/fail-nth'
        self.fd = os.open(self.path, os.O_WRONLY)
        self.rfd = None

    def arm(self, n):
        # The knob cannot seek: a fresh fd for the read, opened before the
        # fault is armed (opening allocates).
        self.rfd = os.open(self.path, os.O_RDONLY)
        os.write(self.fd, str(n).encode())

    def disarm(self):
        """Whether the armed fault was injected; disarms it."""
        return self.disarm_left() == 0

    def disarm_left(self):
        """How many allocations the armed fault still had to wait for (0:
        it was injected); disarms it."""
        left = int(os.read(self.rfd, 32).strip() or b'0')
        os.write(self.fd, b'0')
        os.close(self.rfd)
        return left


def feature_bit(port):
    """ethtool's view of PORT's NETIF_F_HW_MACSEC; raises if it cannot say."""
    out = subprocess.run(['ethtool', '-k', port], capture_output=True, text=True,
                         check=True).stdout
    return any(line.split()[:2] == ['macsec-hw-offload:', 'on'] for line in out.splitlines())


def faults(op, netns, secy, port, ko=None):
    """See the module's doc string."""
    fail = FailNth()
    payload = requests(socket.if_nametoindex(port), secy, os.open(netns, os.O_RDONLY))
    libc = ctypes.CDLL(None, use_errno=True)
    # What is tried, and the port's state before each try.
    cmd = CMD_BIND if op == 'bind' else CMD_UNBIND
    bound_before = op != 'bind'

    def state(g):
        """(bound, bit) of the port now."""
        return relation(g.ports().get(port)) == 'bound', feature_bit(port)

    def attempt(g, cmd, payload, n):
        """Sends one request with the n-th allocation failing: its errno
        (0: done; None: unknown, the ack itself could not be allocated)
        and whether the fault was injected."""
        g.send(g.family, cmd, NLM_F_ACK, payload, now=False)
        fail.arm(n)
        try:
            g.sock.send(g.pending)
        except OSError as e:
            return e.errno, fail.disarm()
        hit = fail.disarm()
        try:
            for mkind, _flags, body in g.messages():
                if mkind == NLMSG_ERROR:
                    return -struct.unpack_from('i', body)[0], hit
        except OSError:
            pass
        return None, hit

    def heard(mon):
        """What MON got since it was last read: (a notification for PORT,
        ENOBUFS on a read)."""
        seen = lost = False
        while True:
            try:
                msgs = mon.messages(65536)
            except BlockingIOError:
                return seen, lost
            except OSError as e:
                if e.errno != errno.ENOBUFS:
                    raise
                lost = True
                continue
            for kind, _flags, body in msgs:
                name = attrs(body[4:]).get(A_IFNAME, b'').rstrip(b'\0').decode()
                seen |= kind == mon.family and name == port

    mon, losses = None, 0
    if op != 'unload':
        mon = Genl()
        mon.join('monitor')
        mon.sock.setblocking(False)

    for n in range(1, 1000):
        if op == 'unload' and not os.path.exists('/sys/module/macsec_bridge'):
            subprocess.run(['insmod', ko], check=True)
        g = Genl()
        if state(g)[0] != bound_before:
            setup = CMD_BIND if bound_before else CMD_UNBIND
            g.request(g.family, setup, 0, payload[setup])
        if op == 'unload':
            g.sock.close()
            name = b'macsec_bridge\0'
            fail.arm(n)
            try:
                rc = libc.syscall(176, name, os.O_NONBLOCK)  # delete_module
                err = ctypes.get_errno() if rc else 0
            finally:
                hit = fail.disarm()
            if err:
                print(f'{op}: delete_module failed: {os.strerror(err)} (fault {n})')
                return 1
            if os.path.exists('/sys/module/macsec_bridge') or feature_bit(port):
                print(f'{op}: fault {n}: module still there or {port} keeps its bit')
                return 1
        else:
            heard(mon)
            err, hit = attempt(g, cmd, payload[cmd], n)
            want = (err == 0) == (op == 'bind')
            got = state(g)
            if got[0] != got[1] or (err is not None and got != (want, want)):
                print(f'{op}: fault {n}: errno {err}, then bound {got[0]}, bit {got[1]}; '
                      f'want both {want}')
                return 1
            seen, lost = heard(mon)
            if got[0] != bound_before and not (seen or lost):
                print(f'{op}: fault {n}: errno {err}, the port changed, and the monitor '
                      'got neither a notification for it nor ENOBUFS')
                return 1
            losses += lost
            g.sock.close()
        if not hit:
            break
    else:
        print(f'{op}: still allocating after {n} faults')
        return 1
    # The try no fault reached: n - 1 allocations, each failed in turn
    # before it. It must have done what it was asked.
    if op != 'unload' and (err != 0 or got != (op == 'bind',) * 2):
        print(f'{op}: with no fault: errno {err}, then bound {got[0]}, bit {got[1]}')
        return 1
    if op != 'unload':
        # The same request for a port no device has: refused by the module
        # (ENODEV) before it allocates anything. Its allocations, counted
        # by the kernel's fail-nth knob, are the netlink and generic
        # netlink cores' alone.
        g = Genl()
        far = requests(0x7ffffff0, secy)[cmd]
        err0, left = None, 0
        g.send(g.family, cmd, NLM_F_ACK, far, now=False)
        fail.arm(100000)
        try:
            g.sock.send(g.pending)
        finally:
            left = fail.disarm_left()
        for mkind, _flags, body in g.messages():
            if mkind == NLMSG_ERROR:
                err0 = -struct.unpack_from('i', body)[0]
                break
        g.sock.close()
        core = 100000 - left
        if err0 != errno.ENODEV or n - 1 <= core:
            print(f'{op}: {n - 1} allocations, a request for no port (errno {err0}) '
                  f'{core}: no fault reached past the cores')
            return 1
        print(f'{op}: {n - 1} allocations failed in turn, {core} of them the cores\' '
              '(a request for no port makes as many), then done with none failed; '
              f'{losses} tries reached the monitor as ENOBUFS')
        return 0 if losses else 1
    print(f'{op}: {n - 1} allocations failed in turn')
    return 0


def rdma_devs(a):
    """The rdma-dev entries of a port's attributes (attrs_all's pairs)."""
    return [v.rstrip(b'\0').decode() for k, v in a if k == A_RDMA_DEV]


def port_attrs(g, port):
    """PORT's object in a dump as (kind, payload) pairs, or None."""
    g.send(g.family, CMD_DEV_GET, NLM_F_DUMP, b'')
    found = None
    while True:
        for kind, _flags, body in g.messages(65536):
            if kind in (NLMSG_DONE, NLMSG_ERROR):
                err = struct.unpack_from('i', body)[0] if len(body) >= 4 else 0
                if err:
                    raise NlError(-err, 'dump')
                return found
            pairs = []
            buf = body[4:]
            while len(buf) >= 4:
                n, k = struct.unpack_from('HH', buf)
                if n < 4:
                    break
                pairs.append((k & 0x3fff, buf[4:n]))
                buf = buf[(n + 3) & ~3:]
            if any(k == A_IFNAME and v.rstrip(b'\0').decode() == port for k, v in pairs):
                found = pairs


def faulted(fail, sock, msg, n):
    """Sends the request MSG on SOCK with the n-th allocation failing: its
    errno (None: no answer, the ack itself failed) and the allocations
    the fault still waited for."""
    fail.arm(n)
    try:
        sock.send(msg)
    except OSError as e:
        return e.errno, fail.disarm_left()
    left = fail.disarm_left()
    try:
        return ack(sock), left
    except OSError:
        return None, left


def ack(sock):
    """The errno of the ack on SOCK (0: done), skipping other messages."""
    while True:
        data = sock.recv(8192)
        kind, = struct.unpack_from('H', data, 4)
        if kind == NLMSG_ERROR:
            return -struct.unpack_from('i', data, 16)[0]


def count_allocations(what, add, exists, delete):
    """How many allocations one whole ADD makes (add(n) fails the n-th and
    returns (errno, allocations the fault still waited for)), after two
    warm-up runs (a module loads, first-time allocations happen); each
    run's object is deleted again. None, after saying why, if WHAT fails
    with no fault."""
    for _ in range(2):
        err, _ = add(0)
        if err or not exists():
            print(f'{what}: errno {err}')
            return None
        delete()
    big = 1 << 30
    err, left = add(big)
    if err or not exists():
        print(f'{what}: errno {err}')
        return None
    delete()
    return big - left


def rdma_faults(netdev, name):
    """See the module's doc string."""
    fail = FailNth()
    rd = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_RDMA)
    rd.bind((0, 0))
    rd.settimeout(60)
    body = (attr(RDMA_ATTR_DEV_NAME, name.encode() + b'\0')
            + attr(RDMA_ATTR_LINK_TYPE, b'rxe\0')
            + attr(RDMA_ATTR_NDEV_NAME, netdev.encode() + b'\0'))
    seq = 0
    g = Genl()

    def add(n):
        """`rdma link add NAME type rxe netdev NETDEV` with the n-th
        allocation failing (see faulted)."""
        nonlocal seq
        seq += 1
        msg = struct.pack('IHHII', 16 + len(body), RDMA_NEWLINK, NLM_F_REQUEST | NLM_F_ACK,
                          seq, 0) + body
        return faulted(fail, rd, msg, n)

    def exists():
        return os.path.isdir(f'/sys/class/infiniband/{name}')

    def delete():
        subprocess.run(['rdma', 'link', 'delete', name], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    total = count_allocations(f'rdma link add {name}', add, exists, delete)
    if total is None:
        return 1
    # The module's add runs near the end, when the RDMA core calls its
    # clients: failed from the last allocation backwards, until the
    # module's own failures are behind.
    outcomes = {'tracked': 0, 'untracked': 0, 'no-device': 0}
    since = None
    tried = 0
    for n in range(total, max(total - 600, 0), -1):
        tried += 1
        err, left = add(n)
        dev = exists()
        a = port_attrs(g, netdev)
        if a is not None and not (dev and rdma_devs(a) == [name]):
            print(f'fault {n} of {total}: errno {err}, device {"there" if dev else "gone"}, '
                  f'yet {netdev} is a port with rdma-dev {rdma_devs(a)}')
            return 1
        kind = 'tracked' if a is not None else 'untracked' if dev else 'no-device'
        outcomes[kind] += 1
        if dev:
            delete()
            a = port_attrs(g, netdev)
            if a is not None:
                print(f'fault {n} of {total}: errno {err}; after {name} was deleted {netdev} '
                      f'is still a port with rdma-dev {rdma_devs(a)}')
                return 1
        if kind == 'untracked':
            since = 0
        elif since is not None:
            since += 1
            if since == 32:
                break
    print(f'rdma link add: {total} allocations; the last {tried} failed in turn: '
          f'{outcomes["tracked"]} tracked, {outcomes["untracked"]} left untracked '
          f'with the device there, {outcomes["no-device"]} with no device')
    if not outcomes['untracked']:
        print('no fault reached the module: it never refused a device')
        return 1
    return 0


def opener(netns, secy, port):
    """See the module's doc string."""
    libc = ctypes.CDLL(None, use_errno=True)
    parent, child = socket.socketpair()
    pid = os.fork()
    if pid == 0:
        parent.close()
        try:
            nscall(libc.unshare, CLONE_NEWUSER | CLONE_NEWNET)
            pod = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_GENERIC)
            socket.send_fds(child, [b'fd'], [pod.fileno()])
            child.recv(1)  # until the parent is done with the namespace
        finally:
            os._exit(0)
    child.close()
    _, fds, _, _ = socket.recv_fds(parent, 2, 1)
    pod = Genl(socket.socket(fileno=fds[0]))
    subprocess.run(['ip', 'link', 'set', port, 'netns', str(pid)], check=True)
    # This process' own socket in the pod's namespace, and the port's
    # ifindex there (sysfs would show this process' namespace).
    home = os.open('/proc/self/ns/net', os.O_RDONLY)
    nscall(libc.setns, os.open(f'/proc/{pid}/ns/net', os.O_RDONLY), CLONE_NEWNET)
    own = Genl()
    ifindex = socket.if_nametoindex(port)
    nscall(libc.setns, home, CLONE_NEWNET)

    payload = requests(ifindex, secy, os.open(netns, os.O_RDONLY))

    def step(name, g, cmd, after):
        """CMD through G, then a dump through this process' own socket."""
        try:
            g.request(g.family, cmd, 0, payload[cmd])
            print(f'{name} 0')
        except NlError as e:
            print(f'{name} {e.errno} {e.extack}')
        print(f'{after} {relation(own.ports().get(port))}')

    step('bind-pod-socket', pod, CMD_BIND, 'after-pod-bind')
    step('bind-own-socket', own, CMD_BIND, 'after-own-bind')
    step('unbind-pod-socket', pod, CMD_UNBIND, 'after-pod-unbind')
    step('unbind-own-socket', own, CMD_UNBIND, 'after-own-unbind')
    sys.stdout.flush()
    parent.close()
    os.waitpid(pid, 0)
    return 0


def churn(netns, secy, port, stop):
    """See the module's doc string."""
    payload = requests(socket.if_nametoindex(port), secy, os.open(netns, os.O_RDONLY))
    done = {'bind': 0, 'unbind': 0, 'dump': 0}
    errors = {}
    g = None
    while not os.path.exists(stop):
        try:
            g = g or Genl()
            for name, cmd in (('bind', CMD_BIND), ('dump', None),
                              ('unbind', CMD_UNBIND), ('dump', None)):
                if cmd is None:
                    g.ports()
                else:
                    g.request(g.family, cmd, 0, payload[cmd])
                done[name] += 1
        except OSError as e:
            # The family went away (ENOENT), or with it a request in
            # flight; refusals (a port not bound) are counted too.
            errors[os.strerror(e.errno)] = errors.get(os.strerror(e.errno), 0) + 1
            if g is not None:
                g.sock.close()
            g = None
            time.sleep(0.01)
    print(json.dumps({'done': done, 'errors': errors}))
    return 0


def uint(payload):
    """The value of a uint attribute (NLA_UINT): 4 bytes, or 8 when it does
    not fit them, in host order; any other length is a malformed reply."""
    if len(payload) not in (4, 8):
        raise ValueError(f'a uint attribute of {len(payload)} bytes')
    return int.from_bytes(payload, sys.byteorder)


def generations(ports):
    return [uint(a[A_GENERATION]) for a in ports.values() if A_GENERATION in a]


def reload(ko, cycles, port):
    """See the module's doc string."""
    libc = ctypes.CDLL(None, use_errno=True)
    out = {'cycles': 0, 'bit_set_at_unload': 0, 'unload_waited': 0, 'violations': []}

    def bad(what):
        out['violations'].append(f'cycle {out["cycles"]}: {what}')

    def load():
        fd = os.open(ko, os.O_RDONLY)
        rc = libc.syscall(SYS_FINIT_MODULE, fd, b'', 0)
        err = ctypes.get_errno() if rc else 0
        os.close(fd)
        return err

    for _ in range(cycles):
        out['cycles'] += 1
        g = Genl()
        before = generations(g.ports())
        g.sock.close()
        if not before:
            bad('nothing tracked before the unload')
        bit = feature_bit(port)
        # The churn leaves the port bound for a moment at a time, and the
        # bit is set only then: the first unload waits for such a moment
        # (60 s at most), so that at least one unload clears a set bit
        # whatever the number of cycles (of 20, none found it set once).
        deadline = time.monotonic() + 60
        while out['cycles'] == 1 and not bit and time.monotonic() < deadline:
            time.sleep(0.05)
            bit = feature_bit(port)
        out['bit_set_at_unload'] += bit
        # A dump in flight holds a reference to the module: rmmod says
        # EWOULDBLOCK (O_NONBLOCK), and is tried again.
        for _ in range(500):
            rc = libc.syscall(SYS_DELETE_MODULE, b'macsec_bridge', os.O_NONBLOCK)
            err = ctypes.get_errno() if rc else 0
            if err != errno.EWOULDBLOCK:
                break
            out['unload_waited'] += 1
            time.sleep(0.01)
        if err:
            bad(f'unload: {os.strerror(err)}')
            break
        if feature_bit(port):
            bad(f'{port} keeps its feature bit after the unload')
        err = load()
        if err:
            bad(f'load: {os.strerror(err)}')
            break
        g = Genl()
        ports = g.ports()
        g.sock.close()
        if port not in ports:
            bad(f'{port} not tracked after the load')
        after = generations(ports)
        if before and after and min(after) <= max(before):
            bad(f'generation {min(after)} after the load, {max(before)} before it')
    print(json.dumps(out))
    return 1 if out['violations'] else 0


def verdict(g, port):
    """PORT's protection/reason in a dump ('untracked' if it is none)."""
    return verdict_of(g.ports().get(port))


def readers(port, ifindex):
    """An unprivileged dump and dev-get (see the module's docstring), in a
    child that gives up root: this process keeps its own, to write its
    output wherever it was told."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        code = 1
        try:
            os.setgroups([])
            os.setresgid(65534, 65534, 65534)
            os.setresuid(65534, 65534, 65534)
            g = Genl()
            os.write(w, f'dump {verdict(g, port)}\n'.encode())
            reply = g.request(g.family, CMD_DEV_GET, 0, u32(A_IFINDEX, ifindex))
            os.write(w, f'get {verdict_of(attrs(reply[0][4:]))}\n'.encode())
            code = 0
        except Exception as e:  # said, then the parent fails
            os.write(w, f'error {e!r}\n'.encode())
        os._exit(code)
    os.close(w)
    with os.fdopen(r) as f:
        for line in f:
            print(line, end='', flush=True)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def verdict_of(a):
    """The protection/reason of a port's attributes ('untracked': None)."""
    if a is None:
        return 'untracked'
    p = struct.unpack('I', a[A_PROTECTION])[0]
    r = struct.unpack('I', a[A_REASON])[0] if A_REASON in a else 0
    return f'{PROTECTIONS.get(p, p)}/{REASONS.get(r, r)}'


def secy_faults(netns, lower, port, secy):
    """See the module's doc string."""
    fail = FailNth()
    libc = ctypes.CDLL(None, use_errno=True)
    g = Genl()
    nsfd = os.open(netns, os.O_RDONLY)
    port_ifindex = socket.if_nametoindex(port)
    # From here this thread is in the SecY's namespace; g's socket stays
    # in the port's.
    nscall(libc.setns, nsfd, CLONE_NEWNET)
    rt = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
    rt.bind((0, 0))
    rt.settimeout(60)
    info = attr(IFLA_INFO_KIND, b'macsec\0') + attr(
        IFLA_INFO_DATA | NLA_F_NESTED, attr(IFLA_MACSEC_OFFLOAD, bytes([MACSEC_OFFLOAD_MAC])))
    body = (struct.pack('BBHiII', socket.AF_UNSPEC, 0, 0, 0, 0, 0)
            + attr(IFLA_IFNAME, b'mbf0\0')
            + attr(IFLA_LINK, struct.pack('I', socket.if_nametoindex(lower)))
            + attr(IFLA_LINKINFO | NLA_F_NESTED, info))
    msg = struct.pack('IHHII', 16 + len(body), RTM_NEWLINK,
                      NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL, 1, 0) + body

    def add(n):
        """Creates mbf0 with the n-th allocation failing (see faulted)."""
        return faulted(fail, rt, msg, n)

    def exists():
        try:
            return socket.if_nametoindex('mbf0')
        except OSError:
            return 0

    def bind(ifindex):
        g.request(g.family, CMD_BIND, 0, requests(port_ifindex, ifindex, nsfd)[CMD_BIND])

    def unbind():
        g.request(g.family, CMD_UNBIND, 0, requests(port_ifindex, 0)[CMD_UNBIND])

    def delete():
        subprocess.run(['ip', 'link', 'del', 'mbf0'], check=True)

    # A creation's allocations are not the same in number every time:
    # index trees (ifindexes, sysfs node ids) grow a node now and then, and
    # the module's two allocations move with them: one run counted 290
    # where the others counted 317 and the module's was the 292nd, outside
    # a window that ended at the count. So each pass counts again, and
    # sweeps from MARGIN above its count (a fault past the last allocation
    # fails nothing: mbf0 is created and tracked) to WINDOW below; a pass
    # can still step over them, and another is made, up to PASSES.
    WINDOW, MARGIN, PASSES = 100, 32, 3

    def sweep(total):
        """The fault that leaves mbf0 untracked, (n, errno), with PORT
        bound to it; None if none from MARGIN above TOTAL to WINDOW below
        does, after printing what each fault led to."""
        seen = []
        for n in range(total + MARGIN, max(total - WINDOW, 0), -1):
            err, _ = add(n)
            ifindex = exists()
            if not ifindex:
                seen.append((n, f'errno {err}, not created'))
                continue
            bind(ifindex)
            v = verdict(g, port)
            if v == 'none/unknown':
                return n, err
            seen.append((n, f'errno {err}, {v}'))
            unbind()
            delete()
        # Runs of faults that led to the same outcome, for whoever reads a
        # failure.
        runs = []
        for n, what in seen:
            if runs and runs[-1][2] == what:
                runs[-1][1] = n
            else:
                runs.append([n, n, what])
        print('; '.join(f'{a}..{b}: {w}' if a != b else f'{a}: {w}' for a, b, w in runs))
        return None

    for p in range(1, PASSES + 1):
        total = count_allocations('creating mbf0', add, exists, delete)
        if total is None:
            return 1
        found = sweep(total)
        if found:
            break
        print(f'creating mbf0: {total} allocations; pass {p}: no fault from '
              f'{total + MARGIN} down to {max(total - WINDOW, 0) + 1} left it untracked')
    else:
        return 1
    n, err = found
    print(f'creating mbf0: {total} allocations; failing allocation {n} left it untracked '
          f'(errno {err}, pass {p}): {port} bound to it says none/unknown')
    ops = subprocess.run(['ip', 'macsec', 'add', 'mbf0', 'tx', 'sa', '0', 'pn', '1', 'on',
                          'key', '01', '0' * 32], capture_output=True, text=True)
    after_op = verdict(g, port)
    unbind()
    bind(secy)
    rebound = verdict(g, port)
    unbind()
    delete()
    print(f'an active TX SA on mbf0 (exit {ops.returncode}): {port} says {after_op}; '
          f'bound to the protecting SecY: {rebound}')
    ok = ops.returncode == 0 and after_op == 'none/unknown' and rebound == 'offload-mac/none'
    return 0 if ok else 1


def link_msg(name, up=None, netns_fd=None):
    """An RTM_NEWLINK for the device NAME (looked up by name): set up, or
    into the namespace file descriptor NETNS_FD."""
    ifi = struct.pack('BxHiII', socket.AF_UNSPEC, 0, 0, IFF_UP if up else 0,
                      IFF_UP if up is not None else 0)
    body = ifi + attr(IFLA_IFNAME, name.encode() + b'\0')
    if netns_fd is not None:
        body += attr(IFLA_NET_NS_FD, struct.pack('I', netns_fd))
    return struct.pack('IHHII', 16 + len(body), RTM_NEWLINK, NLM_F_REQUEST | NLM_F_ACK, 1, 0) + body


def rt_request(sock, msg):
    """Sends an rtnetlink request; its errno (0: done)."""
    sock.send(msg)
    return ack(sock)


def lower_faults(netns, nic, port, secy, path):
    """See the module's doc string."""
    if path not in ('interposer', 'notifier'):
        print(f'unknown path {path}')
        return 1
    fail = FailNth()
    libc = ctypes.CDLL(None, use_errno=True)
    g = Genl()
    home = os.open('/proc/self/ns/net', os.O_RDONLY)
    away = os.open(netns, os.O_RDONLY)
    rt = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
    rt.bind((0, 0))
    rt.settimeout(60)
    # A socket in NETNS, for the NIC once it is there.
    nscall(libc.setns, away, CLONE_NEWNET)
    rt_away = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
    rt_away.bind((0, 0))
    rt_away.settimeout(60)
    nscall(libc.setns, home, CLONE_NEWNET)
    kmsg = os.open('/dev/kmsg', os.O_RDONLY | os.O_NONBLOCK)
    os.lseek(kmsg, 0, os.SEEK_END)
    move = link_msg(nic, netns_fd=away)

    def warned():
        """Whether the kernel logged, since the last call, that the module
        cannot observe NIC."""
        hit = False
        while True:
            try:
                rec = os.read(kmsg, 8192).decode(errors='replace')
            except BlockingIOError:
                return hit
            except OSError:  # a record overwritten before it was read
                continue
            hit |= f'{nic}: cannot observe its MACsec offload' in rec

    def add(n):
        """NIC into NETNS with the n-th allocation failing (see faulted)."""
        return faulted(fail, rt, move, n)

    def exists():
        return rt_request(rt_away, link_msg(nic, up=True)) == 0

    def delete():
        """NIC back, and up."""
        if rt_request(rt_away, link_msg(nic, netns_fd=home)) or rt_request(rt, link_msg(nic, up=True)):
            raise OSError(f'cannot bring {nic} back')

    def settled(want):
        """PORT's verdict once it is WANT, or after 10 s: a VLAN takes its
        real device's carrier from the link watch, a moment after the
        device comes up."""
        end = time.monotonic() + 10
        while True:
            v = verdict(g, port)
            if v == want or time.monotonic() > end:
                return v
            time.sleep(0.05)

    def settle():
        """A key change: SA 1 added and made the encoding SA, its record
        in the driver made afresh."""
        subprocess.run(['ip', 'macsec', 'add', secy, 'tx', 'sa', '1', 'pn', '1', 'on',
                        'key', '02', '0' * 32], check=True)
        subprocess.run(['ip', 'link', 'set', secy, 'type', 'macsec', 'encodingsa', '1'],
                       check=True)
        return settled('offload-mac/none')

    # The module's allocation has been 7 to 13 from the end of the move.
    # Some 90 from the end is one in device_rename(), whose failure
    # __dev_change_net_namespace() meets with WARN_ON(); every later move
    # of the device then warns again (-ENOENT): a pass that missed the module
    # (one in about five, not understood) went on down to there. 60 stays
    # clear of it; five passes make all missing rare.
    WINDOW, MARGIN, PASSES = 60, 16, 5 if path == 'interposer' else 1
    bad = []
    found = None
    for p in range(1, PASSES + 1):
        total = count_allocations(f'moving {nic}', add, exists, delete)
        if total is None:
            return 1
        warned()
        for n in range(total + MARGIN, max(total - WINDOW, 0), -1):
            add(n)
            if not exists():
                continue
            hit = warned()
            # Unknown comes before lower-down among the reasons: no wait.
            there = verdict(g, port) if hit else settled('offload-mac/none')
            delete()
            if hit:
                back = verdict(g, port)
                found = (n, p, total, there, back, settle())
                break
            again = settled('offload-mac/none')
            if (there, again) != ('offload-mac/none',) * 2:
                bad.append(f'fault {n} missed the module, yet {port} says {there} with {nic} '
                           f'up there, {again} back')
        if found:
            break
        print(f'moving {nic}: {total} allocations; pass {p}: no fault from {total + MARGIN} '
              f'down to {max(total - WINDOW, 0) + 1} reached the module')
    for b in bad[:10]:
        print(b)
    if path == 'notifier':
        after = settle()
        print(f'moving {nic}: no fault of the move reached the module; {port} says {after} '
              f'after a key change')
        return 0 if not found and not bad and after == 'offload-mac/none' else 1
    if not found:
        return 1
    n, p, total, there, back, settled = found
    print(f'moving {nic}: {total} allocations; failing allocation {n} (pass {p}) left it '
          f'unobserved: {port} says {there} with {nic} up there; {back} back and observed '
          f'again; {settled} once a key change settled the driver')
    ok = (there, back, settled) == ('none/unknown', 'none/unknown', 'offload-mac/none')
    return 0 if ok and not bad else 1


def main():
    if sys.argv[1] == 'lower-faults':
        return lower_faults(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6])
    if sys.argv[1] == 'secy-faults':
        return secy_faults(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
    if sys.argv[1] == 'churn':
        return churn(sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5])
    if sys.argv[1] == 'reload':
        return reload(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    if sys.argv[1] == 'faults':
        return faults(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5],
                      sys.argv[6] if len(sys.argv) > 6 else None)
    if sys.argv[1] == 'rdma-faults':
        return rdma_faults(sys.argv[2], sys.argv[3])
    if sys.argv[1] == 'opener':
        return opener(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    if sys.argv[1] == 'readers':
        return readers(sys.argv[2], int(sys.argv[3]))
    g = Genl()
    if sys.argv[1] == 'bind':
        secy = int(sys.argv[2])
        for port in sys.argv[3:]:
            g.request(g.family, CMD_BIND, 0, requests(int(port), secy)[CMD_BIND])
        return 0
    if sys.argv[1] == 'bind-pairs':
        for line in sys.stdin:
            port, secy = map(int, line.split())
            g.request(g.family, CMD_BIND, 0, requests(port, secy)[CMD_BIND])
        return 0
    if sys.argv[1] == 'gids':
        a = port_attrs(g, sys.argv[2])
        print(-1 if a is None else sum(k == A_PROTECTED_GID for k, _ in a))
        return 0
    if sys.argv[1] == 'dump-names':
        want, seen = int(sys.argv[2]), set()
        for _ in range(int(sys.argv[3])):
            names = [n for n, a in g.ports().items()
                     if struct.unpack_from('I', a[A_IFINDEX])[0] == want]
            seen.add(names[0] if names else '')
        print(json.dumps(sorted(seen)))
        return 0
    if sys.argv[1] == 'dump-split':
        g.send(g.family, CMD_DEV_GET, NLM_F_DUMP, b'')
        parts, intr, names, done = 0, False, [], False
        while not done:
            batch = g.messages()
            parts += 1
            for kind, flags, body in batch:
                if kind == NLMSG_DONE:
                    done = True
                elif kind == NLMSG_ERROR:
                    print(json.dumps({'error': struct.unpack_from('i', body)[0]}))
                    return 1
                else:
                    intr |= bool(flags & NLM_F_DUMP_INTR)
                    names.append(attrs(body[4:])[A_IFNAME].rstrip(b'\0').decode())
            if parts == 1:
                subprocess.run(sys.argv[2], shell=True, check=True)
        print(json.dumps({'parts': parts, 'intr': intr, 'ifnames': names}))
        return 0
    return 2


if __name__ == '__main__':
    sys.exit(main())
