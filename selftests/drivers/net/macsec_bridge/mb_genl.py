#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The macsec_bridge family on a raw generic netlink socket, for what the
YNL CLI cannot do: many requests in one process, and a dump read one
datagram at a time with a change made between two of them.

    mb_genl.py bind SECY_IFINDEX IFINDEX...
        binds each port to the SecY (both in this namespace); exits 1 at
        the first refusal, printing its errno.
    mb_genl.py dump-split CMD
        starts a dev-get dump, reads its first datagram, runs the shell
        command CMD, reads the rest; prints one JSON object: "parts" (the
        datagrams), "intr" (whether a message carried NLM_F_DUMP_INTR) and
        "ifnames" (every port, in order).

Attribute and command numbers are the YNL spec's.
"""

import json
import os
import socket
import struct
import subprocess
import sys

NETLINK_GENERIC = 16
GENL_ID_CTRL = 0x10
CTRL_CMD_GETFAMILY = 3
CTRL_ATTR_FAMILY_ID = 1
CTRL_ATTR_FAMILY_NAME = 2
NLM_F_REQUEST, NLM_F_MULTI, NLM_F_ACK, NLM_F_DUMP_INTR = 0x1, 0x2, 0x4, 0x10
NLM_F_DUMP = 0x300
NLMSG_ERROR, NLMSG_DONE = 2, 3

CMD_DEV_GET, CMD_BIND = 1, 3
A_IFINDEX, A_IFNAME, A_SECY_IFINDEX = 1, 2, 7


def attr(kind, payload):
    n = 4 + len(payload)
    return struct.pack('HH', n, kind) + payload + b'\0' * ((4 - n % 4) % 4)


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
    def __init__(self):
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_GENERIC)
        self.sock.bind((0, 0))
        self.seq = 0
        reply = self.request(GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 0,
                             attr(CTRL_ATTR_FAMILY_NAME, b'macsec_bridge\0'))
        self.family = struct.unpack('H', attrs(reply[0][4:])[CTRL_ATTR_FAMILY_ID][:2])[0]

    def send(self, kind, cmd, flags, payload):
        self.seq += 1
        msg = struct.pack('BBH', cmd, 1, 0) + payload
        self.sock.send(struct.pack('IHHII', 16 + len(msg), kind, NLM_F_REQUEST | flags,
                                   self.seq, 0) + msg)

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
        """A do request: its replies' payloads; raises OSError on an error."""
        self.send(kind, cmd, flags | NLM_F_ACK, payload)
        replies = []
        while True:
            for mkind, _flags, body in self.messages():
                if mkind == NLMSG_ERROR:
                    err = struct.unpack_from('i', body)[0]
                    if err:
                        raise OSError(-err, os.strerror(-err))
                    return replies
                replies.append(body)


def main():
    g = Genl()
    if sys.argv[1] == 'bind':
        secy = int(sys.argv[2])
        for port in sys.argv[3:]:
            g.request(g.family, CMD_BIND, 0, attr(A_IFINDEX, struct.pack('I', int(port))) +
                      attr(A_SECY_IFINDEX, struct.pack('I', secy)))
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
