#!/usr/bin/env python3
"""snaplen.py - headers-only captures (a mirror or a long capture that keeps
the first bytes of each frame, `editcap -s 96`, `tcpdump -s 96`).

A frame whose headers are whole but whose payload or ICRC the snap length
cut is analysed as if whole: the same summary as the full capture, no
malformed frame, no malformed event, and one totals note
"N frames cut by the capture at 96 bytes: ICRC not checked".  A cut inside
a header (-s 48 cuts the BTH) stays malformed.

    snaplen.py QPTRACE ROOT
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import tap  # tests/tap.py
from tap import check

# rxe captures without RDMA CM: with RDMA CM the CM messages (MADs) are
# cut too at 96 bytes, and a cut CM message is a cut header (malformed):
# see captures/rxe/read_bw_rdma_cm.pcap below.
CAPTURES = ("captures/rxe/write_bw_drop.pcap", "captures/rxe/read_bw_drop.pcap",
            "captures/rxe/write_bw.pcap", "captures/rxe/send_bw.pcap",
            "captures/rxe/rc_pingpong_drop.pcap", "captures/rxe/read_bw.pcap",
            "captures/rxe/ud_pingpong.pcap", "captures/rxe/uc_pingpong.pcap",
            "captures/made/nak_gbn.pcap", "captures/made/ipv6.pcap", "captures/made/rnr.pcap")


def run(qptrace, *args):
    r = subprocess.run([qptrace, *args], capture_output=True, text=True, timeout=120)
    return r.stdout


def main():
    qptrace, root = sys.argv[1], sys.argv[2]
    if not shutil.which("editcap"):
        print("editcap not installed (tshark's package wireshark-common): run tools/setup-deps")
        return 77
    tmp = tempfile.mkdtemp(prefix="qpt-snaplen-")
    try:
        for rel in CAPTURES:
            full = os.path.join(root, rel)
            cut = os.path.join(tmp, os.path.basename(rel))
            subprocess.run(["editcap", "-s", "96", full, cut], check=True, capture_output=True)
            a = json.loads(run(qptrace, "summary", "--json", "-q", full))
            b = json.loads(run(qptrace, "summary", "--json", "-q", cut))
            ncut = b["totals"].pop("cut_by_capture", 0)
            snap = b["totals"].pop("cut_snaplen", None)
            a.pop("file"), b.pop("file")
            check(a == b, f"{rel} -s 96: the same summary as the full capture "
                          f"({len(b['conversations'])} conversations, "
                          f"{b['totals']['retransmitted_packets']} retransmitted, "
                          f"{b['totals']['gbn_episodes']} go-back-N)")
            check(b["totals"]["malformed"] == 0 and ncut > 0 and snap == 96,
                  f"{rel} -s 96: {b['totals']['malformed']} malformed, {ncut} cut at {snap} bytes")
            ev = [json.loads(l) for l in run(qptrace, "events", "--json", cut).splitlines()]
            bad = [e for e in ev if e["kind"] == "malformed"]
            check(not bad, f"{rel} -s 96: {len(bad)} malformed events of {len(ev)}")
            text = run(qptrace, "summary", cut)
            notes = [l for l in text.splitlines() if "cut by the capture" in l]
            check(notes == [f"note: {ncut} frame{'s' if ncut != 1 else ''} cut by the capture "
                            f"at 96 bytes: ICRC not checked"], f"{rel} -s 96: totals note {notes}")
            pk = [json.loads(l) for l in run(qptrace, "packets", "--json", cut).splitlines()]
            check(sum(1 for p in pk if p.get("cut_by_capture")) == ncut and
                  not any("malformed" in p for p in pk),
                  f"{rel} -s 96: packets --json marks {ncut} frames cut_by_capture, none malformed")
        # Inside a header: still malformed.
        full = os.path.join(root, "captures/rxe/write_bw_drop.pcap")
        cut = os.path.join(tmp, "s48.pcap")
        subprocess.run(["editcap", "-s", "48", full, cut], check=True, capture_output=True)
        b = json.loads(run(qptrace, "summary", "--json", "-q", cut))
        check(b["totals"]["malformed"] == b["totals"]["iba_packets"] > 0 and
              not b["totals"].get("cut_by_capture"),
              f"-s 48 (inside the BTH): {b['totals']['malformed']} of "
              f"{b['totals']['iba_packets']} malformed")
        # RDMA CM: the CM messages are headers to the analysis; cut, they
        # are malformed (truncated), the data frames are only cut.
        full = os.path.join(root, "captures/rxe/read_bw_rdma_cm.pcap")
        cut = os.path.join(tmp, "cm96.pcap")
        subprocess.run(["editcap", "-s", "96", full, cut], check=True, capture_output=True)
        pk = [json.loads(l) for l in run(qptrace, "packets", "--json", cut).splitlines()]
        mal = [p for p in pk if "malformed" in p]
        check(mal and all(p["bth"]["dqpn"] == 1 for p in mal),
              f"read_bw_rdma_cm -s 96: {len(mal)} malformed, all CM MADs to QP1")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"1..{tap.n}")
    for f in tap.failed:
        print("# FAILED", f)
    return 1 if tap.failed else 0


if __name__ == "__main__":
    sys.exit(main())
