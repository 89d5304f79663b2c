#!/usr/bin/env python3
"""wrap.py - the frames of an Ethernet pcap as a switch mirror or an
overlay delivers them: inside ERSPAN II, ERSPAN III (with or without the
platform subheader), GRE transparent Ethernet bridging, VXLAN or an MPLS
label stack.  A test helper: the outer IPv4 has fixed documentation
addresses (198.51.100.1 > 198.51.100.2), never sent anywhere.

    wrap.py KIND IN.pcap OUT.pcap      KIND: one of KINDS below

Each frame keeps its time stamp, its captured and its wire length (the outer
headers are added to both: a frame the capture cut stays cut the same way,
and the outer IP length says how long it was on the wire).  With mpls the
inner Ethernet header (and its VLAN tags) is replaced by the label stack;
frames that are not IP (RoCEv1, ARP) are copied as they are.
"""
import struct
import sys

KINDS = ("erspan2", "erspan3", "erspan3-sub", "gre-teb", "vxlan", "mpls")

OUTER_SRC = bytes([198, 51, 100, 1])
OUTER_DST = bytes([198, 51, 100, 2])
OUTER_ETH = bytes.fromhex("020000000002" "020000000001")
SESSION_ID = 42
VNI = 4242
MPLS_LABELS = (1000, 2001)


def read_pcap(path):
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack("<I", data[:4])[0]
    if magic in (0xA1B2C3D4, 0xA1B23C4D):
        e = "<"
    elif magic in (0xD4C3B2A1, 0x4D3CB2A1):
        e = ">"
    else:
        sys.exit(f"wrap.py: {path}: not a pcap file (pcapng is not read here)")
    nsec = magic in (0xA1B23C4D, 0x4D3CB2A1)
    _, _, _, _, snaplen, linktype = struct.unpack(e + "HHiIII", data[4:24])
    frames = []
    off = 24
    while off + 16 <= len(data):
        sec, frac, incl, orig = struct.unpack(e + "IIII", data[off:off + 16])
        off += 16
        frames.append((sec, frac, orig, data[off:off + incl]))
        off += incl
    return nsec, snaplen, linktype, frames


def write_pcap(path, nsec, snaplen, frames):
    with open(path, "wb") as f:
        magic = 0xA1B23C4D if nsec else 0xA1B2C3D4
        f.write(struct.pack("<IHHiIII", magic, 2, 4, 0, 0, snaplen, 1))
        for sec, frac, orig, data in frames:
            f.write(struct.pack("<IIII", sec, frac, len(data), orig))
            f.write(data)


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def ipv4(proto, payload_wire_len, ident, outer=(OUTER_SRC, OUTER_DST)):
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + payload_wire_len, ident & 0xFFFF,
                      0x4000, 64, proto, 0, outer[0], outer[1])
    return hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:]


def gre(proto, seq=None):
    flags = 0x1000 if seq is not None else 0
    h = struct.pack("!HH", flags, proto)
    if seq is not None:
        h += struct.pack("!I", seq & 0xFFFFFFFF)
    return h


def erspan2_hdr(session=SESSION_ID):
    # Ver=1 VLAN=0 | COS=0 En=0 T=0 SessionID | Reserved Index=0
    return struct.pack("!HHI", 0x1000, session & 0x3FF, 0)


def erspan3_hdr(ts, sub):
    # Ver=2 VLAN=0 | COS BSO T SessionID | Timestamp | SGT | P FT HWID D Gra O
    word = 0x0001 if sub else 0  # O: the platform specific subheader follows
    h = struct.pack("!HHIHH", 0x2000, (SESSION_ID + 1) & 0x3FF, ts & 0xFFFFFFFF, 0, word)
    if sub:
        # Platform ID 3 (6 bits), then the port/timestamp part (made up)
        h += struct.pack("!II", 3 << 26 | 7, ts & 0xFFFFFFFF)
    return h


def inner_ip_offset(frame):
    """Offset of the IP header after the Ethernet header and VLAN tags."""
    off, etype = 12, None
    while off + 2 <= len(frame):
        etype = struct.unpack("!H", frame[off:off + 2])[0]
        if etype in (0x8100, 0x88A8, 0x9100):
            off += 4
            continue
        break
    if etype in (0x0800, 0x86DD):
        return off + 2
    return None


def wrap(kind, i, sec, frac, orig, data, session=SESSION_ID, vni=VNI,
         outer=(OUTER_SRC, OUTER_DST)):
    """One frame, the i-th, as KIND carries it; session (ERSPAN II), vni
    (VXLAN) and outer (the outer IPv4 source and destination, 4 bytes each)
    for a capture of several sessions (tests/rollup.py)."""
    if kind == "mpls":
        ip = inner_ip_offset(data)
        if ip is None or ip > len(data):
            return orig, data
        stack = b"".join(struct.pack("!I", lab << 12 | (0x100 if n == len(MPLS_LABELS) - 1 else 0) | 64)
                         for n, lab in enumerate(MPLS_LABELS))
        head = OUTER_ETH + b"\x88\x47" + stack
        return orig - ip + len(head), head + data[ip:]
    if kind == "vxlan":
        vx = struct.pack("!BBHI", 0x08, 0, 0, vni << 8)
        udp_len = 8 + len(vx) + orig
        udp = struct.pack("!HHHH", 49152 + (i % 16384), 4789, udp_len, 0)
        tun = udp + vx
        proto = 17
    else:
        if kind == "erspan2":
            tun = gre(0x88BE, i) + erspan2_hdr(session)
        elif kind.startswith("erspan3"):
            ts = sec * 1000000 + (frac // 1000 if frac >= 1000000 else frac)
            tun = gre(0x22EB, i) + erspan3_hdr(ts, kind == "erspan3-sub")
        else:  # gre-teb
            tun = gre(0x6558)
        proto = 47
    head = OUTER_ETH + b"\x08\x00" + ipv4(proto, len(tun) + orig, i, outer) + tun
    return orig + len(head), head + data


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in KINDS:
        sys.exit(f"usage: wrap.py {{{','.join(KINDS)}}} IN.pcap OUT.pcap")
    kind, src, dst = sys.argv[1:]
    nsec, snaplen, linktype, frames = read_pcap(src)
    if linktype != 1:
        sys.exit(f"wrap.py: {src}: link type {linktype}, only Ethernet (1) is wrapped")
    out = []
    for i, (sec, frac, orig, data) in enumerate(frames):
        o, d = wrap(kind, i, sec, frac, orig, data)
        out.append((sec, frac, o, d))
    write_pcap(dst, nsec, min(snaplen + 128, 262144), out)


if __name__ == "__main__":
    main()
