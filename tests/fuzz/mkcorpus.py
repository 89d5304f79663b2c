#!/usr/bin/env python3
"""Build the seed corpora of the fuzz targets from captures/public and
captures/made (python3 stdlib only).

Usage: tests/fuzz/mkcorpus.py [ROOT]     (ROOT: the source tree, default ..)

Writes tests/fuzz/corpus/decode/ and tests/fuzz/corpus/flow/, replacing
what was there.  The inputs follow the layouts documented at the top of
fuzz_decode.c and fuzz_flow.c.  Output is deterministic; the whole corpus is
kept under 2 MB so that it can be committed.
"""
import glob
import hashlib
import os
import shutil
import struct
import sys

# Must match linktypes[] in fuzz_decode.c / fuzz_flow.c.
LINKTYPES = [1, 0, 101, 12, 14, 113, 276, 197, 228, 229, 247, 105]
CM_ATTRS = [0x10, 0x13, 0x14, 0x15, 0x16, 0x12, 0x11, 0x17, 0x18, 0x19, 0x1a, 0x01]
MAX_BODY = 96            # template records: bytes after the BTH kept
MAX_FLOW_BYTES = 24000   # per flow seed
MAX_DECODE_PER_FILE = 24


def read_pcap(path):
    """Classic pcap only (all of captures/ is).  Yields (linktype, ts_ns, data, wirelen)."""
    blob = open(path, 'rb').read()
    if len(blob) < 24:
        return
    magic = blob[:4]
    if magic in (b'\xd4\xc3\xb2\xa1', b'\x4d\x3c\xb2\xa1'):
        e = '<'
    elif magic in (b'\xa1\xb2\xc3\xd4', b'\xa1\xb2\x3c\x4d'):
        e = '>'
    else:
        return
    nano = magic in (b'\x4d\x3c\xb2\xa1', b'\xa1\xb2\x3c\x4d')
    linktype = struct.unpack_from(e + 'I', blob, 20)[0] & 0x0fffffff
    off = 24
    while off + 16 <= len(blob):
        sec, frac, caplen, wirelen = struct.unpack_from(e + 'IIII', blob, off)
        off += 16
        data = blob[off:off + caplen]
        off += caplen
        if len(data) < caplen:
            break
        yield linktype, sec * 10**9 + (frac if nano else frac * 1000), data, wirelen


def decode_seeds(files):
    out = {}
    for path in files:
        n = 0
        keys = set()
        for lt, _, data, wirelen in read_pcap(path):
            if lt not in LINKTYPES:
                continue
            # one frame per (link type, size class, byte where Ethernet
            # RoCEv2 keeps the BTH opcode, byte 12/13 ethertype)
            key = (lt, len(data) // 128, data[42] if len(data) > 42 else -1,
                   data[12:14])
            if key in keys:
                continue
            keys.add(key)
            frame = data[:2048]
            extra = min(max(wirelen - len(frame), 0), 0xffff)
            seed = bytes([LINKTYPES.index(lt), 0]) + struct.pack('<H', extra) + frame
            out[hashlib.sha1(seed).hexdigest()[:16]] = seed
            n += 1
            if n >= MAX_DECODE_PER_FILE:
                break
    return out


def flow_record(lt, data, dt_ns, addrs):
    """One record of the fuzz_flow input format for this frame."""
    us = dt_ns // 1000
    if us < 0x80:
        dt = us
    else:
        dt = 0x80 | min(dt_ns // 1000000, 0x7f)

    def addr(ip):
        if ip not in addrs:
            addrs[ip] = len(addrs) % 4
        return addrs[ip]

    if lt == 1 and len(data) >= 14 + 20 + 8 + 12 + 4 and data[12:14] == b'\x08\x00':
        ip = data[14:34]
        ihl = (ip[0] & 15) * 4
        udp = 14 + ihl
        if ip[9] == 17 and len(data) >= udp + 8 + 12 + 4 and \
                struct.unpack_from('>H', data, udp + 2)[0] == 4791:
            bth = data[udp + 8:udp + 20]
            body = data[udp + 20:len(data) - 4]
            sel = addr(bytes(ip[12:16])) | addr(bytes(ip[16:20])) << 4
            op = bth[0]
            dqpn = bth[5:8]
            if op == 0x64 and dqpn == b'\x00\x00\x01' and len(body) >= 8 + 24 and body[8 + 1] == 7:
                mad = body[8:]
                attr = struct.unpack_from('>H', mad, 16)[0]
                asel = CM_ATTRS.index(attr) if attr in CM_ATTRS else 0xf0 | (attr & 0x0f)
                cm = mad[24:256].rstrip(b'\x00')
                return bytes([1, dt, sel, asel, mad[3], len(cm)]) + cm
            fl = (bth[1] >> 7 & 1) | (bth[1] >> 6 & 1) << 1 | (bth[8] >> 7 & 1) << 2 | \
                 (bth[4] >> 7 & 1) << 3 | (bth[4] >> 6 & 1) << 4 | \
                 ((ip[1] & 3) == 3) << 5 | (bth[1] >> 4 & 3) << 6
            body = body[:MAX_BODY]
            return bytes([0, dt, sel, op, fl]) + dqpn + bth[9:12] + bytes([len(body)]) + body
    if lt not in LINKTYPES or len(data) > 2048:
        return b''
    return bytes([2, dt, LINKTYPES.index(lt)]) + struct.pack('<H', len(data)) + data


def flow_seeds(files):
    out = {}
    for path in files:
        addrs = {}
        rec = bytearray([0])
        prev = None
        for lt, ts, data, _ in read_pcap(path):
            r = flow_record(lt, data, 0 if prev is None else max(ts - prev, 0), addrs)
            prev = ts
            if len(rec) + len(r) > MAX_FLOW_BYTES:
                break
            rec += r
        if len(rec) > 1:
            out[os.path.basename(path)[:-5]] = bytes(rec)
    return out


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else \
        os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    files = sorted(glob.glob(os.path.join(root, 'captures', 'public', '*.pcap')) +
                   glob.glob(os.path.join(root, 'captures', 'made', '*.pcap')))
    base = os.path.join(root, 'tests', 'fuzz', 'corpus')
    total = 0
    for target, seeds in (('decode', decode_seeds(files)), ('flow', flow_seeds(files))):
        d = os.path.join(base, target)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        for name, blob in sorted(seeds.items()):
            with open(os.path.join(d, name), 'wb') as f:
                f.write(blob)
            total += len(blob)
        print('%s: %d seeds' % (target, len(seeds)))
    print('corpus: %d bytes' % total)
    if total > 2 * 1024 * 1024:
        sys.exit('mkcorpus: corpus over 2 MB')


if __name__ == '__main__':
    main()
