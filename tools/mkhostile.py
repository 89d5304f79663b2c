#!/usr/bin/env python3
"""Write MADE hostile captures into captures/hostile/ (NOT real traffic).

Usage:
  tools/mkhostile.py [OUTDIR]                 the committed hostile files
  tools/mkhostile.py --many-qpns N FILE       N RC SENDs to N distinct
                                              destination QPNs (not committed:
                                              tests/hostile.py makes it at test
                                              time, 1,000,000 frames = 74 MB)

Every file is handmade with python3 stdlib to drive one error path of
qptrace (reader, decoder or flow engine); captures/hostile/README.md and
expected.json describe each one.  Frames are valid RoCEv2 (with a correct
ICRC) except for the one lie each file is about, so that the lie, not some
accident, is what qptrace sees.  The output is deterministic.

Files written by tools/make-hostile-captures (another generator) live in the
same directory under other names; this script never touches them.
"""
import os
import struct
import sys
import zlib

T0 = 1700000000  # 2023-11-14, seconds
ROCE_PORT = 4791

# --------------------------------------------------------------- containers


def pcap_header(linktype, snaplen=65535):
    # classic pcap, microsecond timestamps, little-endian
    return struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, snaplen, linktype)


def record(data, usec, caplen=None, wirelen=None, sec=T0):
    """A pcap record; caplen/wirelen override the honest values (lies)."""
    cl = len(data) if caplen is None else caplen
    wl = len(data) if wirelen is None else wirelen
    return struct.pack('<IIII', sec + usec // 1000000, usec % 1000000, cl, wl) + data


def write_pcap(path, linktype, frames, snaplen=65535):
    """frames: list of bytes (honest records) or ready-made record bytes
    wrapped in a tuple ('rec', bytes)."""
    out = [pcap_header(linktype, snaplen)]
    for i, f in enumerate(frames):
        out.append(f[1] if isinstance(f, tuple) else record(f, i * 10))
    with open(path, 'wb') as fh:
        fh.write(b''.join(out))


def pcapng_block(btype, body):
    body += b'\x00' * (-len(body) % 4)
    n = 12 + len(body)
    return struct.pack('<II', btype, n) + body + struct.pack('<I', n)


def pcapng(interfaces, packets):
    """interfaces: list of link types; packets: list of (if_id, data)."""
    out = pcapng_block(0x0A0D0D0A, struct.pack('<IHHq', 0x1A2B3C4D, 1, 0, -1))
    for lt in interfaces:
        out += pcapng_block(1, struct.pack('<HHI', lt, 0, 65535))
    for i, (ifid, data) in enumerate(packets):
        ts = (T0 * 1000000 + i * 10)
        out += pcapng_block(6, struct.pack('<IIIII', ifid, ts >> 32, ts & 0xffffffff,
                                           len(data), len(data)) + data)
    return out


# ------------------------------------------------------------ RoCEv2 frames

def ip4(n):
    return bytes([10, 0, 0, n])


def mac(n):
    return bytes([2, 0, 0, 0, 0, n])


def ip_checksum(h):
    s = sum(struct.unpack('>10H', h))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def bth(op, dqpn, psn, ackreq=False, pad=0, se=False, m=False, fecn=False, becn=False):
    return struct.pack('>BBHBBHBBH', op, se << 7 | m << 6 | pad << 4, 0xffff,
                       fecn << 7 | becn << 6, dqpn >> 16, dqpn & 0xffff,
                       ackreq << 7, psn >> 16, psn & 0xffff)


def icrc_v4(ip, udp, iba):
    """ICRC of RoCEv2 over IPv4 (IBA annex A17.3.3): the variant fields are
    masked to ones, 64 bits of ones stand for the LRH."""
    ipm = bytearray(ip)
    ipm[1] = 0xff            # TOS (DSCP/ECN)
    ipm[8] = 0xff            # TTL
    ipm[10:12] = b'\xff\xff'  # header checksum
    udpm = bytearray(udp)
    udpm[6:8] = b'\xff\xff'   # UDP checksum
    ibam = bytearray(iba)
    ibam[4] = 0xff            # BTH FECN/BECN/resv8a
    return struct.pack('<I', zlib.crc32(b'\xff' * 8 + bytes(ipm) + bytes(udpm) + bytes(ibam)))


def rocev2(src, dst, iba, ip_total=None, udp_len=None, ecn=2, ihl=5, crc=True,
           sport=None):
    """Ethernet/IPv4/UDP 4791 around iba (BTH onwards, without the ICRC).
    ip_total / udp_len: lie about the lengths (the ICRC still covers them)."""
    body_len = len(iba) + 4
    udp = struct.pack('>HHHH', sport if sport is not None else 0xc000 | src << 4 | dst,
                      ROCE_PORT, 8 + body_len if udp_len is None else udp_len, 0)
    total = 20 + 8 + body_len if ip_total is None else ip_total
    ip = bytearray(struct.pack('>BBHHHBBH4s4s', 0x40 | ihl, ecn, total, 0, 0x4000,
                               64, 17, 0, ip4(src), ip4(dst)))
    ip[10:12] = struct.pack('>H', ip_checksum(bytes(ip)))
    ip = bytes(ip)
    icrc = icrc_v4(ip, udp, iba) if crc else b'\0\0\0\0'
    return mac(dst) + mac(src) + b'\x08\x00' + ip + udp + iba + icrc


def aeth(syndrome, msn):
    return struct.pack('>I', syndrome << 24 | msn)


def send(src, dst, dqpn, psn, payload=b'\xab' * 16, op=0x04, ackreq=True):
    """RC SEND Only (pad so the payload is 4-byte aligned)."""
    pad = -len(payload) % 4
    return rocev2(src, dst, bth(op, dqpn, psn, ackreq=ackreq, pad=pad) + payload + b'\0' * pad)


def ack(src, dst, dqpn, psn, msn=0, syndrome=0x1f):
    return rocev2(src, dst, bth(0x11, dqpn, psn) + aeth(syndrome, msn))


CM = {'REQ': 0x10, 'MRA': 0x11, 'REJ': 0x12, 'REP': 0x13, 'RTU': 0x14,
      'DREQ': 0x15, 'DREP': 0x16, 'LAP': 0x19, 'APR': 0x1a}


def cm_mad(attr, data, tid=1, method=0x03, mad_len=256):
    mad = struct.pack('>BBBBHHQHHI', 1, 7, 2, method, 0, 0, tid, attr, 0, 0) + data
    mad = mad + b'\0' * (256 - len(mad))
    return mad[:mad_len]


def qp1(src, dst, mad, psn=0):
    """UD SEND Only to QP1 with DETH (Q_Key 0x80010000, source QP 1)."""
    pad = -len(mad) % 4
    return rocev2(src, dst, bth(0x64, 1, psn, pad=pad) + struct.pack('>II', 0x80010000, 1)
                  + mad + b'\0' * pad)


def cm_req(comm_id, qpn, psn, service_id=0x0000000001060000 | 7174):
    d = bytearray(232)
    struct.pack_into('>I', d, 0, comm_id)
    struct.pack_into('>Q', d, 8, service_id)
    struct.pack_into('>Q', d, 16, 0x0002c90300000001)
    struct.pack_into('>I', d, 32, qpn << 8 | 1)
    d[43] = 0  # RC
    struct.pack_into('>I', d, 44, psn << 8 | 7)
    struct.pack_into('>H', d, 48, 0xffff)
    d[50] = 3 << 4 | 7  # path MTU 1024, RNR retry 7
    return bytes(d)


def cm_ids(local, remote, extra=b''):
    return struct.pack('>II', local, remote) + extra


# --------------------------------------------------------------- the files

def ib_native(lrh_pktlen_lie=None):
    """Native IB (LINKTYPE_INFINIBAND): LRH + BTH + SEND payload + ICRC + VCRC.
    The LRH PktLen counts 4-byte words from the LRH to the ICRC."""
    payload = b'\xcd' * 16
    b = bth(0x04, 0x12, 100, ackreq=True)
    words = (8 + len(b) + len(payload) + 4) // 4
    pktlen = words if lrh_pktlen_lie is None else lrh_pktlen_lie
    lrh = struct.pack('>BBHHH', 0 << 4 | 0, 0 << 4 | 2, 0x0002, pktlen & 0x7ff, 0x0001)
    # ICRC: VL and LRH reserved fields, BTH resv8a masked to ones
    lrhm = bytearray(lrh)
    lrhm[0] |= 0xf0
    bm = bytearray(b)
    bm[4] = 0xff
    icrc = struct.pack('<I', zlib.crc32(bytes(lrhm) + bytes(bm) + payload))
    pkt = lrh + b + payload + icrc
    return pkt + struct.pack('<H', vcrc(pkt))


def vcrc(data):
    """IBA VCRC: CRC-16 polynomial 0x100B, reflected, init and xorout 0xffff."""
    poly = 0xd008  # 0x100B reflected
    c = 0xffff
    for byte in data:
        c ^= byte
        for _ in range(8):
            c = (c >> 1) ^ poly if c & 1 else c >> 1
    return c ^ 0xffff


def make_all(out):
    files = {}

    def pcap(name, frames, linktype=1, snaplen=65535):
        write_pcap(os.path.join(out, name), linktype, frames, snaplen)
        files[name] = True

    def raw(name, blob):
        with open(os.path.join(out, name), 'wb') as fh:
            fh.write(blob)
        files[name] = True

    good = send(1, 2, 0x12, 5)

    # 1. Records cut short: caplen < len at every layer boundary, and a
    #    zero-length record.
    cuts = [0, 6, 14, 20, 34, 40, 42, 50, 54, 58, len(good) - 2]
    pcap('trunc_records.pcap',
         [('rec', record(good[:c], i * 10, wirelen=len(good))) for i, c in enumerate(cuts)]
         + [('rec', record(good, 1000))])

    # 2. Snap length shorter than the headers: every record cut at 48 bytes
    #    (inside the BTH), as `tcpdump -s 48` would write.
    frames = [send(1, 2, 0x12, psn) for psn in range(5)] + [ack(2, 1, 0x11, 4)]
    pcap('snaplen48.pcap',
         [('rec', record(f[:48], i * 10, wirelen=len(f))) for i, f in enumerate(frames)],
         snaplen=48)

    # 3. Lying lengths, one kind per file; the last frame of each is honest.
    s = bth(0x04, 0x12, 7, ackreq=True) + b'\xab' * 16
    pcap('lie_ip_total_length.pcap', [
        rocev2(1, 2, s, ip_total=1500),      # claims more than the frame
        rocev2(1, 2, s, ip_total=30),        # less than IP+UDP+BTH
        rocev2(1, 2, s, ip_total=0),
        rocev2(1, 2, s, ihl=2),              # IHL below 5
        rocev2(1, 2, s, ihl=15),             # options past the frame's UDP
        send(1, 2, 0x12, 8),
    ])
    pcap('lie_udp_length.pcap', [
        rocev2(1, 2, s, udp_len=4000),
        rocev2(1, 2, s, udp_len=8),          # UDP header only
        rocev2(1, 2, s, udp_len=3),          # less than the UDP header
        rocev2(1, 2, s, udp_len=0),
        send(1, 2, 0x12, 8),
    ])
    pcap('lie_pad_count.pcap', [
        rocev2(1, 2, bth(0x04, 0x12, 9, pad=3) + b'\xab' * 2),   # pad 3 > payload 2
        rocev2(1, 2, bth(0x04, 0x12, 10, pad=3)),                 # pad 3, no payload
        rocev2(1, 2, bth(0x11, 0x11, 10, pad=3) + aeth(0x1f, 1)), # ACK with pad
        send(1, 2, 0x12, 11),
    ])
    pcap('lie_lrh_pktlen.pcap', [
        ib_native(lrh_pktlen_lie=0x7ff),   # 8188 bytes claimed
        ib_native(lrh_pktlen_lie=2),       # less than LRH + BTH
        ib_native(lrh_pktlen_lie=0),
        ib_native(),
    ], linktype=247)
    pcap('short_mad_qp1.pcap', [
        qp1(1, 2, cm_mad(CM['REQ'], cm_req(0x1001, 0x12, 100), mad_len=10)),  # 10 < 24
        qp1(1, 2, cm_mad(CM['REQ'], cm_req(0x1002, 0x12, 100), mad_len=23)),
        qp1(1, 2, b''),                                                         # DETH, no MAD
        rocev2(1, 2, bth(0x64, 1, 0) + b'\x80\x01'),                            # DETH cut
        qp1(1, 2, cm_mad(CM['REQ'], cm_req(0x1003, 0x12, 100), mad_len=24 + 20)),  # CM body cut
        qp1(1, 2, cm_mad(CM['REQ'], cm_req(0x1004, 0x12, 100))),                # honest
    ])

    # 4. PSN sequences jumping around the 24-bit wrap.
    seq = [0xfffffd, 0xfffffe, 0xffffff, 0, 1, 0xfffffe, 2, 0x7fffff + 3, 3, 0x800002,
           4, 0xffffff, 0x400000, 5, 0xbfffff, 0, 6]
    frames = []
    for psn in seq:
        frames.append(send(1, 2, 0x12, psn))
        frames.append(ack(2, 1, 0x11, psn))
    # ACKs/NAKs for PSNs never sent, across the wrap
    frames += [ack(2, 1, 0x11, 0x7ffffe), ack(2, 1, 0x11, 0xfffff0, syndrome=0x60),
               ack(2, 1, 0x11, 0x000010, syndrome=0x20 | 5)]
    pcap('psn_wrap_jumps.pcap', frames)

    # 5. CM messages for comm IDs no REQ introduced, plus a REP answering a
    #    REQ that never came and a DREQ after a REJ.
    frames = [
        qp1(2, 1, cm_mad(CM['REP'], cm_ids(0xbeef0001, 0xdead0001,
                                           struct.pack('>III', 0x80010000, 0x13 << 8, 0)
                                           + struct.pack('>I', 500 << 8)))),
        qp1(1, 2, cm_mad(CM['RTU'], cm_ids(0xdead0002, 0xbeef0002))),
        qp1(1, 2, cm_mad(CM['DREQ'], cm_ids(0xdead0003, 0xbeef0003, struct.pack('>I', 0x13 << 8)))),
        qp1(2, 1, cm_mad(CM['DREP'], cm_ids(0xbeef0004, 0xdead0004))),
        qp1(2, 1, cm_mad(CM['REJ'], cm_ids(0xbeef0005, 0xdead0005, b'\x00\x00\x00\x1c'))),
        qp1(2, 1, cm_mad(CM['MRA'], cm_ids(0xbeef0006, 0xdead0006))),
        qp1(1, 2, cm_mad(CM['LAP'], cm_ids(0xdead0007, 0xbeef0007))),
        qp1(2, 1, cm_mad(CM['APR'], cm_ids(0xbeef0008, 0xdead0008))),
        qp1(1, 2, cm_mad(0x00ff, b'\x01' * 32)),  # unknown CM attribute
        # a REQ, its REJ, then RTU/DREQ for the rejected connection
        qp1(1, 2, cm_mad(CM['REQ'], cm_req(0x5000, 0x21, 1000))),
        qp1(2, 1, cm_mad(CM['REJ'], cm_ids(0x6000, 0x5000, b'\x00\x00\x00\x1c'))),
        qp1(1, 2, cm_mad(CM['RTU'], cm_ids(0x5000, 0x6000))),
        qp1(1, 2, cm_mad(CM['DREQ'], cm_ids(0x5000, 0x6000, struct.pack('>I', 0x22 << 8)))),
        # the same REQ comm ID reused for another QP
        qp1(1, 2, cm_mad(CM['REQ'], cm_req(0x5000, 0x31, 2000))),
        qp1(1, 2, cm_mad(CM['REQ'], cm_req(0x5000, 0x32, 3000))),
    ]
    pcap('cm_unknown_comm_ids.pcap', frames)

    # 6. Time going backwards and an invalid microseconds field.
    recs = []
    usecs = [500, 400, 300, 1200, 100, 999999 + 5]
    for i, u in enumerate(usecs):
        f = send(1, 2, 0x12, i // 2) if i % 2 == 0 else ack(2, 1, 0x11, i // 2)
        sec = T0 - (i * 3600 if i < 5 else 0)
        recs.append(('rec', struct.pack('<IIII', sec, u, len(f), len(f)) + f))
    pcap('time_backwards.pcap', recs)

    # 7. File-level lies.
    pcap('huge_snaplen.pcap', [good, ack(2, 1, 0x11, 5)], snaplen=0xFFFFFFFF)
    raw('huge_caplen_record.pcap', pcap_header(1) + record(good, 0)
        + struct.pack('<IIII', T0, 20, 0xFFFFFF00, 0xFFFFFF00) + good)
    raw('header_only.pcap', pcap_header(1))
    raw('short_file_header.pcap', pcap_header(1)[:12])
    raw('random_bytes.bin', bytes((i * 7919 + 13) * 2654435761 >> 13 & 0xff for i in range(4096)))
    raw('pcapng_linktype_user0.pcapng', pcapng([147], [(0, good)]))
    raw('pcapng_mixed_linktypes.pcapng', pcapng([1, 105], [(0, good), (1, good[14:]), (0, good)]))
    # 8. ERF records whose record length lies (shorter than the ERF header,
    #    longer than the frame), then a sane one.
    ibf = ib_native()

    def erf(payload, rlen=None, erf_type=21):
        rl = 16 + len(payload) if rlen is None else rlen
        return struct.pack('<Q', 0) + struct.pack('>BBHHH', erf_type, 0x04, rl, 0, len(payload)) + payload
    pcap('erf_lies.pcap', [erf(ibf, rlen=8), erf(ibf, rlen=4000), erf(ibf, erf_type=0x7f),
                           erf(b''), erf(ibf)], linktype=197)
    return sorted(files)


def many_qpns(path, n):
    """n RC SEND Only frames, 10.0.0.1 -> 10.0.0.2, destination QPN 2..n+1,
    1 us apart, each with a correct ICRC.  Written in chunks."""
    proto = send(1, 2, 0x000002, 0, payload=b'')
    head, tail = proto[:42 + 5], proto[42 + 8:-4]   # up to BTH dqpn, after it
    ip, udp = proto[14:34], proto[34:42]
    ipm = bytearray(ip)
    ipm[1], ipm[8], ipm[10:12] = 0xff, 0xff, b'\xff\xff'
    udpm = udp[:6] + b'\xff\xff'
    pre = zlib.crc32(b'\xff' * 8 + bytes(ipm) + udpm + proto[42:46] + b'\xff')
    flen = len(proto)
    with open(path, 'wb') as fh:
        fh.write(pcap_header(1))
        chunk = []
        for i in range(n):
            q = (i + 2) & 0xffffff
            qb = bytes((q >> 16, q >> 8 & 0xff, q & 0xff))
            icrc = struct.pack('<I', zlib.crc32(tail, zlib.crc32(qb, pre)))
            t = i
            chunk.append(struct.pack('<IIII', T0 + t // 1000000, t % 1000000, flen, flen)
                         + head + qb + tail + icrc)
            if len(chunk) == 65536:
                fh.write(b''.join(chunk))
                chunk = []
        fh.write(b''.join(chunk))


def main():
    args = sys.argv[1:]
    if args[:1] == ['--many-qpns']:
        if len(args) != 3:
            sys.exit(__doc__)
        many_qpns(args[2], int(args[1]))
        return
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = args[0] if args else os.path.join(root, 'captures', 'hostile')
    os.makedirs(out, exist_ok=True)
    for name in make_all(out):
        print(os.path.join(out, name))


if __name__ == '__main__':
    main()
