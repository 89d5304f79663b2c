#!/usr/bin/env python3
"""mirrors.py - captures as switch mirrors and overlays deliver them.

Every Ethernet capture of captures/made and captures/rxe is wrapped by
tests/wrap.py in each encapsulation (ERSPAN II, ERSPAN III with and without
the platform subheader, GRE-TEB, VXLAN, MPLS); `qptrace summary --json` of
the wrapped capture must equal that of the original in every conversation
and in the totals, and every group of its roll-up must name the wrapper's
session (kind, ERSPAN session id or VXLAN VNI, outer addresses).  tshark (when installed) is the independent check of the
wrapper: it must see as many `infiniband` frames in the wrapped capture as
in the original (on a few captures: tshark takes a second or more each).
`qptrace packets --json` must name the tunnel of every RoCE frame.

    mirrors.py QPTRACE ROOT
"""
import glob
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import tap  # noqa: E402
import wrap  # noqa: E402

TSHARK_CAPTURES = ("captures/rxe/write_bw_drop.pcap", "captures/rxe/lossy/lossy_rping.server.pcap", "captures/rxe/read_bw_rdma_cm.pcap",
                   "captures/made/nak_gbn.pcap", "captures/made/cm_full.pcap",
                   "captures/made/ipv6.pcap")
TUNNEL_NAME = {"erspan2": "ERSPAN-II", "erspan3": "ERSPAN-III", "erspan3-sub": "ERSPAN-III",
               "gre-teb": "GRE-TEB", "vxlan": "VXLAN", "mpls": None}


def linktype(path):
    with open(path, "rb") as f:
        h = f.read(24)
    if len(h) < 24:
        return None
    e = "<" if struct.unpack("<I", h[:4])[0] in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    return struct.unpack(e + "I", h[20:24])[0]


def summary(qptrace, path, extra=()):
    out = subprocess.run([qptrace, "summary", "--json", "-q", *extra, path],
                         capture_output=True, text=True, timeout=120)
    if out.returncode not in (0,):
        raise RuntimeError(f"{path}: exit {out.returncode}: {out.stderr.strip()}")
    d = json.loads(out.stdout)
    d.pop("file", None)
    # the largest captured length of a frame the snap length cut: the outer
    # headers add to it (a frame cut is cut as many bytes into its payload)
    d["totals"].pop("cut_snaplen", None)
    return d


def tshark_ib(path):
    out = subprocess.run(["tshark", "-n", "-r", path, "-Y", "infiniband", "-T", "fields",
                          "-e", "frame.number"], capture_output=True, text=True, timeout=300)
    return len(out.stdout.split())


def no_pcp(s):
    """MPLS carries the IP packet without its Ethernet frame: the 802.1Q
    priorities are not in the wrapped capture, nor what is said of them
    (the CNPs on an unexpected priority); everything else must be equal."""
    s = json.loads(json.dumps(s))
    for c in s["conversations"]:
        for d in c["directions"]:
            for k in ("pcp", "ack_pcp", "cnp_pcp", "cnp_unexpected"):
                d.pop(k, None)
    s["findings"] = [f for f in s["findings"] if f["kind"] != "cnp_priority"]
    for f in s["findings"]:
        f.pop("priority", None)
    # the roll-up groups findings by priority: compared through the findings
    s.pop("groups", None)
    return s


TUNNEL_ID = {"erspan2": wrap.SESSION_ID, "erspan3": wrap.SESSION_ID + 1,
             "erspan3-sub": wrap.SESSION_ID + 1, "gre-teb": None, "vxlan": wrap.VNI}


def tunnel_popped(s, kind):
    """s with its groups' tunnel members taken out, and what is wrong with
    them: a group about conversations names the wrapper's session, one
    about the capture (or any in the original or MPLS) none."""
    s = json.loads(json.dumps(s))
    name, bad = TUNNEL_NAME.get(kind), []
    want = {"kind": name, "id": TUNNEL_ID.get(kind), "outer_src": ".".join(map(str, wrap.OUTER_SRC)),
            "outer_dst": ".".join(map(str, wrap.OUTER_DST)), "several": False}
    for g in s.get("groups", []):
        t = g.pop("tunnel", "absent")
        if g["capture_wide"] or not name:
            if t is not None:
                bad.append(t)
        elif not t or {k: t.get(k) for k in want} != want:
            bad.append(t)
    return s, bad


def first_diff(a, b, where=""):
    if type(a) is not type(b):
        return f"{where}: {a!r} != {b!r}"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{where}.{k}: only in {'wrapped' if k in b else 'original'}"
            d = first_diff(a[k], b[k], f"{where}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{where}: {len(a)} items != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_diff(x, y, f"{where}[{i}]")
            if d:
                return d
        return None
    return None if a == b else f"{where}: {a!r} != {b!r}"


def edge_cases(qptrace, root, tmp, n, failed):
    """Hand-made frames at the decoder's limits: (name, frame, RoCE?, check)."""
    _, _, _, frames = wrap.read_pcap(os.path.join(root, "captures/made/nak_gbn.pcap"))
    inner = next(d for _, _, _, d in frames if len(d) > 60 and d[12:14] == b"\x08\x00")
    L = len(inner)

    def teb(frame):
        _, d = wrap.wrap("gre-teb", 1, 0, 0, len(frame), frame)
        return d

    def nested(k):
        f = inner
        for _ in range(k):
            f = teb(f)
        return f

    def patch(f, off, b):
        return f[:off] + b + f[off + len(b):]

    _, e2 = wrap.wrap("erspan2", 1, 0, 0, L, inner)
    _, e3 = wrap.wrap("erspan3", 1, 0, 0, L, inner)
    _, vx = wrap.wrap("vxlan", 1, 0, 0, L, inner)
    _, mp = wrap.wrap("mpls", 1, 0, 0, L, inner)
    ip = wrap.inner_ip_offset(inner)
    deep_mpls = wrap.OUTER_ETH + b"\x88\x47" + b"".join(
        struct.pack("!I", (100 + i) << 12 | (0x100 if i == 16 else 0) | 64) for i in range(17)) + inner[ip:]
    three_mpls = wrap.OUTER_ETH + b"\x88\x47" + b"".join(
        struct.pack("!I", (100 + i) << 12 | (0x100 if i == 2 else 0) | 64) for i in range(3)) + inner[ip:]
    gre_off = 14 + 20
    cases = [
        ("GRE-TEB in GRE-TEB, 4 deep", nested(4), True, lambda r: r["tunnel"]["depth"] == 4),
        ("GRE-TEB 5 deep (past the limit)", nested(5), False, None),
        ("ERSPAN II with a type III version nibble", patch(e2, gre_off + 8, b"\x20"), False, None),
        ("ERSPAN III, frame type not Ethernet", patch(e3, gre_off + 8 + 10, b"\x04\x00"), False, None),
        ("GRE with the RFC 1701 routing bit", patch(e2, gre_off, b"\x50\x00"), False, None),
        ("GRE version 1 (PPTP)", patch(e2, gre_off, b"\x10\x01"), False, None),
        ("VXLAN without the I flag", patch(vx, gre_off + 8, b"\x00"), False, None),
        ("MPLS, 17 labels (past the limit)", deep_mpls, False, None),
        ("MPLS, 3 labels", three_mpls, True,
         lambda r: r["mpls"] == {"labels": [100, 101, 102], "depth": 3}),
        ("ERSPAN III cut inside its header", (e3[:gre_off + 8 + 6], len(e3)), False, None),
        ("VXLAN cut inside the inner Ethernet header", (vx[:14 + 20 + 16 + 10], len(vx)), False, None),
        ("ERSPAN II, the inner frame's payload and ICRC cut", (e2[:len(e2) - 8], len(e2)), True,
         lambda r: r.get("cut_by_capture") and "malformed" not in r and
         r["tunnel"]["session_id"] == wrap.SESSION_ID),
    ]
    # ERSPAN II with the T bit: the mirror cut the frame; the outer lengths
    # are those of the cut frame (the inner IP length is the truth)
    cut = inner[:ip + 40 + 16]
    tun = wrap.gre(0x88BE, 1) + struct.pack("!HHI", 0x1000, 0x0400 | wrap.SESSION_ID, 0)
    tbit = wrap.OUTER_ETH + b"\x08\x00" + wrap.ipv4(47, len(tun) + len(cut), 1) + tun + cut
    cases.append(("ERSPAN II with the T bit, the mirror cut the frame", tbit, True,
                  lambda r: r.get("cut_by_capture") and "malformed" not in r and
                  r["tunnel"]["truncated"] is True))
    cases.append(("GRE-TEB, the frame cut but the outer IP length says so", teb(cut), True,
                  lambda r: r.get("malformed") == "IP length does not match the frame"))
    path = os.path.join(tmp, "edges.pcap")
    recs = []
    for i, (_, f, _, _) in enumerate(cases):
        f, wirelen = f if isinstance(f, tuple) else (f, len(f))
        recs.append((1000 + i, 0, wirelen, f))
    wrap.write_pcap(path, False, 65535, recs)
    pk = subprocess.run([qptrace, "packets", "--json", path], capture_output=True, text=True,
                        timeout=60)
    rows = {json.loads(l)["frame"]: json.loads(l) for l in pk.stdout.splitlines()}
    for i, (name, _, roce, chk) in enumerate(cases):
        r = rows.get(i + 1)
        ok = (r is not None) == roce and (not chk or (r is not None and chk(r)))
        n += 1
        print(f"{'ok' if ok else 'not ok'} {n} - edge: {name}: "
              f"{'RoCE' if r else 'not RoCE'}{', ' + json.dumps(r.get('tunnel') or r.get('mpls')) if r else ''}")
        if not ok:
            failed.append(f"edge {name}")
    return n


def no_ethernet(summ):
    """What an MPLS path cannot carry: Ethernet MAC control frames (PFC,
    PAUSE) and the 802.1Q priorities of the RoCE frames, so the pfc list and
    the findings made from it are left out of the comparison."""
    summ = dict(summ)
    summ.pop("pfc", None)
    summ["findings"] = [f for f in summ.get("findings", []) if not f["kind"].startswith("pfc_")]
    summ.pop("groups", None)
    return summ


def main():
    qptrace, root = sys.argv[1], sys.argv[2]
    caps = sorted(glob.glob(os.path.join(root, "captures/made/*.pcap")) +
                  glob.glob(os.path.join(root, "captures/rxe/*.pcap")) +
                  glob.glob(os.path.join(root, "captures/rxe/lossy/*.pcap")))
    caps = [c for c in caps if linktype(c) == 1]
    if tap.under_asan():
        # each qptrace run costs ~3 times as much there: every 4th capture,
        # and those with checks of their own
        whole = len(caps)
        caps = [c for i, c in enumerate(caps)
                if i % 4 == 0 or os.path.relpath(c, root) in TSHARK_CAPTURES or
                os.path.relpath(c, root) == "captures/rxe/write_bw_drop.pcap"]
        tap.sanitized_note(f"{len(caps)} of the {whole} captures (every 4th, and those "
                           "tshark or packets --json also check)")
    have_tshark = shutil.which("tshark") is not None
    tmp = tempfile.mkdtemp(prefix="qpt-mirrors-")
    n = 0
    failed = []
    convs = frames = 0
    try:
        for cap in caps:
            rel = os.path.relpath(cap, root)
            want = summary(qptrace, cap)
            ib_want = tshark_ib(cap) if have_tshark and rel in TSHARK_CAPTURES else None
            for kind in wrap.KINDS:
                out = os.path.join(tmp, f"{kind}-{os.path.basename(cap)}")
                subprocess.run([sys.executable, os.path.join(HERE, "wrap.py"), kind, cap, out],
                               check=True, timeout=120)
                got, bad_tunnel = tunnel_popped(summary(qptrace, out), kind)
                n += 1
                d = first_diff(no_pcp(no_ethernet(want)) if kind == "mpls" else tunnel_popped(want, None)[0],
                               no_pcp(no_ethernet(got)) if kind == "mpls" else got, "summary")
                if bad_tunnel:
                    d = f"{d or ''} groups naming another session than the wrapper's: {bad_tunnel[:2]}"
                if d:
                    failed.append(f"{rel} in {kind}: {d}")
                    print(f"not ok {n} - {rel} {kind}: {d}")
                else:
                    print(f"ok {n} - {rel} {kind}: {len(got['conversations'])} conversations, "
                          f"{got['totals']['iba_packets']} RoCE/IB packets as in the original")
                    convs += len(got["conversations"])
                    frames += got["totals"]["iba_packets"]
                if ib_want is not None:
                    n += 1
                    ib_got = tshark_ib(out)
                    ok = ib_got == ib_want
                    print(f"{'ok' if ok else 'not ok'} {n} - tshark: {rel} {kind}: "
                          f"{ib_got} infiniband frames, the original {ib_want}")
                    if not ok:
                        failed.append(f"tshark {rel} {kind}: {ib_got} != {ib_want}")
                if rel == "captures/rxe/write_bw_drop.pcap":
                    n += 1
                    pk = subprocess.run([qptrace, "packets", "--json", out], capture_output=True,
                                        text=True, timeout=120)
                    rows = [json.loads(l) for l in pk.stdout.splitlines()]
                    name = TUNNEL_NAME[kind]
                    bad = [r["frame"] for r in rows
                           if (name and r.get("tunnel", {}).get("type") != name) or
                           (not name and r.get("mpls", {}).get("labels") != list(wrap.MPLS_LABELS))]
                    print(f"{'ok' if rows and not bad else 'not ok'} {n} - packets --json {kind}: "
                          f"{len(rows)} frames, {len(bad)} without the tunnel")
                    if bad or not rows:
                        failed.append(f"packets --json {kind}: frames {bad[:5]}")
        # -p-style option for VXLAN on another port
        n += 1
        cap = os.path.join(root, "captures/made/nak_gbn.pcap")
        out = os.path.join(tmp, "vxlan-8472.pcap")
        subprocess.run([sys.executable, os.path.join(HERE, "wrap.py"), "vxlan", cap, out], check=True)
        with open(out, "rb") as f:
            data = bytearray(f.read())
        # the wrapper writes UDP port 4789 at a fixed place: outer eth 14 + IP 20 + 2
        off = 24
        while off + 16 <= len(data):
            incl = struct.unpack("<I", data[off + 8:off + 12])[0]
            p = off + 16 + 14 + 20 + 2
            assert data[p:p + 2] == b"\x12\xb5"
            data[p:p + 2] = struct.pack("!H", 8472)
            off += 16 + incl
        with open(out, "wb") as f:
            f.write(data)
        plain = summary(qptrace, out)
        other, bad_tunnel = tunnel_popped(summary(qptrace, out, ["--vxlan-port", "8472"]), "vxlan")
        want = tunnel_popped(summary(qptrace, cap), None)[0]
        ok = plain["totals"]["iba_packets"] == 0 and not first_diff(want, other) and not bad_tunnel
        print(f"{'ok' if ok else 'not ok'} {n} - VXLAN on UDP 8472: {plain['totals']['iba_packets']} "
              f"RoCE packets without --vxlan-port, {other['totals']['iba_packets']} with it")
        if not ok:
            failed.append("--vxlan-port 8472")
        n = edge_cases(qptrace, root, tmp, n, failed)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"1..{n}")
    print(f"# {len(caps)} captures x {len(wrap.KINDS)} encapsulations: {convs} conversations, "
          f"{frames} RoCE/IB packets compared")
    for f in failed:
        print("# FAILED", f)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
