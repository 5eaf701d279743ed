#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A randomized driver of everything the module follows, checking the
contract after every operation.

    torture.py SEED OPS KO NSIM TV H0 DPU POD

From SEED it draws OPS operations: SecYs added and deleted on the
netdevsim port NSIM (offloaded or not) and on the veth TV (software), TX
SAs added, deleted, switched on and off, the encoding SA, encrypt and
protect changed, offload switched, links up and down, the DPU's SecY
(`dpu0` in namespace DPU) switched, the host port H0 bound to it and
unbound, SecYs moved into namespace POD and back, a VLAN over NSIM added
and deleted, RXE devices added and deleted on SecYs, `ethtool -K` on H0,
and the module (file KO) unloaded and loaded. Meanwhile one thread dumps
the family without pause and another flaps a dummy netdev (`tw0`).

It speaks netlink itself (rtnetlink, the MACsec family, ethtool's ioctl,
the macsec-bridge family); only RXE and `ethtool -K`, rare, run a program.
After every operation, in each namespace, it checks:

- a port whose feature bit is the module's has it set exactly when it
  advertises `offload-*`;
- no port advertises more than a reference computed from the kernel's own
  view of its SecY (the MACsec family's dump and the links' flags): offload
  only when the SecY is up on a lower that is up with carrier, protects and
  encrypts, and its encoding SA is there and active, and only the kind the
  SecY has;
- every generation a dump shows was announced, in a notification equal to
  the dump on every field, and generations are unique and only grow,
  across reloads too;
- the bound port is bound exactly when this run's own record says so
  (binds and unbinds it made, a reload ending the binding), never on the
  module's word: a binding that outlived its unbind or a reload, or one
  that vanished, is a violation, whatever its SecY provides.

Prints the seed, the operations by kind (done and refused), the checks made
and one line per violation with the last operations before it; exits 1 on
a violation. The same seed draws the same operations.
"""

import ctypes
import errno
import fcntl
import json
import os
import random
import socket
import struct
import subprocess
import sys
import threading
import time

from mb_genl import NlError, attr, attrs

NETLINK_ROUTE, NETLINK_GENERIC = 0, 16
NLM_F_REQUEST, NLM_F_ACK, NLM_F_DUMP = 0x1, 0x4, 0x300
NLM_F_CREATE, NLM_F_EXCL = 0x400, 0x200
NLMSG_ERROR, NLMSG_DONE = 2, 3
SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, NETLINK_EXT_ACK = 270, 1, 11
NETLINK_CAP_ACK, NLM_F_ACK_TLVS, NLMSGERR_ATTR_MSG = 10, 0x200, 1
RTM_NEWLINK, RTM_DELLINK, RTM_GETLINK = 16, 17, 18
IFLA_IFNAME, IFLA_LINK, IFLA_LINKINFO, IFLA_NET_NS_FD = 3, 5, 18, 28
IFLA_LINK_NETNSID = 37
IFLA_INFO_KIND, IFLA_INFO_DATA = 1, 2
IFLA_VLAN_ID = 1
IFLA_MACSEC_PORT, IFLA_MACSEC_CIPHER_SUITE, IFLA_MACSEC_ENCODING_SA = 2, 4, 6
IFLA_MACSEC_ENCRYPT, IFLA_MACSEC_PROTECT, IFLA_MACSEC_OFFLOAD = 7, 8, 15
IFF_UP, IFF_LOWER_UP = 0x1, 0x10000
GENL_ID_CTRL, CTRL_CMD_GETFAMILY = 0x10, 3
CTRL_ATTR_FAMILY_ID, CTRL_ATTR_FAMILY_NAME, CTRL_ATTR_MCAST_GROUPS = 1, 2, 7
CTRL_ATTR_MCAST_GRP_NAME, CTRL_ATTR_MCAST_GRP_ID = 1, 2
CLONE_NEWNET = 0x40000000
SYS_FINIT_MODULE, SYS_DELETE_MODULE = 313, 176

# The MACsec family (include/uapi/linux/if_macsec.h).
MACSEC_CMD_GET_TXSC, MACSEC_CMD_ADD_TXSA, MACSEC_CMD_DEL_TXSA = 0, 4, 5
MACSEC_CMD_UPD_TXSA, MACSEC_CMD_UPD_OFFLOAD = 6, 10
MACSEC_ATTR_IFINDEX, MACSEC_ATTR_SA_CONFIG, MACSEC_ATTR_SECY = 1, 3, 4
MACSEC_ATTR_TXSA_LIST, MACSEC_ATTR_OFFLOAD = 5, 9
MACSEC_SECY_ATTR_ENCODING_SA, MACSEC_SECY_ATTR_CIPHER_SUITE = 2, 4
MACSEC_SECY_ATTR_PROTECT, MACSEC_SECY_ATTR_ENCRYPT = 6, 10
MACSEC_SA_ATTR_AN, MACSEC_SA_ATTR_ACTIVE, MACSEC_SA_ATTR_PN = 1, 2, 3
MACSEC_SA_ATTR_KEY, MACSEC_SA_ATTR_KEYID = 4, 5
MACSEC_SA_ATTR_SSCI, MACSEC_SA_ATTR_SALT = 8, 9
MACSEC_OFFLOAD_ATTR_TYPE = 1
CIPHERS = {'gcm-aes-128': 0x0080C20001000001, 'gcm-aes-256': 0x0080C20001000002,
           'gcm-aes-xpn-256': 0x0080C20001000004}
XPN = {0x0080C20001000003, 0x0080C20001000004}
KEY_LEN = {0x0080C20001000001: 16, 0x0080C20001000002: 32,
           0x0080C20001000003: 16, 0x0080C20001000004: 32}

# The macsec-bridge family (Documentation/netlink/specs/macsec_bridge.yaml).
MB_DEV_GET, MB_BIND, MB_UNBIND = 1, 3, 4
MB_ATTRS = {1: 'ifindex', 2: 'ifname', 3: 'rdma-dev', 4: 'protection', 5: 'reason',
            6: 'relation', 7: 'secy-ifindex', 8: 'sci', 9: 'cipher', 10: 'encrypt',
            11: 'feature-owner', 12: 'generation', 14: 'secy-netnsid'}
PROTECTION = {0: 'none', 1: 'software', 2: 'offload-mac', 3: 'offload-phy'}
RELATION = {0: 'self', 1: 'upper', 2: 'bound'}
# The reference's reason for an upper port whose SecY protects: only then
# may it list protected GIDs.
UPPER_PROTECTS = 'upper: the SecY carries only its own GIDs'
OWNER = {0: 'bridge', 1: 'driver'}
RANK = {'none': 0, 'software': 1, 'offload-mac': 2, 'offload-phy': 2}

# ethtool's ioctl (include/uapi/linux/ethtool.h).
SIOCETHTOOL = 0x8946
ETHTOOL_GSSET_INFO, ETHTOOL_GSTRINGS, ETHTOOL_GFEATURES = 0x37, 0x1b, 0x3a
ETH_SS_FEATURES = 4

libc = ctypes.CDLL(None, use_errno=True)


def u8(kind, v):
    return attr(kind, struct.pack('B', v))


def be16(kind, v):
    return attr(kind, struct.pack('>H', v))


def u32(kind, v):
    return attr(kind, struct.pack('I', v))


def u64(kind, v):
    return attr(kind, struct.pack('Q', v))


def s(kind, v):
    return attr(kind, v.encode() + b'\0')


def nest(kind, payload):
    return attr(kind | 0x8000, payload)


def each(buf):
    """Every attribute of BUF in order, repeats kept: (kind, payload)."""
    while len(buf) >= 4:
        n, kind = struct.unpack_from('HH', buf)
        if n < 4:
            return
        yield kind & 0x3fff, buf[4:n]
        buf = buf[(n + 3) & ~3:]


def num(b):
    return int.from_bytes(b[:8] if len(b) >= 8 else b, 'little')


class Sock:
    """A netlink socket of PROTO in the current namespace."""

    def __init__(self, proto):
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, proto)
        self.sock.bind((0, 0))
        self.sock.setsockopt(SOL_NETLINK, NETLINK_EXT_ACK, 1)
        self.sock.setsockopt(SOL_NETLINK, NETLINK_CAP_ACK, 1)
        self.seq = 0

    def _send(self, kind, flags, payload):
        self.seq += 1
        self.sock.send(struct.pack('IHHII', 16 + len(payload), kind,
                                   NLM_F_REQUEST | flags, self.seq, 0) + payload)

    def _read(self):
        data = self.sock.recv(1 << 20)
        while len(data) >= 16:
            n, kind, flags, seq, _ = struct.unpack_from('IHHII', data)
            yield kind, flags, seq, data[16:n]
            data = data[(n + 3) & ~3:]

    def do(self, kind, flags, payload):
        """A request with an ack: its replies; raises NlError."""
        self._send(kind, flags | NLM_F_ACK, payload)
        out = []
        while True:
            for mkind, mflags, seq, body in self._read():
                if seq != self.seq:
                    continue
                if mkind == NLMSG_ERROR:
                    err = struct.unpack_from('i', body)[0]
                    if err:
                        tlvs = attrs(body[20:]) if mflags & NLM_F_ACK_TLVS else {}
                        raise NlError(-err, tlvs.get(NLMSGERR_ATTR_MSG, b'')
                                      .rstrip(b'\0').decode(errors='replace'))
                    return out
                out.append(body)

    def dump(self, kind, payload):
        self._send(kind, NLM_F_DUMP, payload)
        out = []
        while True:
            for mkind, _flags, seq, body in self._read():
                if seq != self.seq:
                    continue
                if mkind == NLMSG_DONE:
                    # A dump that failed part-way says so here.
                    err = struct.unpack_from('i', body)[0] if len(body) >= 4 else 0
                    if err:
                        raise NlError(-err, 'dump')
                    return out
                if mkind == NLMSG_ERROR:
                    raise NlError(-struct.unpack_from('i', body)[0], '')
                out.append(body)


def genl(cmd, payload):
    return struct.pack('BBH', cmd, 1, 0) + payload


def family(sock, name):
    """(id, {group name: id}) of generic netlink family NAME."""
    reply = sock.do(GENL_ID_CTRL, 0, genl(CTRL_CMD_GETFAMILY,
                                           s(CTRL_ATTR_FAMILY_NAME, name)))[0]
    a = attrs(reply[4:])
    groups = {}
    for _, g in each(a.get(CTRL_ATTR_MCAST_GROUPS, b'')):
        ga = attrs(g)
        groups[ga[CTRL_ATTR_MCAST_GRP_NAME].rstrip(b'\0').decode()] = \
            struct.unpack('I', ga[CTRL_ATTR_MCAST_GRP_ID])[0]
    return struct.unpack('H', a[CTRL_ATTR_FAMILY_ID][:2])[0], groups


def port_object(body):
    """A macsec_bridge dev object from a genl message body."""
    o = {}
    for kind, v in each(body[4:]):
        name = MB_ATTRS.get(kind)
        if name is None:
            continue
        if name == 'ifname':
            o[name] = v.rstrip(b'\0').decode()
        elif name == 'rdma-dev':
            o.setdefault(name, []).append(v.rstrip(b'\0').decode())
        elif name == 'protection':
            o[name] = PROTECTION.get(num(v), num(v))
        elif name == 'relation':
            o[name] = RELATION.get(num(v), num(v))
        elif name == 'feature-owner':
            o[name] = OWNER.get(num(v), num(v))
        elif name == 'secy-ifindex':
            o[name] = struct.unpack('i', v[:4])[0]
        else:
            o[name] = num(v)
    return o


class Ns:
    """One namespace: its sockets, made inside it."""

    def __init__(self, name, path):
        self.name = name
        home = os.open('/proc/self/ns/net', os.O_RDONLY)
        fd = os.open(path, os.O_RDONLY)
        self.fd = fd
        if libc.setns(fd, CLONE_NEWNET):
            raise OSError(ctypes.get_errno(), 'setns')
        try:
            self.rt = Sock(NETLINK_ROUTE)
            self.gn = Sock(NETLINK_GENERIC)
            self.mon = Sock(NETLINK_GENERIC)
            self.mon.sock.setblocking(False)
            self.ioc = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        finally:
            libc.setns(home, CLONE_NEWNET)
            os.close(home)
        self.macsec = family(self.gn, 'macsec')[0]
        self.mb = None

    def resolve(self, listen=True):
        """Finds the module's family again (it changes at a reload) and
        subscribes the monitor; False while the module is not there."""
        try:
            self.mb, groups = family(self.gn, 'macsec-bridge')
        except OSError:
            self.mb = None
            return False
        if listen:
            self.mon.sock.setsockopt(SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, groups['monitor'])
        return True

    def notes(self):
        """The notifications queued on the monitor, in order."""
        out = []
        while True:
            try:
                data = self.mon.sock.recv(1 << 20)
            except BlockingIOError:
                return out
            while len(data) >= 16:
                n, kind, _flags, _seq, _pid = struct.unpack_from('IHHII', data)
                if kind == self.mb:
                    out.append(port_object(data[16:n]))
                data = data[(n + 3) & ~3:]

    def links(self):
        """Every netdev: name -> (ifindex, flags, link, whether the link is
        in another namespace)."""
        out = {}
        for body in self.rt.dump(RTM_GETLINK, ifinfo()):
            _, _, index, flags, _ = struct.unpack_from('BxHiII', body)
            a = attrs(body[16:])
            link = struct.unpack('i', a[IFLA_LINK][:4])[0] if IFLA_LINK in a else None
            out[a[IFLA_IFNAME].rstrip(b'\0').decode()] = (index, flags, link,
                                                          IFLA_LINK_NETNSID in a)
        return out

    def secys(self):
        """Every SecY, by ifindex, as the MACsec family shows it."""
        out = {}
        for body in self.gn.dump(self.macsec, genl(MACSEC_CMD_GET_TXSC, b'')):
            a = attrs(body[4:])
            idx = struct.unpack('I', a[MACSEC_ATTR_IFINDEX][:4])[0]
            sa = attrs(a.get(MACSEC_ATTR_SECY, b''))
            tx = {}
            for _, one in each(a.get(MACSEC_ATTR_TXSA_LIST, b'')):
                t = attrs(one)
                tx[num(t[MACSEC_SA_ATTR_AN])] = bool(num(t.get(MACSEC_SA_ATTR_ACTIVE, b'\0')))
            off = attrs(a.get(MACSEC_ATTR_OFFLOAD, b'')).get(MACSEC_OFFLOAD_ATTR_TYPE, b'\0')
            out[idx] = {'encoding_sa': num(sa.get(MACSEC_SECY_ATTR_ENCODING_SA, b'\0')),
                        'protect': bool(num(sa.get(MACSEC_SECY_ATTR_PROTECT, b'\0'))),
                        'encrypt': bool(num(sa.get(MACSEC_SECY_ATTR_ENCRYPT, b'\0'))),
                        'tx_sa': tx, 'offload': num(off)}
        return out

    def ports(self):
        return [port_object(b) for b in self.gn.dump(self.mb, genl(MB_DEV_GET, b''))]

    def feature(self, ifname, index):
        """Whether feature bit INDEX (ethtool's string set) is active."""
        words = (index // 32) + 1
        buf = bytearray(struct.pack('II', ETHTOOL_GFEATURES, words) + b'\0' * 16 * words)
        addr = ctypes.addressof(ctypes.c_char.from_buffer(buf))
        ifr = struct.pack('16sQ', ifname.encode(), addr) + b'\0' * 16
        fcntl.ioctl(self.ioc.fileno(), SIOCETHTOOL, ifr)
        off = 8 + 16 * (index // 32)
        active = struct.unpack_from('I', buf, off + 8)[0]
        return bool(active & (1 << (index % 32)))

    def feature_index(self, ifname, name):
        info = bytearray(struct.pack('IIQ', ETHTOOL_GSSET_INFO, 0, 1 << ETH_SS_FEATURES)
                         + b'\0' * 4)
        addr = ctypes.addressof(ctypes.c_char.from_buffer(info))
        fcntl.ioctl(self.ioc.fileno(), SIOCETHTOOL,
                    struct.pack('16sQ', ifname.encode(), addr) + b'\0' * 16)
        count = struct.unpack_from('I', info, 16)[0]
        strs = bytearray(struct.pack('III', ETHTOOL_GSTRINGS, ETH_SS_FEATURES, count)
                         + b'\0' * 32 * count)
        addr = ctypes.addressof(ctypes.c_char.from_buffer(strs))
        fcntl.ioctl(self.ioc.fileno(), SIOCETHTOOL,
                    struct.pack('16sQ', ifname.encode(), addr) + b'\0' * 16)
        for i in range(count):
            if strs[12 + 32 * i:12 + 32 * (i + 1)].rstrip(b'\0').decode() == name:
                return i
        raise RuntimeError(f'no feature {name}')


def ifinfo(index=0, flags=0, change=0):
    return struct.pack('BxHiII', 0, 0, index, flags, change)


class Torture:
    def __init__(self, seed, ko, nsim, tv, h0, spaces):
        self.rng = random.Random(seed)
        self.ko, self.nsim, self.tv, self.h0 = ko, nsim, tv, h0
        self.ns = spaces
        self.host, self.dpu, self.pod = spaces['host'], spaces['dpu'], spaces['pod']
        self.done, self.refused, self.checks = {}, {}, 0
        self.strict_checks = self.offload_checks = 0
        self.check_seconds = 0.0
        # Every port whose bit was the module's; the reader waits on this
        # while an operation is judged before any dump.
        self.owned = set()
        self.gate = threading.Lock()
        self.violations = []
        self.history = []
        # Per (namespace, ifindex): the generations announced, and the
        # objects by generation; every generation seen anywhere.
        self.announced = {}
        self.seen = set()
        self.floor = 0
        self.bit = self.host.feature_index(h0, 'macsec-hw-offload')
        # This run's own record: whether h0 is bound to dpu0 now.
        self.bound = False
        self.secy_names = [f'mst{i}' for i in range(5)]

    # ---- operations -------------------------------------------------------

    def where(self, name):
        """The namespace a host netdev (a SecY, a lower, the port h0) is in
        now, and its links."""
        for ns in (self.host, self.pod):
            links = ns.links()
            if name in links:
                return ns, links
        return None, None

    def op_secy_add(self):
        name = self.rng.choice(self.secy_names)
        lower = self.rng.choice([self.nsim, self.nsim, self.tv, 'tvl0'])
        offload = 2 if lower != self.tv and self.rng.random() < 0.8 else 0
        cipher = self.rng.choice(list(CIPHERS.values()))
        port, enc = self.rng.randint(1, 4), self.rng.random() < 0.8
        links = self.host.links()
        if lower not in links:
            raise NlError(19, f'{lower} is not here')
        data = (be16(IFLA_MACSEC_PORT, port) + u64(IFLA_MACSEC_CIPHER_SUITE, cipher)
                + u8(IFLA_MACSEC_ENCRYPT, enc) + u8(IFLA_MACSEC_OFFLOAD, offload))
        info = nest(IFLA_LINKINFO, s(IFLA_INFO_KIND, 'macsec') + nest(IFLA_INFO_DATA, data))
        self.host.rt.do(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL,
                        ifinfo() + s(IFLA_IFNAME, name) + u32(IFLA_LINK, links[lower][0]) + info)
        return f'{name} on {lower} port {port} offload {offload} encrypt {enc:d}'

    def pick_secy(self):
        name = self.rng.choice(self.secy_names + ['dpu0'])
        if name == 'dpu0':
            return self.dpu, name, self.dpu.links().get(name)
        ns, links = self.where(name)
        if ns is None:
            return None, name, None
        return ns, name, links[name]

    def op_secy_del(self):
        ns, name, link = self.pick_secy()
        if link is None or name == 'dpu0':
            raise NlError(19, 'no such SecY')
        ns.rt.do(RTM_DELLINK, 0, ifinfo(link[0]))
        return name

    def sa_request(self, ns, link, an, active, with_key):
        sa = u8(MACSEC_SA_ATTR_AN, an) + u8(MACSEC_SA_ATTR_ACTIVE, active)
        if with_key:
            suite = self.cipher_of(ns, link[0])
            key = bytes(range(KEY_LEN.get(suite, 16)))
            sa += attr(MACSEC_SA_ATTR_KEYID, bytes(16)) + attr(MACSEC_SA_ATTR_KEY, key)
            if suite in XPN:
                sa += u64(MACSEC_SA_ATTR_PN, 1) + u32(MACSEC_SA_ATTR_SSCI, 1) + \
                    attr(MACSEC_SA_ATTR_SALT, bytes(12))
            else:
                sa += u32(MACSEC_SA_ATTR_PN, 1)
        return u32(MACSEC_ATTR_IFINDEX, link[0]) + nest(MACSEC_ATTR_SA_CONFIG, sa)

    def cipher_of(self, ns, index):
        for body in ns.gn.dump(ns.macsec, genl(MACSEC_CMD_GET_TXSC, b'')):
            a = attrs(body[4:])
            if struct.unpack('I', a[MACSEC_ATTR_IFINDEX][:4])[0] == index:
                return num(attrs(a[MACSEC_ATTR_SECY]).get(MACSEC_SECY_ATTR_CIPHER_SUITE, b'\0'))
        return 0

    def op_txsa(self, cmd):
        ns, name, link = self.pick_secy()
        an, active = self.rng.randrange(4), self.rng.random() < 0.7
        if link is None:
            raise NlError(19, 'no such SecY')
        if cmd == MACSEC_CMD_DEL_TXSA:
            # macsec.c refuses to delete an active SA (EBUSY): delete an
            # inactive one where there is one.
            idle = sorted(a for a, on in ns.secys().get(link[0], {}).get('tx_sa', {}).items()
                          if not on)
            if idle:
                an = idle[an % len(idle)]
        ns.gn.do(ns.macsec, 0, genl(cmd, self.sa_request(ns, link, an, active,
                                                           cmd == MACSEC_CMD_ADD_TXSA)))
        return f'{name} an {an} active {active:d}'

    def op_txsa_add(self):
        return self.op_txsa(MACSEC_CMD_ADD_TXSA)

    def op_txsa_del(self):
        return self.op_txsa(MACSEC_CMD_DEL_TXSA)

    def op_txsa_upd(self):
        return self.op_txsa(MACSEC_CMD_UPD_TXSA)

    def op_secy_set(self):
        ns, name, link = self.pick_secy()
        what = self.rng.choice(['encoding_sa', 'encrypt', 'protect'])
        v = self.rng.randrange(4) if what == 'encoding_sa' else self.rng.random() < 0.7
        if link is None:
            raise NlError(19, 'no such SecY')
        kind = {'encoding_sa': IFLA_MACSEC_ENCODING_SA, 'encrypt': IFLA_MACSEC_ENCRYPT,
                'protect': IFLA_MACSEC_PROTECT}[what]
        info = nest(IFLA_LINKINFO, s(IFLA_INFO_KIND, 'macsec') + nest(IFLA_INFO_DATA,
                                                                     u8(kind, int(v))))
        ns.rt.do(RTM_NEWLINK, 0, ifinfo(link[0]) + info)
        return f'{name} {what} {int(v)}'

    def op_offload(self):
        ns, name, link = self.pick_secy()
        t = self.rng.choice([0, 2])
        if link is None:
            raise NlError(19, 'no such SecY')
        ns.gn.do(ns.macsec, 0, genl(MACSEC_CMD_UPD_OFFLOAD, u32(MACSEC_ATTR_IFINDEX, link[0])
                                    + nest(MACSEC_ATTR_OFFLOAD,
                                           u8(MACSEC_OFFLOAD_ATTR_TYPE, t))))
        return f'{name} offload {t}'

    def op_link(self):
        cands = [(None, n) for n in [self.nsim, self.tv, self.h0]]
        cands += [(self.dpu, 'dpu0'), (self.dpu, 'tup0')]
        ns, name, link = self.pick_secy()
        if link is not None:
            cands.append((ns, name))
        ns, name = self.rng.choice(cands)
        up = self.rng.random() < 0.6
        if ns is None:
            ns, links = self.where(name)
        else:
            links = ns.links()
        if not links or name not in links:
            raise NlError(19, 'no such netdev')
        ns.rt.do(RTM_NEWLINK, 0, ifinfo(links[name][0], IFF_UP if up else 0, IFF_UP))
        return f'{name} {"up" if up else "down"}'

    def op_bind(self):
        ns, links = self.where(self.h0)
        secy = self.dpu.links()['dpu0'][0]
        ns.gn.do(ns.mb, 0, genl(MB_BIND, u32(1, links[self.h0][0]) + u32(7, secy) +
                                u32(15, self.dpu.fd)))
        self.bound = True
        return f'{self.h0} in {ns.name}'

    def op_unbind(self):
        ns, links = self.where(self.h0)
        try:
            ns.gn.do(ns.mb, 0, genl(MB_UNBIND, u32(1, links[self.h0][0])))
        except NlError as e:
            if e.errno == errno.ENOENT and self.bound:
                self.violation(f'unbind: {self.h0} is not bound, but this run bound it')
            raise
        if not self.bound:
            self.violation(f'unbind: {self.h0} was bound, but this run never bound it '
                           'since its last unbind or reload')
        self.bound = False
        return f'{self.h0} in {ns.name}'

    def op_move(self):
        # A SecY, the lower of the software ones, or the bound port.
        name = self.rng.choice(self.secy_names + [self.tv, self.h0])
        ns, links = self.where(name)
        if ns is None:
            raise NlError(19, 'no such SecY')
        to = self.pod if ns is self.host else self.host
        # What the namespace it leaves heard of it is its last word there:
        # the module tells the old namespace nothing of a move, and the
        # port may come back untracked (no RDMA device followed it), with
        # nothing announced that would replace a note judged stale.
        self.take_notes()
        ns.rt.do(RTM_NEWLINK, 0, ifinfo(links[name][0]) + u32(IFLA_NET_NS_FD, to.fd))
        self.announced.pop((ns.name, links[name][0]), None)
        return f'{name} to {to.name}'

    def op_vlan(self):
        links = self.host.links()
        if 'tvl0' in links:
            self.host.rt.do(RTM_DELLINK, 0, ifinfo(links['tvl0'][0]))
            return 'tvl0 deleted'
        info = nest(IFLA_LINKINFO, s(IFLA_INFO_KIND, 'vlan') +
                    nest(IFLA_INFO_DATA, struct.pack('HHH', 6, IFLA_VLAN_ID, 100) + b'\0\0'))
        self.host.rt.do(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL,
                        ifinfo() + s(IFLA_IFNAME, 'tvl0') +
                        u32(IFLA_LINK, links[self.nsim][0]) + info)
        return 'tvl0 added'

    def run(self, argv):
        r = subprocess.run(argv, capture_output=True, text=True)
        if r.returncode:
            raise NlError(1, (r.stderr or r.stdout).strip()[:80])

    def op_rxe(self):
        name = self.rng.choice(self.secy_names)
        rename = self.rng.random() < 0.3
        # Its name is tx<SecY>, or ty<SecY> once renamed.
        have = [r for r in ('tx' + name, 'ty' + name)
                if os.path.exists(f'/sys/class/infiniband/{r}')]
        if not have:
            self.run(['rdma', 'link', 'add', 'tx' + name, 'type', 'rxe', 'netdev', name])
            return f'tx{name} added'
        rxe = have[0]
        if rename:
            to = ('ty' if rxe.startswith('tx') else 'tx') + name
            self.run(['rdma', 'dev', 'set', rxe, 'name', to])
            return f'{rxe} renamed {to}'
        self.run(['rdma', 'link', 'del', rxe])
        return f'{rxe} deleted'

    def op_ethtool(self):
        on = self.rng.random() < 0.5
        self.run(['ethtool', '-K', self.h0, 'macsec-hw-offload', 'on' if on else 'off'])
        return f'{self.h0} {"on" if on else "off"}'

    def op_reload(self):
        # A dump in flight (the reader's) holds the module: try again.
        for _ in range(100):
            rc = libc.syscall(SYS_DELETE_MODULE, b'macsec_bridge', os.O_NONBLOCK)
            err = ctypes.get_errno() if rc else 0
            if err != errno.EWOULDBLOCK:
                break
            time.sleep(0.01)
        if err:
            raise NlError(err, 'unload')
        # No binding outlives the module.
        self.bound = False
        ns, links = self.where(self.h0)
        if ns is not None and ns.feature(self.h0, self.bit):
            self.violation(f'{self.h0} keeps its feature bit after the unload')
        fd = os.open(self.ko, os.O_RDONLY)
        rc = libc.syscall(SYS_FINIT_MODULE, fd, b'', 0)
        err = ctypes.get_errno() if rc else 0
        os.close(fd)
        if err:
            self.violation(f'load: {os.strerror(err)}')
            raise NlError(err, 'load')
        self.attach()
        return 'reloaded'

    OPS = [('secy_add', 8), ('secy_del', 4), ('txsa_add', 12), ('txsa_del', 5),
           ('txsa_upd', 12), ('secy_set', 10), ('offload', 4), ('link', 12),
           ('bind', 5), ('unbind', 3), ('move', 3), ('vlan', 2), ('rxe', 3),
           ('ethtool', 1), ('reload', 1)]

    # ---- checks -----------------------------------------------------------

    def violation(self, what):
        self.violations.append({'op': len(self.history), 'what': what,
                                'last': self.history[-8:]})

    def attach(self):
        """After a load: the family again in every namespace; what the load
        announced before we listened is taken from a dump, and must be
        above every generation before it."""
        # What the old family announced (the unload's retractions too).
        self.take_notes()
        # ... and no more: an object of the old load describes nothing now
        # (a port it tracked may be no port of this one, a binding does not
        # survive an unload). Generations are still checked against all
        # before (floor, seen).
        self.announced.clear()
        for ns in self.ns.values():
            if not ns.resolve():
                self.violation(f'{ns.name}: the family is not there after the load')
                return
        floor = self.floor
        for ns in self.ns.values():
            for p in ns.ports():
                g = p.get('generation', 0)
                if g <= floor:
                    self.violation(f'{ns.name} {p.get("ifname")}: generation {g} after a '
                                   f'load, not above {floor}')
                self.announced.setdefault((ns.name, p['ifindex']), {})[g] = p
                self.seen.add(g)
                self.floor = max(self.floor, g)

    def take_notes(self):
        for ns in self.ns.values():
            for o in ns.notes():
                key = (ns.name, o.get('ifindex'))
                g = o.get('generation', 0)
                have = self.announced.setdefault(key, {})
                if have and g <= max(have):
                    self.violation(f'{ns.name} {o.get("ifname")}: generation {g} announced '
                                   f'after {max(have)}')
                elif g in self.seen:
                    self.violation(f'{ns.name} {o.get("ifname")}: generation {g} announced '
                                   'for two objects')
                have[g] = o
                self.seen.add(g)
                self.floor = max(self.floor, g)

    def secy_of(self, p, ns, views):
        """The SecY port P (in NS) names, checked against the kernel's own
        links rather than taken on the module's word: (namespace name, its
        link tuple, its MACsec state) or a reason it is not that SecY."""
        rel, idx = p.get('relation'), p.get('secy-ifindex')
        if rel == 'bound':
            where = 'dpu'
        elif 'secy-netnsid' in p:
            where = 'pod' if ns.name == 'host' else 'host'
        else:
            where = ns.name
        links, secys = views[where][0], views[where][1]
        byindex = {v[0]: (k, v) for k, v in links.items()}
        if idx not in byindex or idx not in secys:
            return f'SecY {idx} not in {where}'
        name, link = byindex[idx]
        here = views[ns.name][0].get(p['ifname'])
        if rel == 'self' and (where != ns.name or here is None or here[0] != idx):
            return f'relation self, but SecY {name} is not the port'
        if rel == 'bound' and name != 'dpu0':
            return f'bound, but to {name}, not dpu0'
        if rel == 'upper':
            # The SecY's lower is the port: same namespace, or the other of
            # host and pod when the SecY moved.
            if here is None or link[2] != here[0] or link[3] != (where != ns.name):
                return f'relation upper, but {name} is not on the port'
        return where, link, secys[idx]

    def reference(self, p, ns, views):
        """The most port P (in NS) may claim, from the kernel's view of its
        SecY: (rank, kind, why)."""
        if p.get('relation') is None or p.get('secy-ifindex') is None:
            return 0, 'none', 'no SecY'
        found = self.secy_of(p, ns, views)
        if isinstance(found, str):
            return 0, 'none', found
        where, (_, flags, lower, elsewhere), y = found
        # In this bed a SecY's lower is in its namespace, or in the other
        # of host and pod when one of the two moved.
        other = 'pod' if where == 'host' else 'host'
        lower_links = views[other][0] if elsewhere else views[where][0]
        low = next((v for v in lower_links.values() if v[0] == lower), None)
        why = None
        if not flags & IFF_UP:
            why = 'SecY down'
        elif low is None or low[1] & (IFF_UP | IFF_LOWER_UP) != IFF_UP | IFF_LOWER_UP:
            why = 'lower down'
        elif not y['offload']:
            why = 'offload off'
        elif not y['tx_sa'].get(y['encoding_sa']):
            why = 'encoding SA absent or inactive'
        elif not y['protect']:
            why = 'protect off'
        elif not y['encrypt']:
            why = 'encrypt off'
        if why:
            return 0, 'none', why
        if p.get('relation') == 'upper':
            # The port's own GIDs bypass the SecY on its real device.
            return 0, 'none', UPPER_PROTECTS
        kind = 'offload-mac' if y['offload'] == 2 else 'offload-phy'
        return 2, kind, kind

    def judge(self, p, ns, views, out, where):
        """The checks every object gets, from a notification or a dump:
        the verdict against the reference, the bit, the SecY fields."""
        name, prot = p.get('ifname'), p.get('protection')
        if name == self.h0 and (p.get('relation') == 'bound') != self.bound:
            out.append(f'{ns.name} {name}: {where} says relation {p.get("relation")}, but '
                       f'this run {"bound it" if self.bound else "has no binding of it"}; '
                       f'object {json.dumps(p)}')
            return
        rank, kind, why = self.reference(p, ns, views)
        if RANK.get(prot, 9) > rank or (prot.startswith('offload') and prot != kind):
            out.append(f'{ns.name} {name}: {where} says {prot}, the SecY gives {kind} '
                       f'({why}); object {json.dumps(p)}')
        elif p.get('protected-gid') and why != UPPER_PROTECTS:
            out.append(f'{ns.name} {name}: {where} lists protected GIDs, but {why}; '
                       f'object {json.dumps(p)}')
        elif rank and prot.startswith('offload'):
            self.offload_checks += 1
            _, _, y = self.secy_of(p, ns, views)
            if p.get('encrypt') != int(y['encrypt']):
                out.append(f'{ns.name} {name}: {where} says encrypt {p.get("encrypt")}, '
                           f'the SecY {int(y["encrypt"])}')
        if p.get('feature-owner') == 'bridge':
            self.owned.add(name)
            if name in views[ns.name][0]:
                bit = ns.feature(name, self.bit)
                if bit != prot.startswith('offload'):
                    out.append(f'{ns.name} {name}: bit {bit:d} while {where} says {prot}')

    def views(self, names):
        return {n: (ns.links(), ns.secys()) if n in names else ({}, {})
                for n, ns in self.ns.items()}

    def strict(self):
        """Before anything dumps (a dump re-reads the SecYs and would repair
        what the module missed): each port's last notification, and its bit,
        against the kernel's view right after the operation."""
        self.take_notes()
        views = self.views(set(self.ns))
        out = []
        for (nsname, index), have in self.announced.items():
            if not have or nsname not in self.ns:
                continue
            p = have[max(have)]
            ns = self.ns[nsname]
            link = views[nsname][0].get(p.get('ifname'))
            # Still that netdev in that namespace (it may have moved on, or
            # gone with its last retraction announced).
            if link is None or link[0] != index:
                continue
            self.strict_checks += 1
            self.judge(p, ns, views, out, 'the last notification')
        return out

    def problems(self):
        """What a dump, and the notifications before it, contradict."""
        self.take_notes()
        floor = {k: max(v) for k, v in self.announced.items() if v}
        ports = {ns.name: ns.ports() for ns in self.ns.values()}
        views = self.views(set(self.ns))
        self.take_notes()
        out, late = [], []
        listed = set()
        for ns in self.ns.values():
            for p in ports[ns.name]:
                self.checks += 1
                name = p.get('ifname')
                listed.add(name)
                missing = [f for f in ('ifindex', 'ifname', 'protection', 'reason',
                                       'feature-owner', 'generation') if f not in p]
                if missing:
                    out.append(f'{ns.name} {name}: lacks {missing}')
                    continue
                key, g = (ns.name, p['ifindex']), p['generation']
                if g < floor.get(key, 0):
                    out.append(f'{ns.name} {name}: dumped generation {g}, older than the '
                               f'{floor[key]} announced before the dump')
                self.judge(p, ns, views, out, 'the dump')
                note = self.announced.get(key, {}).get(g)
                if note is None:
                    # Sent after the state changed, by apply(): a moment.
                    late.append(f'{ns.name} {name}: generation {g} was never announced')
                    continue
                a = {k: v for k, v in note.items() if k != 'secy-netnsid'}
                b = {k: v for k, v in p.items() if k != 'secy-netnsid'}
                if a != b:
                    out.append(f'{ns.name} {name}: generation {g} announced as '
                               f'{json.dumps(a)}, dumped as {json.dumps(b)}')
        # A port the module owned the bit of and tracks no more has it
        # clear, wherever the netdev is now.
        for name in self.owned - listed:
            for n in ('host', 'pod'):
                if name in views[n][0] and self.ns[n].feature(name, self.bit):
                    out.append(f'{n} {name}: untracked, but its bit is set')
        return out, late

    def check(self, quiet):
        """QUIET: nothing dumped since the operation (the reader waits), so
        the notifications are judged first. Only a notification sent a
        moment after the state it reports is waited for (up to a second)."""
        start = time.monotonic()
        try:
            if quiet:
                for what in self.strict():
                    self.violation(what)
            for _ in range(20):
                out, late = self.problems()
                for what in out:
                    self.violation(what)
                if out or not late:
                    return
                time.sleep(0.05)
            for what in late:
                self.violation(what)
        finally:
            self.check_seconds += time.monotonic() - start

    # ---- the run ----------------------------------------------------------

    def step(self):
        names = [n for n, _ in self.OPS]
        op = self.rng.choices(names, weights=[w for _, w in self.OPS])[0]
        # Every other operation runs with the reader waiting, and is judged
        # on its notifications before anything dumps; the others overlap
        # the reader's dumps.
        quiet = len(self.history) % 2 == 0 and op != 'reload'
        if quiet:
            self.gate.acquire()
        try:
            # Every draw of the operation happens before it runs: the same
            # seed draws the same operations, whatever the kernel answers.
            try:
                what = getattr(self, 'op_' + op)()
                self.done[op] = self.done.get(op, 0) + 1
                self.history.append(f'{op} {what}')
            except OSError as e:
                self.refused[op] = self.refused.get(op, 0) + 1
                self.history.append(f'{op} refused: {os.strerror(e.errno) if e.errno else e}')
            try:
                self.check(quiet)
            except OSError as e:
                # The family or a namespace's view could not be read at all.
                self.violation(f'cannot check: {e}')
        finally:
            if quiet:
                self.gate.release()


def flapper(path, stop, count):
    """The concurrent writer: tw0 up and down, from a socket of its own."""
    ns = Ns('flapper', path)
    index = ns.links()['tw0'][0]
    while not stop.is_set():
        try:
            ns.rt.do(RTM_NEWLINK, 0, ifinfo(index, IFF_UP, IFF_UP))
            ns.rt.do(RTM_NEWLINK, 0, ifinfo(index, 0, IFF_UP))
            count[0] += 2
            # Enough to overlap every operation, not so much that it
            # takes the CPUs from them.
            time.sleep(0.02)
        except OSError as e:
            print(f'# flapper: {e}', flush=True)
            return


def reader(path, stop, count, gate):
    """The concurrent reader: dumps without pause, across reloads, except
    while GATE is held."""
    ns = Ns('reader', path)
    while not stop.is_set():
        try:
            with gate:
                if ns.mb is None and not ns.resolve(listen=False):
                    time.sleep(0.01)
                    continue
                ns.ports()
            count[0] += 1
            time.sleep(0.01)
        except OSError:
            ns.mb = None


def main():
    seed, ops, ko, nsim, tv, h0, dpu, pod = sys.argv[1:9]
    seed, ops = int(seed), int(ops)
    spaces = {'host': Ns('host', '/proc/self/ns/net'),
              'dpu': Ns('dpu', f'/run/netns/{dpu}'),
              'pod': Ns('pod', f'/run/netns/{pod}')}
    t = Torture(seed, ko, nsim, tv, h0, spaces)
    print(f'# seed {seed}, {ops} operations', flush=True)
    t.attach()
    stop = threading.Event()
    flaps, dumps = [0], [0]
    threads = [threading.Thread(target=flapper, args=('/proc/self/ns/net', stop, flaps)),
               threading.Thread(target=reader, args=('/proc/self/ns/net', stop, dumps, t.gate))]
    for th in threads:
        th.start()
    start = time.monotonic()
    try:
        for i in range(ops):
            t.step()
            if len(t.violations) >= 5:
                break
            if (i + 1) % 1000 == 0:
                print(f'# {i + 1} operations, {time.monotonic() - start:.0f} s, '
                      f'{len(t.violations)} violations', flush=True)
    finally:
        stop.set()
        for th in threads:
            th.join()
    out = {'seed': seed, 'operations': len(t.history), 'done': t.done, 'refused': t.refused,
           'checks': t.checks, 'strict_checks': t.strict_checks,
           'offload_checks': t.offload_checks, 'violations': len(t.violations),
           'concurrent_flaps': flaps[0], 'concurrent_dumps': dumps[0],
           'seconds': round(time.monotonic() - start, 1),
           'checking_seconds': round(t.check_seconds, 1)}
    print(json.dumps(out))
    for v in t.violations:
        print(json.dumps(v))
    return 1 if t.violations else 0


if __name__ == '__main__':
    sys.exit(main())
