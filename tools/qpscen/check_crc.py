#!/usr/bin/env python3
"""Independent ICRC/VCRC checker (pure Python, zlib only).

Usage: check_crc.py FILE.pcap...

Handles classic pcap with LINKTYPE 1 (Ethernet, 802.1Q/QinQ), 101 (raw IP),
113 (SLL), 276 (SLL2), 247 (InfiniBand, frame starts at LRH) and 197 (ERF,
type 21 InfiniBand records). Frames with caplen < wirelen are skipped.
Algorithms (verified on the public captures linlinw5_*.pcap and
wswiki_infiniband_erf.pcap):
  ICRC  = zlib.crc32(masked bytes) stored little-endian (low byte first)
          RoCEv2: 8 x 0xFF + IP hdr (v4: TOS, TTL, csum -> ones; v6: TC, flow
          label, hop limit -> ones) + UDP hdr (checksum -> 0xFFFF) + BTH (byte 4
          -> 0xFF) + rest up to the ICRC.
          RoCEv1: 8 x 0xFF + GRH (masked like IPv6) + BTH masked + rest.
          Native IB: LRH with VL nibble -> 0xF when LNH=2 (local), the whole
          LRH -> 8 x 0xFF when LNH=3 (GRH present); GRH masked; BTH masked.
  VCRC  = CRC-16 poly 0x100B, reflected (0xD008 LSB-first), init 0xFFFF,
          xorout 0xFFFF, over LRH..ICRC, stored little-endian.
"""
import struct
import sys
import zlib


def vcrc(data):
    crc = 0xFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0xD008 if crc & 1 else crc >> 1
    return crc ^ 0xFFFF


def mask_grh(m, o):
    m[o] |= 0x0F
    m[o + 1] = m[o + 2] = m[o + 3] = 0xFF
    m[o + 7] = 0xFF


def check_ib(p):
    """p = LRH .. VCRC. returns (icrc_ok, vcrc_ok)"""
    lnh = p[1] & 3
    if lnh not in (2, 3):
        return None
    pktlen = (struct.unpack('>H', p[4:6])[0] & 0x7FF) * 4
    body = p[:pktlen]
    m = bytearray(body[:-4])
    if lnh == 3:
        m[0:8] = b'\xff' * 8
        mask_grh(m, 8)
        b = 48
    else:
        m[0] |= 0xF0
        b = 8
    m[b + 4] = 0xFF
    ok1 = zlib.crc32(bytes(m)).to_bytes(4, 'little') == body[-4:]
    ok2 = vcrc(body).to_bytes(2, 'little') == p[pktlen:pktlen + 2]
    return ok1, ok2


def check_roce(x, et):
    if et == 0x0800:
        ihl = (x[0] & 15) * 4
        tot = struct.unpack('>H', x[2:4])[0]
        x = x[:tot]
        m = bytearray(x)
        m[1] = 0xFF
        m[8] = 0xFF
        m[10] = m[11] = 0xFF
        if m[9] != 17 or struct.unpack('>H', m[ihl + 2:ihl + 4])[0] != 4791:
            return None
        m[ihl + 6] = m[ihl + 7] = 0xFF
        m[ihl + 12] = 0xFF
    elif et in (0x86DD, 0x8915):
        pl = struct.unpack('>H', x[4:6])[0]
        x = x[:40 + pl]
        m = bytearray(x)
        mask_grh(m, 0)
        if et == 0x86DD:
            if m[6] != 17:
                return None
            m[46] = m[47] = 0xFF
            m[52] = 0xFF
        else:
            m[44] = 0xFF
    else:
        return None
    return zlib.crc32(b'\xff' * 8 + bytes(m[:-4])).to_bytes(4, 'little') == bytes(x[-4:])


def check(fn):
    d = open(fn, 'rb').read()
    lt = struct.unpack('<I', d[20:24])[0]
    off, n, good, bad, skip = 24, 0, 0, [], 0
    while off + 16 <= len(d):
        _, _, cl, wl = struct.unpack('<IIII', d[off:off + 16])
        p = d[off + 16:off + 16 + cl]
        off += 16 + cl
        n += 1
        if cl < wl:
            skip += 1
            continue
        if lt in (247, 197):
            if lt == 197:
                if p[8] != 21:
                    skip += 1
                    continue
                wlen = struct.unpack('>H', p[14:16])[0]
                p = p[16:16 + wlen]
            r = check_ib(p)
            if r is None:
                skip += 1
            elif all(r):
                good += 1
            else:
                bad.append((n, 'icrc' if not r[0] else 'vcrc'))
            continue
        if lt == 1:
            o = 12
            et = struct.unpack('>H', p[o:o + 2])[0]
            while et in (0x8100, 0x88A8):
                o += 4
                et = struct.unpack('>H', p[o:o + 2])[0]
            o += 2
        elif lt == 113:
            et, o = struct.unpack('>H', p[14:16])[0], 16
        elif lt == 276:
            et, o = struct.unpack('>H', p[0:2])[0], 20
        elif lt == 101:
            et, o = (0x0800 if p[0] >> 4 == 4 else 0x86DD), 0
        else:
            print(fn, 'unsupported linktype', lt)
            return False
        r = check_roce(bytearray(p[o:]), et)
        if r is None:
            skip += 1
        elif r:
            good += 1
        else:
            bad.append(n)
    print('%s: frames %d crc_ok %d bad %s skipped %d' % (fn, n, good, bad, skip))
    return not bad


if __name__ == '__main__':
    ok = True
    for f in sys.argv[1:]:
        ok &= check(f)
    sys.exit(0 if ok else 1)
