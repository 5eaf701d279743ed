#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Frames for `dranet-sec audit`, and a reader of what it captured: a
second classifier, written apart from the tcx program, to judge it by.

    audit_wire.py send IFNAME
        sends one crafted frame of each kind below on IFNAME (a packet
        socket, so they cross the device's egress) and prints, as JSON,
        how many of each class the program must count.
    audit_wire.py read PCAPNG
        reads a capture and prints one JSON object: "interfaces" (names),
        "frames" (per frame: interface, direction, length, class and,
        for RoCE, "dqpn" and "opcode"; for MACsec "e", "c" and "an").
"""

import json
import socket
import struct
import sys

ROCE_PORT = 4791
SRC = bytes.fromhex("020000000001")
DST = bytes.fromhex("020000000002")


def eth(proto, payload, tags=()):
    b = DST + SRC
    for t in tags:
        b += struct.pack("!HH", 0x8100, t)
    return b + struct.pack("!H", proto) + payload


def bth(dqpn=1, psn=0, opcode=0x64):
    # opcode, flags, P_Key, reserved + destination QP, ack + PSN
    return struct.pack("!BBHI I", opcode, 0, 0xFFFF, dqpn & 0xFFFFFF, psn & 0xFFFFFF)


def udp(dport, payload, length=None):
    return struct.pack("!HHHH", 49152, dport, len(payload) + 8 if length is None else length, 0) + payload


def ipv4(payload, proto=17, ihl=5, frag=0):
    h = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, 20 + len(payload), 1, frag, 64, proto, 0,
                    bytes([10, 9, 0, 1]), bytes([10, 9, 0, 2]))
    return h + payload


def ipv6(payload, nh=17):
    return struct.pack("!IHBB16s16s", 6 << 28, len(payload), nh, 64,
                       bytes(15) + b"\x01", bytes(15) + b"\x02") + payload


def sectag(tci_an, sl=0, pn=1, sci=None):
    b = struct.pack("!BBI", tci_an, sl, pn)
    return b + (sci if sci is not None else b"")


SCI = bytes.fromhex("0200000000010001")
SC, E, C, ES, V = 0x20, 0x08, 0x04, 0x40, 0x80
ROCE4 = ipv4(udp(ROCE_PORT, bth(dqpn=0x11) + bytes(16)))
ICV = bytes(16)

# (class, frame): what each frame is, by construction.
FRAMES = [
    ("roce", eth(0x0800, ROCE4)),
    ("roce", eth(0x0800, ipv4(udp(ROCE_PORT, bth(dqpn=1, opcode=0x64) + bytes(256))))),
    ("roce", eth(0x0800, ipv4(udp(ROCE_PORT, bth(dqpn=7, opcode=0x04) + bytes(8))))),
    ("roce", eth(0x86DD, ipv6(udp(ROCE_PORT, bth(dqpn=9) + bytes(8))))),
    ("roce", eth(0x86DD, ipv6(udp(ROCE_PORT, bth(dqpn=10))))),
    ("roce", eth(0x0800, ROCE4, tags=(100,))),
    ("roce", eth(0x0800, ROCE4, tags=(100, 200))),
    ("macsec-encrypted", eth(0x88E5, sectag(SC | E | C, pn=5, sci=SCI) + bytes(48) + ICV)),
    ("macsec-encrypted", eth(0x88E5, sectag(SC | E | C | 1, pn=6, sci=SCI) + bytes(48) + ICV)),
    ("macsec-encrypted", eth(0x88E5, sectag(E | C | 2, pn=7) + bytes(64) + ICV)),
    ("macsec-encrypted", eth(0x88E5, sectag(ES | E | C, pn=8) + bytes(64) + ICV)),
    ("macsec-integrity-roce", eth(0x88E5, sectag(SC, pn=9, sci=SCI) + struct.pack("!H", 0x0800) + ROCE4 + ICV)),
    ("macsec-integrity-roce", eth(0x88E5, sectag(3, pn=10) + struct.pack("!H", 0x0800) + ROCE4 + ICV)),
    ("macsec-integrity-other", eth(0x88E5, sectag(SC, pn=11, sci=SCI) + struct.pack("!H", 0x0806) + bytes(28) + ICV)),
    ("other", eth(0x0800, ipv4(udp(53, bytes(20))))),
    # A later fragment of a datagram to 4791: no UDP header in it.
    ("other", eth(0x0800, ipv4(bytes(40), frag=10))),
    ("other", eth(0x0806, bytes(28))),
    ("other", eth(0x86DD, ipv6(bytes(20), nh=58))),
    # Malformed: each a header cut short or invalid.
    ("malformed", eth(0x88E5, b"\x2c\x00\x00")),
    ("malformed", eth(0x88E5, sectag(V | SC | E | C, sci=SCI) + bytes(48))),
    ("malformed", eth(0x88E5, sectag(ES | SC | E | C, sci=SCI) + bytes(48))),
    ("malformed", eth(0x88E5, sectag(E | C, sl=50) + bytes(48))),
    ("malformed", eth(0x88E5, sectag(E | C, sl=0x81) + bytes(48))),
    ("malformed", eth(0x88E5, sectag(SC | E | C) + SCI[:5])),
    ("malformed", eth(0x88E5, sectag(SC, sci=SCI) + struct.pack("!H", 0x0800) + ROCE4[:36])),
    ("malformed", eth(0x0800, ipv4(udp(ROCE_PORT, bytes(8)), ihl=3))),
    ("malformed", eth(0x0800, ipv4(udp(ROCE_PORT, bth()), proto=17)[:20 + 8 + 6])),
    ("malformed", eth(0x0800, ipv4(udp(ROCE_PORT, bth(), length=12)))),
    ("malformed", eth(0x86DD, ipv6(udp(ROCE_PORT, bth()))[:20])),
    ("malformed", eth(0x0800, b"\x45\x00")),
    ("malformed", eth(0x8100, b"\x00")),
]

CLASSES = ["roce", "macsec-encrypted", "macsec-integrity-roce", "macsec-integrity-other",
           "other", "malformed", "samples-lost"]


def send(ifname):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((ifname, 0))
    want = dict.fromkeys(CLASSES, 0)
    for cls, f in FRAMES:
        assert classify(f)[0] == cls, (cls, f.hex())
        s.send(f)
        want[cls] += 1
    print(json.dumps({"counts": want, "frames": [f.hex() for _, f in FRAMES]}))


def classify(f):
    """(class, details) of one frame, from its bytes alone."""
    def ip_class(proto, b):
        if proto == 0x0800:
            if len(b) < 20 or b[0] >> 4 != 4 or b[0] & 0xF < 5:
                return "malformed", {}
            if struct.unpack("!H", b[6:8])[0] & 0x1FFF or b[9] != 17:
                return "other", {}
            l4 = (b[0] & 0xF) * 4
        elif proto == 0x86DD:
            if len(b) < 40 or b[0] >> 4 != 6:
                return "malformed", {}
            if b[6] != 17:
                return "other", {}
            l4 = 40
        else:
            return "other", {}
        u = b[l4:l4 + 8]
        if len(u) < 8:
            return "malformed", {}
        if struct.unpack("!H", u[2:4])[0] != ROCE_PORT:
            return "other", {}
        t = b[l4 + 8:l4 + 20]
        if struct.unpack("!H", u[4:6])[0] < 20 or len(t) < 12:
            return "malformed", {}
        return "roce", {"opcode": t[0], "dqpn": struct.unpack("!I", t[4:8])[0] & 0xFFFFFF}

    if len(f) < 14:
        return "malformed", {}
    proto, off = struct.unpack("!H", f[12:14])[0], 14
    for _ in range(2):
        if proto not in (0x8100, 0x88A8):
            break
        if len(f) < off + 4:
            return "malformed", {}
        proto, off = struct.unpack("!H", f[off + 2:off + 4])[0], off + 4
    if proto in (0x0800, 0x86DD):
        return ip_class(proto, f[off:])
    if proto != 0x88E5:
        return "other", {}
    t = f[off:off + 6]
    if len(t) < 6 or t[0] & V or (t[0] & (ES | 0x10) and t[0] & SC) or t[1] >= 48:
        return "malformed", {}
    d = {"e": bool(t[0] & E), "c": bool(t[0] & C), "an": t[0] & 3}
    off += 6 + (8 if t[0] & SC else 0)
    if len(f) < off:
        return "malformed", d
    if t[0] & E:
        return "macsec-encrypted", d
    if len(f) < off + 2:
        return "malformed", d
    inner, det = ip_class(struct.unpack("!H", f[off:off + 2])[0], f[off + 2:])
    d.update(det)
    if inner == "malformed":
        return "malformed", d
    return ("macsec-integrity-roce" if inner == "roce" else "macsec-integrity-other"), d


def read(path):
    b = open(path, "rb").read()
    u32 = lambda o: struct.unpack("<I", b[o:o + 4])[0]
    u16 = lambda o: struct.unpack("<H", b[o:o + 2])[0]

    def options(p, end):
        out = {}
        while p + 4 <= end:
            code, ln = u16(p), u16(p + 2)
            if code == 0:
                break
            out[code] = b[p + 4:p + 4 + ln]
            p += 4 + ((ln + 3) & ~3)
        return out

    names, frames, o = [], [], 0
    while o < len(b):
        ty, ln = u32(o), u32(o + 4)
        assert ln % 4 == 0 and u32(o + ln - 4) == ln, "block length"
        if ty == 0x0A0D0D0A:
            assert u32(o + 8) == 0x1A2B3C4D, "byte-order magic"
        elif ty == 1:
            assert u16(o + 8) == 1, "LINKTYPE_ETHERNET"
            opts = options(o + 16, o + ln - 4)
            assert opts.get(9) == b"\x09", "nanosecond timestamps"
            names.append(opts[2].decode())
        elif ty == 6:
            cap = u32(o + 20)
            data = b[o + 28:o + 28 + cap]
            opts = options(o + 28 + ((cap + 3) & ~3), o + ln - 4)
            flags = struct.unpack("<I", opts[2])[0]
            cls, det = classify(data)
            frames.append(dict(interface=u32(o + 8), dir={1: "in", 2: "out"}[flags & 3],
                               len=u32(o + 24), caplen=cap, data=data.hex(), **{"class": cls}, **det))
        else:
            raise ValueError(f"block type {ty:#x}")
        o += ln
    print(json.dumps({"interfaces": names, "frames": frames}))


if __name__ == "__main__":
    {"send": send, "read": read}[sys.argv[1]](*sys.argv[2:])
