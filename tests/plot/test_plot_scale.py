#!/usr/bin/env python3
"""qptrace plot at scale: memory by what is drawn, extremes still drawn.

    test_plot_scale.py QPTRACE QPSCEN

Makes two captures of one RC QP with `qpscen bench` (WRITEs of two packets,
loss 0.001 -> NAK + go-back-N, CE marks and CNPs): a small one (SMALL
packets) and one ten times as large (LARGE), and plots both.  Checks:

- peak RSS of the large plot at most MAX_GROWTH_MIB above the small one's
  (before plot thinned before storing, it kept 40 bytes per packet: about
  +35 MiB here);
- against the capture itself, read here with the standard library (not
  the engine): the requests' data-total, the highest PSN offset and the
  last request's time are where the drawn ticks end (within a pixel, read
  through the SVG's own axis labels), and every retransmitted request
  (a PSN at or behind the highest one sent before) is drawn, by frame
  number.

Prints "N passed, N failed".
"""
import os
import re
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import tap  # noqa: E402 (tests/tap.py)
from tap import check  # noqa: E402

tap.quiet = True  # only the failures, then "N passed, N failed"

SVG = "{http://www.w3.org/2000/svg}"
SMALL, LARGE = 100_000, 1_000_000
MAX_GROWTH_MIB = 12.0


def make(qpscen, path, packets):
    subprocess.run([qpscen, "bench", "-o", path, "--packets", str(packets), "--qps", "1",
                    "--msg-size", "257", "--mtu", "256", "--loss", "0.001",
                    "--cnp-rate", "0.001"], check=True, stdout=subprocess.DEVNULL)


def plot(qptrace, cap, svg):
    """Runs qptrace plot; returns its peak RSS in MiB."""
    c = tap.run_child([qptrace, "plot", "-q", "-o", svg, cap], stdout=False)
    assert c.status == 0, c.err.decode()
    return c.rss_mib


def read_capture(path):
    """Requests of the one QP: (count of those not resent, max PSN offset,
    last time offset in ns, frames of the resent ones), from the pcap bytes (Ethernet, IPv4,
    UDP 4791, BTH)."""
    n = 0
    first_ns = None
    last_req_ns = 0
    base = prev = None
    y = ymax = 0
    rexmit = set()
    with open(path, "rb") as f:
        hdr = f.read(24)
        magic = struct.unpack("<I", hdr[:4])[0]
        nano = magic == 0xA1B23C4D
        assert magic in (0xA1B2C3D4, 0xA1B23C4D), hex(magic)
        frame = 0
        while True:
            rh = f.read(16)
            if len(rh) < 16:
                break
            sec, frac, caplen, _ = struct.unpack("<IIII", rh)
            data = f.read(caplen)
            frame += 1
            ns = sec * 10**9 + (frac if nano else frac * 1000)
            if first_ns is None:
                first_ns = ns
            if caplen < 54 or data[12:14] != b"\x08\x00" or data[23] != 17:
                continue
            opcode = data[42]
            psn = int.from_bytes(data[51:54], "big") & 0xFFFFFF
            if opcode in (0x11, 0x81):  # ACK, CNP
                continue
            n += 1
            last_req_ns = ns
            if base is None:
                base = prev = psn
            d = (psn - prev) & 0xFFFFFF
            y += d - 0x1000000 if d >= 0x800000 else d
            prev = psn
            if n > 1 and y <= ymax:  # behind the highest PSN sent: resent
                rexmit.add(frame)
            ymax = max(ymax, y)
    return n - len(rexmit), ymax, (last_req_ns - first_ns), rexmit


def axis(root, cls):
    """[(value, pixel)] of an axis' labels."""
    out = []
    for g in root.iter(SVG + "g"):
        if g.get("class") != cls:
            continue
        for t in g.iter(SVG + "text"):
            m = re.fullmatch(r"(-?[0-9.]+)(M?)", (t.text or "").strip())
            if m:
                v = float(m.group(1)) * (1e6 if m.group(2) else 1)
                # y labels sit 4 px below their grid line (plot_svg.c)
                out.append((v, float(t.get("x")) if cls == "axis-x" else float(t.get("y")) - 4))
        return out, "".join(g.itertext())
    return out, ""


def linear(pts):
    (v0, p0), (v1, p1) = pts[0], pts[-1]
    return lambda v: p0 + (v - v0) * (p1 - p0) / (v1 - v0)


def main():
    qptrace, qpscen = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="qpt-plot-scale-") as tmp:
        rss = {}
        for n in (SMALL, LARGE):
            cap = os.path.join(tmp, f"{n}.pcap")
            make(qpscen, cap, n)
            rss[n] = plot(qptrace, cap, os.path.join(tmp, f"{n}.svg"))
            if n == LARGE:
                want = read_capture(cap)
            os.unlink(cap)
        grow = rss[LARGE] - rss[SMALL]
        print(f"# peak RSS: {rss[SMALL]:.1f} MiB at {SMALL} packets, "
              f"{rss[LARGE]:.1f} MiB at {LARGE}")
        if tap.under_asan():
            # tools/sanitize: ASan's quarantine keeps freed memory, so an
            # instrumented binary's RSS says nothing of plot's; the bound is
            # checked by the plain suite (not counted as passed here)
            tap.sanitized_note("peak RSS bound not checked")
        else:
            check(grow <= MAX_GROWTH_MIB,
                  f"peak RSS grows {grow:.1f} MiB from {SMALL} to {LARGE} packets "
                  f"(at most {MAX_GROWTH_MIB})")

        root = ET.parse(os.path.join(tmp, f"{LARGE}.svg")).getroot()
        nreq, ymax, last_ns, rexmit = want
        req = [g for g in root.iter(SVG + "g") if g.get("data-series") == "requests"]
        check(len(req) == 1, "one panel of requests")
        req = req[0]
        check(int(req.get("data-total")) == nreq,
              f"requests data-total {req.get('data-total')} == {nreq} in the capture")
        drawn = int(req.get("data-drawn"))
        check(drawn < 20000 and drawn == len(list(req)),
              f"requests thinned to {drawn} drawn marks")
        ticks = []
        for el in req:
            m = re.match(r"M([0-9.]+) ([0-9.]+)v([0-9.]+)", el.get("d", ""))
            if m:
                ticks.append((float(m.group(1)), float(m.group(2)) + float(m.group(3)) / 2))
        ypts, _ = axis(root, "axis-y")
        xpts, xtext = axis(root, "axis-x")
        unit = {"(\u00b5s)": 1e3, "(ms)": 1e6, "(s)": 1e9}
        u = [v for k, v in unit.items() if k in xtext]
        check(len(ypts) >= 2 and len(xpts) >= 2 and len(u) == 1, "axis labels read")
        if ticks and len(ypts) >= 2 and len(xpts) >= 2 and u:
            py, px = linear(ypts), linear(xpts)
            top = min(t[1] for t in ticks)
            right = max(t[0] for t in ticks)
            check(abs(top - py(ymax)) <= 1.0,
                  f"highest tick at y={top:.1f}, PSN offset {ymax} is at {py(ymax):.1f}")
            check(abs(right - px(last_ns / u[0])) <= 1.0,
                  f"rightmost tick at x={right:.1f}, the last request at {px(last_ns / u[0]):.1f}")
        rx = [g for g in root.iter(SVG + "g") if g.get("data-series") == "retransmissions"][0]
        frames = set()
        for t in rx.iter(SVG + "title"):
            m = re.match(r"frame ([0-9]+),", t.text or "")
            if m:
                frames.add(int(m.group(1)))
        check(len(rexmit) > 100, f"{len(rexmit)} retransmitted requests in the capture")
        check(frames == rexmit,
              f"every retransmission drawn: {len(frames)} titled marks, {len(rexmit)} in the "
              f"capture, {len(rexmit - frames)} missing, {len(frames - rexmit)} extra")
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
