#!/usr/bin/env python3
"""ip_fragments.py - RoCEv2 packets fragmented by IP are counted and named,
IPv6 as IPv4 (issue 35).

Captures written here with struct: one RoCEv2 SEND Only of 2048 bytes to
UDP 4791 in two fragments, over IPv4 (MF, then offset 1232) and over IPv6
(a Fragment header: offset 0 with M, then offset 1232 without), each alone
and both in one file; an IPv6 first fragment with a Destination Options
header between the Fragment header and UDP; the IPv6 fragments of a UDP
datagram to port 53 (not RoCE).  Checked:

- summary --json: totals.fragmented_roce_packets counts the first
  fragments (1, 1, 2, 1, 0) and one capture-wide `fragmented` finding
  says the count;
- events --json: an ip_fragment verdict on each first fragment's frame;
- packets: the totals line names the IP fragments;
- summary -l: the warning line with the count;
- TShark (when installed) reads the same files as IP fragments and
  reassembles the RoCE packet in the last one (the writer is right).

    ip_fragments.py QPTRACE
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import tap  # tests/tap.py
from tap import check

MAC = bytes.fromhex("020000000001") + bytes.fromhex("020000000002")
IP6_SRC = bytes.fromhex("fd000000000000000000000000000001")
IP6_DST = bytes.fromhex("fd000000000000000000000000000002")
FIRST = 1232  # bytes of the fragmentable part in the first fragment (x 8)


def roce_udp(dport=4791, paylen=2048):
    """UDP header + BTH (SEND Only, dest QP 0x12, PSN 1) + payload + ICRC."""
    bth = struct.pack(">BBHII", 0x04, 0x40, 0xFFFF, 0x12, 1)
    body = bth + bytes((i * 7) & 0xFF for i in range(paylen)) + b"\0" * 4
    return struct.pack(">HHHH", 49152, dport, 8 + len(body), 0) + body


def ipv4_fragments(udp):
    out = []
    for off, more in ((0, True), (FIRST, False)):
        part = udp[off:off + FIRST] if more else udp[off:]
        hdr = struct.pack(">BBHHHBBH4s4s", 0x45, 0x02, 20 + len(part), 0x4242,
                          (0x2000 if more else 0) | off // 8, 64, 17, 0,
                          bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2]))
        s = sum(struct.unpack(">10H", hdr))
        while s >> 16:
            s = (s & 0xFFFF) + (s >> 16)
        hdr = hdr[:10] + struct.pack(">H", ~s & 0xFFFF) + hdr[12:]
        out.append(MAC + b"\x08\x00" + hdr + part)
    return out


def ipv6_fragments(udp, dest_opts=False):
    """The fragmentable part: (Destination Options +) UDP datagram."""
    frag_part = (struct.pack(">BB", 17, 0) + b"\x01\x04\0\0\0\0" if dest_opts else b"") + udp
    out = []
    for off, more in ((0, True), (FIRST, False)):
        part = frag_part[off:off + FIRST] if more else frag_part[off:]
        fh = struct.pack(">BBHI", 60 if dest_opts else 17, 0, off | (1 if more else 0), 0x01020304)
        ip6 = struct.pack(">IHBB", 6 << 28, len(fh) + len(part), 44, 64) + IP6_SRC + IP6_DST
        out.append(MAC + b"\x86\xdd" + ip6 + fh + part)
    return out


def write_pcap(path, frames):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            f.write(struct.pack("<IIII", 1700000000, i * 10, len(fr), len(fr)) + fr)


def run(q, *args):
    return subprocess.run([q] + list(args), capture_output=True, text=True, timeout=60)


def main():
    q = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="qpt-frag-")
    udp = roce_udp()
    cases = [
        # name, frames, first fragments of RoCEv2 packets (their frame numbers)
        ("ipv4", ipv4_fragments(udp), [1]),
        ("ipv6", ipv6_fragments(udp), [1]),
        ("both", ipv4_fragments(udp) + ipv6_fragments(udp), [1, 3]),
        ("ipv6_dest_opts", ipv6_fragments(udp, dest_opts=True), [1]),
        ("ipv6_port_53", ipv6_fragments(roce_udp(dport=53)), []),
    ]
    try:
        for name, frames, firsts in cases:
            path = os.path.join(tmp, name + ".pcap")
            write_pcap(path, frames)
            p = run(q, "summary", "--json", path)
            try:
                doc = json.loads(p.stdout)
            except ValueError:
                check(False, f"{name}: summary --json exits {p.returncode}: {p.stderr[-200:]!r}")
                continue
            n = doc["totals"].get("fragmented_roce_packets")
            check(p.returncode == 0 and n == len(firsts),
                  f"{name}: fragmented_roce_packets {n} (exit {p.returncode}), written {len(firsts)}")
            fnd = [f for f in doc["findings"] if f["kind"] == "fragmented"]
            if firsts:
                check(len(fnd) == 1 and fnd[0]["numbers"].get("fragmented_roce_packets") == len(firsts),
                      f"{name}: one 'fragmented' finding with the count: {fnd}")
            else:
                check(not fnd, f"{name}: no 'fragmented' finding: {fnd}")
            p = run(q, "events", "--json", path)
            got = [e["frame"] for e in map(json.loads, p.stdout.splitlines())
                   if e.get("kind") == "ip_fragment"]
            check(got == firsts, f"{name}: ip_fragment events at frames {got}, written {firsts}")
            p = run(q, "packets", path)
            named = "IP fragments of RoCEv2 packets" in p.stderr + p.stdout
            check(named == bool(firsts), f"{name}: packets names the fragments: {named}")
            p = run(q, "summary", "-l", path)
            warned = f"warning: {len(firsts)} RoCEv2 packets fragmented by IP" in p.stdout
            check(warned == bool(firsts), f"{name}: summary -l warns of {len(firsts)}: {warned}")
            if shutil.which("tshark"):
                t = subprocess.run(["tshark", "-r", path, "-T", "fields", "-e", "frame.number",
                                    "-e", "ip.flags.mf", "-e", "ipv6.fraghdr.more",
                                    "-e", "infiniband.bth.opcode"],
                                   capture_output=True, text=True, timeout=60)
                rows = [l.split("\t") for l in t.stdout.splitlines()]
                more = [int(r[0]) for r in rows if len(r) > 3 and "1" in (r[1], r[2])]
                reasm = [int(r[0]) for r in rows if len(r) > 3 and r[3]]
                check(more == [i + 1 for i in range(0, len(frames), 2)],
                      f"{name}: tshark sees more fragments after frames {more}")
                want = [f + 1 for f in firsts]
                check(reasm == want, f"{name}: tshark reassembles RoCE in frames {reasm} "
                      f"(want {want})")
    finally:
        shutil.rmtree(tmp)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
