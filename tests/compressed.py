#!/usr/bin/env python3
"""compressed.py - compressed captures read whole, damaged ones read up to
the damage (issue 35).

A capture of 50,000 frames (the frames of a public capture over and over,
1 us apart) and a small one (13 frames), compressed with gzip and zstd, then
damaged.  Each damaged file is read by `qptrace summary --json FILE` and
the frames it counts compared with a reference:

- trailing garbage, 512 zero bytes after the last member/frame: every frame
  (the count of the undamaged file, and of `zcat F | qptrace -`), exit 2, one
  message naming the file, "trailing data" and the offset where it starts;
- a corrupt byte near the end (in the compressed data; in the gzip CRC):
  every frame the decoder hands out before the damage (gzip: Python's zlib
  fed a byte at a time up to its error, the records in that prefix; zstd:
  at least what `zstdcat F | qptrace -` counts), exit 2, "corrupt" and an
  offset;
- cut inside the gzip trailer (its 8 bytes: CRC, size) or the zstd
  checksum: every frame, exit 2, "truncated";
- intact: concatenated gzip members and zstd frames (a split capture), a
  zstd file that starts with a skippable frame (hand-made, and pzstd's
  output when pzstd is installed): every frame, exit 0;
- the same damage on standard input (a file, a pipe): the same frames.

    compressed.py QPTRACE ROOT
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

import tap  # tests/tap.py
from tap import check

N = 50000
SNAP = 262144


def pcap_frames(path):
    with open(path, "rb") as f:
        data = f.read()
    assert struct.unpack("<I", data[:4])[0] == 0xA1B2C3D4
    out, at = [], 24
    while at + 16 <= len(data):
        _, _, cap, wire = struct.unpack("<IIII", data[at:at + 16])
        out.append((wire, data[at + 16:at + 16 + cap]))
        at += 16 + cap
    return data[:24], out


def big_capture(src, n):
    hdr, frames = pcap_frames(src)
    out = bytearray(hdr)
    for i in range(n):
        wire, data = frames[i % len(frames)]
        us = 1700000000 * 1000000 + i
        out += struct.pack("<IIII", us // 1000000, us % 1000000, len(data), wire) + data
    return bytes(out)


def count_records(data):
    """Whole pcap records in a little-endian pcap's bytes, up to a header
    libpcap would refuse (caplen past the snap length)."""
    if len(data) < 24:
        return 0
    n, at = 0, 24
    while at + 16 <= len(data):
        cap = struct.unpack("<I", data[at + 8:at + 12])[0]
        if cap > SNAP or at + 16 + cap > len(data):
            break
        n += 1
        at += 16 + cap
    return n


def zlib_prefix(blob):
    """What zlib decodes of a (possibly damaged) gzip file before it fails:
    the output of every byte it took before the failing one."""
    d = zlib.decompressobj(31)
    out = bytearray()
    step = 1 << 16
    at = 0
    # big steps to near the error, then a byte at a time from a copy
    while at < len(blob):
        c = d.copy()
        try:
            out += d.decompress(blob[at:at + step])
        except zlib.error:
            d = c
            break
        if d.eof:
            return bytes(out)  # the damage is after the first member
        at += step
    while at < len(blob):
        try:
            out += d.decompress(blob[at:at + 1])
        except zlib.error:
            break
        if d.eof:
            break
        at += 1
    return bytes(out)


def summary(q, path, stdin=None, pipe=False):
    args = [q, "summary", "--json", "-q", path if stdin is None else "-"]
    if stdin is None:
        p = subprocess.run(args, capture_output=True, text=True, timeout=120)
    elif pipe:
        cat = subprocess.Popen(["cat", stdin], stdout=subprocess.PIPE)
        p = subprocess.run(args, stdin=cat.stdout, capture_output=True, text=True, timeout=120)
        cat.stdout.close()
        cat.wait()
    else:
        with open(stdin, "rb") as f:
            p = subprocess.run(args, stdin=f, capture_output=True, text=True, timeout=120)
    try:
        frames = json.loads(p.stdout)["totals"]["frames"]
    except (ValueError, KeyError):
        frames = None
    return p.returncode, frames, p.stderr.strip()


def piped(q, tool, path):
    """Frames `tool -dc path | qptrace summary -` counts (tool's own exit
    status ignored: it complains about the damage)."""
    dec = subprocess.Popen([tool, "-dc", path], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    p = subprocess.run([q, "summary", "--json", "-q", "-"], stdin=dec.stdout,
                       capture_output=True, text=True, timeout=120)
    dec.stdout.close()
    dec.wait()
    try:
        return json.loads(p.stdout)["totals"]["frames"]
    except (ValueError, KeyError):
        return None


def compress(tool, data):
    return subprocess.run([tool, "-c", "-q"] if tool == "zstd" else [tool, "-c"], input=data,
                          stdout=subprocess.PIPE, check=True).stdout


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)
    return path


def damaged(q, name, path, want_frames, words, offset=None, at_least=False):
    """Reads path as a file and on standard input: want_frames frames
    (at_least: no fewer), exit 2, one message with the file's name, each of
    words and the offset."""
    for how in ("file", "stdin", "pipe"):
        rc, frames, err = summary(q, path, stdin=None if how == "file" else path,
                                  pipe=how == "pipe")
        shown = path if how == "file" else "-"
        ok_frames = frames is not None and (frames >= want_frames if at_least else
                                            frames == want_frames)
        check(ok_frames, f"{name} ({how}): {frames} frames counted, "
              f"{'at least ' if at_least else ''}{want_frames} before the damage")
        check(rc == 2, f"{name} ({how}): exit {rc} (2 for a damaged input)")
        lines = [l for l in err.splitlines() if l.startswith("qptrace: ")]
        msg = lines[0] if len(lines) == 1 else ""
        check(len(lines) == 1 and msg.startswith(f"qptrace: {shown}: ")
              and all(w in msg for w in words)
              and (offset is None or f"offset {offset}" in msg)
              and "multibyte" not in err,
              f"{name} ({how}): one message naming the file, {words}, offset {offset}: {err[-300:]!r}")


def whole(q, name, path, want):
    rc, frames, err = summary(q, path)
    check(rc == 0 and frames == want, f"{name}: exit {rc}, {frames} frames (want {want}): {err[-200:]!r}")


def main():
    q, root = sys.argv[1], sys.argv[2]
    tmp = tempfile.mkdtemp(prefix="qpt-compressed-")
    try:
        big = big_capture(os.path.join(root, "captures", "public",
                                       "linlinw5_nccl_nccl_node0.pcap"), N)
        small = open(os.path.join(root, "captures", "made", "clean_send.pcap"), "rb").read()
        nsmall = count_records(small)
        assert count_records(big) == N
        tools = [t for t in ("gzip", "zstd") if shutil.which(t)]
        check("gzip" in tools, "gzip installed")
        for tool in tools:
            ext = "gz" if tool == "gzip" else "zst"
            for label, raw, n in (("big", big, N), ("small", small, nsmall)):
                blob = compress(tool, raw)
                base = write(os.path.join(tmp, f"{label}.pcap.{ext}"), blob)
                whole(q, f"{tool} {label}: intact", base, n)
                p = write(os.path.join(tmp, f"{label}_garbage.pcap.{ext}"), blob + b"garbage\n" * 4)
                damaged(q, f"{tool} {label}: trailing garbage", p, n, ["trailing data"], len(blob))
                check(piped(q, tool, p) == n, f"{tool} {label}: {tool} -dc | qptrace - counts {n} too")
                p = write(os.path.join(tmp, f"{label}_zeros.pcap.{ext}"), blob + bytes(512))
                damaged(q, f"{tool} {label}: 512 zero bytes", p, n, ["trailing data"], len(blob))
            blob = compress(tool, big)
            # a corrupt byte near the end of the compressed data
            bad = bytearray(blob)
            at = len(blob) - (200 if tool == "gzip" else 300)
            bad[at] ^= 0x55
            p = write(os.path.join(tmp, f"corrupt.pcap.{ext}"), bytes(bad))
            ref = piped(q, tool, p)
            if tool == "gzip":
                want = count_records(zlib_prefix(bytes(bad)))
                check(ref is not None and want >= ref,
                      f"gzip corrupt: zlib's prefix holds {want} frames, zcat | qptrace - {ref}")
                damaged(q, f"gzip corrupt byte at {at}", p, want, ["corrupt gzip data", "offset"])
                # the CRC-32 in the trailer
                bad = bytearray(blob)
                bad[-6] ^= 0x01
                p = write(os.path.join(tmp, "crc.pcap.gz"), bytes(bad))
                damaged(q, "gzip corrupt CRC", p, N, ["corrupt gzip data", "offset"])
                for cut in (1, 4, 7):
                    p = write(os.path.join(tmp, f"cut{cut}.pcap.gz"), blob[:-cut])
                    damaged(q, f"gzip cut {cut} bytes into its trailer", p, N, ["truncated"],
                            len(blob) - cut)
            else:
                check(ref is not None and ref < N, f"zstd corrupt: zstdcat | qptrace - counts {ref}")
                damaged(q, f"zstd corrupt byte at {at}", p, ref or 0, ["corrupt zstd data", "offset"],
                        at_least=True)
                p = write(os.path.join(tmp, "cut.pcap.zst"), blob[:-2])
                damaged(q, "zstd cut in its checksum", p, N, ["truncated"], len(blob) - 2)
            # a capture in several members / frames, one after the other
            parts = b"".join(compress(tool, big[a:a + 1000003]) for a in range(0, len(big), 1000003))
            whole(q, f"{tool}: the capture in {(len(big) + 1000002) // 1000003} concatenated "
                  f"{'members' if tool == 'gzip' else 'frames'}",
                  write(os.path.join(tmp, f"parts.pcap.{ext}"), parts), N)
            if tool == "zstd":
                skip = struct.pack("<II", 0x184D2A50, 4) + struct.pack("<I", len(blob))
                whole(q, "zstd: a skippable frame first (pzstd's layout)",
                      write(os.path.join(tmp, "skip.pcap.zst"), skip + blob), N)
                skip = struct.pack("<II", 0x184D2A5F, 13) + b"x" * 13
                whole(q, "zstd: skippable frames 0x184D2A5F of 13 bytes first and last",
                      write(os.path.join(tmp, "skip2.pcap.zst"), skip + blob + skip), N)
                if shutil.which("pzstd"):
                    p = os.path.join(tmp, "p.pcap.zst")
                    write(os.path.join(tmp, "p.pcap"), big)
                    subprocess.run(["pzstd", "-q", "-p", "2", "-f", "-o", p, os.path.join(tmp, "p.pcap")],
                                   check=True)
                    with open(p, "rb") as f:
                        m = struct.unpack("<I", f.read(4))[0]
                    check(m == 0x184D2A50, f"pzstd's file starts with a skippable frame ({m:#x})")
                    whole(q, "zstd: pzstd's file", p, N)
        # not a capture header: the corrupt first member is named as such
        blob = bytearray(compress("gzip", small))
        blob[3] = 0xE0  # reserved header flags
        p = write(os.path.join(tmp, "badhead.pcap.gz"), bytes(blob))
        rc, frames, err = summary(q, p)
        check(rc == 2 and f"qptrace: {p}: corrupt gzip data found at offset" in err,
              f"gzip with a corrupt header: exit {rc}: {err[-200:]!r}")
    finally:
        shutil.rmtree(tmp)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
