#!/usr/bin/env python3
"""rollup.py - the diagnosis for the whole link (issue 30).

    rollup.py QPTRACE QPSCEN ROOT

Made captures (qpscen, under a temporary folder, removed after):

* fleet: 120 RC QPs from 10 senders (10.1.0.1 .. 10.1.0.10), two of them
  (10.1.0.1, 10.1.0.2) losing packets before the capture point, delivered
  as an ERSPAN II mirror (tests/wrap.py).  The default summary is at most
  40 lines; its first group names both lossy senders and no other, the
  side of the capture point, the share re-sent and the first and last
  time, each checked against what this script reads from the capture
  itself (a PSN below the next expected one from the same sender is a
  resend, a PSN past it a gap; PSNs do not wrap and copies do not occur
  in it); -v and --json
  name every conversation that lost a packet; --top N names N.
* icrc: 200,000 two-way RC conversations, every ICRC wrong: one bad_icrc
  finding about the capture (a note naming --no-crc), at most 40 lines,
  and the peak RSS of summary within 1.2x that of summary --no-crc.
* --interval and --from/--to: each interval's events, packets and pauses
  are those `events --json` and `packets --json` give for it; a window's
  those of events and packets with the same --from/--to.
* --fail-on: the exit status for captures whose worst finding is an
  error, a warning, or none (statuses from the findings' severities in
  the JSON), and a bad level.
"""
import glob
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import tap  # noqa: E402
import wrap  # noqa: E402

failures = []
n_checks = 0


def check(ok, what):
    global n_checks
    n_checks += 1
    print(f"{'ok' if ok else 'not ok'} {n_checks} - {what}")
    if not ok:
        failures.append(what)


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, timeout=300, **kw)


def peak_rss_kib(args):
    """The peak RSS of args run alone (a child of a child: RUSAGE_CHILDREN
    of a fresh interpreter is that one run's)."""
    code = ("import resource, subprocess, sys\n"
            "r = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE)\n"
            "sys.stderr.buffer.write(r.stdout)\n"
            "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
    out = run([sys.executable, "-c", code] + args)
    rc, kib = out.stdout.split()
    return int(rc), int(kib), out.stderr


def read_truth(path):
    """From the (unwrapped) pcap: per conversation (sender, QPN sent to), its
    request packets, resends, first gap time and last resend time."""
    nsec, _, _, frames = wrap.read_pcap(path)
    convs = {}
    for sec, frac, _, data in frames:
        t = sec * 1_000_000_000 + (frac if nsec else frac * 1000)
        if len(data) < 14 + 20 + 8 + 12 or data[12:14] != b"\x08\x00":
            continue
        ip = data[14:34]
        src = ".".join(str(b) for b in ip[12:16])
        bth = data[42:54]
        opcode = bth[0]
        dqp = int.from_bytes(bth[5:8], "big")
        psn = int.from_bytes(bth[9:12], "big")
        if opcode in (0x11, 0x81):  # ACK / NAK, CNP: not requests
            continue
        c = convs.setdefault((src, dqp), {"packets": 0, "resent": 0, "seen": set(),
                                          "next": None, "first": None, "last": None})
        c["packets"] += 1
        if psn in c["seen"] or (c["next"] is not None and psn < c["next"]):
            # sent before: seen here, or the PSN a gap skipped (lost before
            # the capture point, its sender sent it)
            c["resent"] += 1
            c["last"] = t
        elif c["next"] is not None and psn != c["next"] and c["first"] is None:
            c["first"] = t  # the gap: a PSN past the next expected one
        c["seen"].add(psn)
        c["next"] = max(c["next"] or 0, psn + 1)
    return convs


def hhmmss(ns):
    s, ns = divmod(ns, 1_000_000_000)
    s %= 86400
    return f"{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}.{ns // 1000:06d}"


def test_fleet(qptrace, qpscen, tmp):
    raw = os.path.join(tmp, "fleet.pcap")
    cap = os.path.join(tmp, "fleet_erspan.pcap")
    r = run([qpscen, "bench", "-o", raw, "--packets", "24000", "--qps", "120",
             "--senders", "10", "--lossy", "2", "--loss", "0.01", "--seed", "3"])
    check(r.returncode == 0, f"qpscen bench --senders 10 --lossy 2: {r.stderr.strip()}")
    r = run([sys.executable, os.path.join(HERE, "wrap.py"), "erspan2", raw, cap])
    check(r.returncode == 0, f"wrap.py erspan2: {r.stderr.strip()}")
    truth = read_truth(raw)
    lossy = {k: v for k, v in truth.items() if v["resent"]}
    senders = sorted({k[0] for k in lossy})
    check(senders == ["10.1.0.1", "10.1.0.2"], f"the made capture: lossy senders {senders}")
    check(len(truth) >= 100 and len({k[0] for k in truth}) == 10,
          f"the made capture: {len(truth)} QPs from {len({k[0] for k in truth})} senders")

    out = run([qptrace, "summary", "-q", cap])
    lines = out.stdout.splitlines()
    check(out.returncode == 0, f"summary exit {out.returncode}")
    check(len(lines) <= 40, f"fleet: default summary {len(lines)} lines (at most 40)")
    at = next((i for i, l in enumerate(lines) if l.startswith("diagnosis")), None)
    check(at is not None, "fleet: a diagnosis")
    first = lines[at + 1] if at is not None else ""
    named = set(re.findall(r"10\.1\.0\.\d+", first))
    check(named == {"10.1.0.1", "10.1.0.2"}, f"fleet: first group names the senders {sorted(named)}")
    check("between the senders and the capture point" in first,
          "fleet: first group says the side of the capture point")
    part = sum(v["resent"] for v in lossy.values())
    whole = sum(v["packets"] for v in lossy.values())
    check(f"{part} of {whole} packets" in first,
          f"fleet: first group's share {part} of {whole} (the capture's own count)")
    t0 = min(v["first"] for v in lossy.values() if v["first"] is not None)
    t1 = max(v["last"] for v in lossy.values())
    check(f"from {hhmmss(t0)} to {hhmmss(t1)}" in first,
          f"fleet: first group's time {hhmmss(t0)} to {hhmmss(t1)}: {first[-60:]}")
    check(re.search(r"and \d+ more \(-v\)", out.stdout) is not None,
          "fleet: the conversations not named are counted")
    # the first line: the capture's first and last frame in ISO 8601 UTC
    nsec, _, _, frames = wrap.read_pcap(raw)
    f0 = frames[0][0] * 10**9 + frames[0][1] * (1 if nsec else 1000)
    f1 = frames[-1][0] * 10**9 + frames[-1][1] * (1 if nsec else 1000)
    check(f"2024-01-01T{hhmmss(f0)}Z to 2024-01-01T{hhmmss(f1)}Z" in out.stdout,
          "fleet: the header's first and last frame in ISO 8601 UTC")

    # -v and --json: every conversation that lost a packet
    js = json.loads(run([qptrace, "summary", "--json", "-q", cap]).stdout)
    ids = {}
    for c in js["conversations"]:
        ep = c["endpoints"]
        ids[(ep[0]["addr"], ep[1]["qpn"])] = c["id"]
    want = sorted(ids[k] for k in lossy)
    g = js["groups"][0]
    got = sorted(js["findings"][i]["conv"] for i in g["findings"])
    check(got == want, f"fleet --json: the first group's conversations {len(got)} of {len(want)}")
    check(g["share"]["part"] == part and g["share"]["whole"] == whole,
          "fleet --json: the first group's share")
    check(g["senders"]["count"] == 2, "fleet --json: two senders")
    verbose = run([qptrace, "summary", "-q", "-v", cap]).stdout
    vfirst = verbose.splitlines()[at + 2]
    check(sorted(int(x) for x in re.findall(r"(\d+)(?: \(\d+[^)]*\))?(?:,|$)",
                                             vfirst.split("conversations ", 1)[1])) == want,
          "fleet -v: the group names every conversation")
    top3 = run([qptrace, "summary", "-q", "--top", "3", cap]).stdout.splitlines()
    named3 = top3[at + 2].split("conversations ", 1)[1]
    check(len(re.findall(r"\d+ \(|\d+,", named3.split(" and ")[0])) == 3 and
          f"and {len(want) - 3} more (-v)" in named3, f"fleet --top 3: {named3}")
    check(len(top3) <= 40 and sum(1 for l in top3 if re.match(r"^\s+\d+ RC ", l)) == 3,
          "fleet --top 3: three table rows")


def test_sessions(qptrace, qpscen, tmp):
    """A mirror of several sessions (tests/wrap.py, a frame's session chosen
    by its conversation's sender): the roll-up has a group per session that
    lost packets, naming the session (ERSPAN session id, VXLAN VNI, outer
    addresses), each with that session's share re-sent as read from the
    capture itself (read_truth), and none for a session that lost none."""
    raw = os.path.join(tmp, "sessions.pcap")
    r = run([qpscen, "bench", "-o", raw, "--packets", "6000", "--qps", "24", "--senders", "4",
             "--lossy", "2", "--loss", "0.01", "--seed", "5"])
    check(r.returncode == 0, f"qpscen bench --senders 4 --lossy 2: {r.stderr.strip()}")
    truth = read_truth(raw)
    nsec, snap, _, frames = wrap.read_pcap(raw)
    o = lambda *b: bytes(b)
    # (kind, sessions: sender -> (id, outer source, outer destination))
    cases = (("erspan2", {"10.1.0.1": (7, o(198, 51, 100, 1), o(198, 51, 100, 2)),
                          "10.1.0.2": (7, o(198, 51, 100, 1), o(198, 51, 100, 2)),
                          "10.1.0.3": (9, o(198, 51, 100, 1), o(198, 51, 100, 2)),
                          "10.1.0.4": (9, o(198, 51, 100, 1), o(198, 51, 100, 2))}),
             ("vxlan", {"10.1.0.1": (100, o(203, 0, 113, 1), o(203, 0, 113, 2)),
                        "10.1.0.3": (100, o(203, 0, 113, 1), o(203, 0, 113, 2)),
                        "10.1.0.2": (200, o(203, 0, 113, 3), o(203, 0, 113, 4)),
                        "10.1.0.4": (200, o(203, 0, 113, 3), o(203, 0, 113, 4))}))
    ip = lambda b: ".".join(str(x) for x in b)
    for kind, sessions in cases:
        out = []
        for i, (sec, frac, orig, d) in enumerate(frames):
            sender = next(a for a in (ip(d[26:30]), ip(d[30:34])) if a in sessions)
            sid, src, dst = sessions[sender]
            out.append((sec, frac) + wrap.wrap(kind, i, sec, frac, orig, d, session=sid, vni=sid,
                                               outer=(src, dst)))
        cap = os.path.join(tmp, f"sessions_{kind}.pcap")
        wrap.write_pcap(cap, nsec, min(snap + 128, 262144), out)
        name = "ERSPAN-II session" if kind == "erspan2" else "VXLAN VNI"
        want = {}  # session id -> [resent, packets] of its conversations that lost any
        for (src, _), v in truth.items():
            if v["resent"]:
                w = want.setdefault(sessions[src][0], [0, 0])
                w[0] += v["resent"]
                w[1] += v["packets"]
        check(len(want) == (1 if kind == "erspan2" else 2),
              f"{kind}: the made capture loses packets in sessions {sorted(want)}")
        js = json.loads(run([qptrace, "summary", "--json", "-q", cap]).stdout)
        loss = [g for g in js["groups"] if g["kind"] == "loss_before_capture"]
        got = {g["tunnel"]["id"]: [g["share"]["part"], g["share"]["whole"]] for g in loss if g.get("tunnel")}
        check(len(loss) == len(want) and got == want,
              f"{kind}: a loss group per lossy session, its share: {got}, truth {want}")
        for g in loss:
            t = g.get("tunnel") or {}
            sid = t.get("id")
            src, dst = next(((ip(v[1]), ip(v[2])) for v in sessions.values() if v[0] == sid),
                            (None, None))
            check(t.get("kind") == ("ERSPAN-II" if kind == "erspan2" else "VXLAN") and
                  t.get("outer_src") == src and t.get("outer_dst") == dst and not t.get("several"),
                  f"{kind}: group of session {sid}: {t}")
        text = run([qptrace, "summary", "-q", cap]).stdout.splitlines()
        for sid, (part, whole) in want.items():
            src, dst = next((ip(v[1]), ip(v[2])) for v in sessions.values() if v[0] == sid)
            line = [l for l in text if f"in {name} {sid}, {src} > {dst}" in l]
            check(len(line) == 1 and f"{part} of {whole} packets" in line[0] and
                  "loss_before_capture" in line[0],
                  f"{kind}: the roll-up line of {name} {sid}: {line}")
        check(len(text) <= 40, f"{kind}: {len(text)} lines")
    # one conversation under two sessions (a mirror of each host's port):
    # the first frame's session (10.0.0.1's requests), noted as several
    nsec, snap, _, frames = wrap.read_pcap(os.path.join(HERE, "..", "captures/made/nak_gbn.pcap"))
    out = [(sec, frac) + wrap.wrap("erspan2", i, sec, frac, orig, d,
                                   session=7 if d[26:30] == bytes([10, 0, 0, 1]) else 9)
           for i, (sec, frac, orig, d) in enumerate(frames)]
    cap = os.path.join(tmp, "two_ports.pcap")
    wrap.write_pcap(cap, nsec, min(snap + 128, 262144), out)
    g = json.loads(run([qptrace, "summary", "--json", "-q", cap]).stdout)["groups"]
    t = g[0].get("tunnel") or {} if g else {}
    check(len(g) == 1 and t.get("id") == 7 and t.get("several") is True,
          f"a conversation in sessions 7 and 9: {t}")
    check("in ERSPAN-II session 7, 198.51.100.1 > 198.51.100.2 (and another)" in
          run([qptrace, "summary", "-q", cap]).stdout, "... its line says so")


def test_icrc(qptrace, qpscen, tmp):
    # the JSON on 2,000 conversations, the text and the memory on 200,000
    # (50,000 under ASan: 200,000 took 171 s of a run alone there)
    many = 200000
    if tap.under_asan():
        many = 50000
        tap.sanitized_note(f"icrc: {many} conversations, not 200000")
    for qps, big in ((2000, False), (many, True)):
        cap = os.path.join(tmp, f"icrc{qps}.pcap")
        r = run([qpscen, "bench", "-o", cap, "--packets", str(2 * qps), "--qps", str(qps),
                 "--msg-size", "0", "--bad-icrc"])
        check(r.returncode == 0, f"qpscen bench --bad-icrc: {r.stderr.strip()}")
        if big:
            break
        js = json.loads(run([qptrace, "summary", "--json", "-q", cap]).stdout)
        bad = [f for f in js["findings"] if f["kind"] == "bad_icrc"]
        check(len(js["conversations"]) == qps, f"icrc: {len(js['conversations'])} conversations")
        check(len(bad) == 1 and bad[0]["conv"] is None, f"icrc: {len(bad)} bad_icrc findings (1)")
        check(bool(bad) and "--no-crc" in bad[0]["text"] and bad[0]["severity"] == "note" and
              bad[0]["share"] == {"part": 2 * qps, "whole": 2 * qps, "percent": 100},
              "icrc: every packet, a note naming --no-crc")
    rc1, with_crc, text = peak_rss_kib([qptrace, "summary", "-q", cap])
    lines = text.splitlines()
    check(len(lines) <= 40, f"icrc: default summary {len(lines)} lines (at most 40)")
    check(sum("bad ICRC" in l for l in lines if l.startswith("  ")) == 1 and
          f"{2 * qps} of {2 * qps} packets (100 %) in {qps} conversations with a bad ICRC" in text,
          f"icrc: one bad ICRC line, every packet of the {qps:,} conversations")
    rc2, no_crc, _ = peak_rss_kib([qptrace, "summary", "-q", "--no-crc", cap])
    check(rc1 == 0 and rc2 == 0 and with_crc <= 1.2 * no_crc,
          f"icrc: peak RSS {with_crc} KiB, with --no-crc {no_crc} KiB "
          f"({with_crc / max(no_crc, 1):.2f}x, at most 1.2x)")


def test_empty_answers(qptrace, root, tmp):
    """An answer that would look like good news: a BPF filter matching
    nothing in an ERSPAN mirror, RoCEv2 on UDP port 4792 (nak_gbn's frames
    with the port rewritten here): a warning finding each, exit 1 with
    --fail-on warning; with -p 4792 the port's traffic is analysed."""
    nak = os.path.join(root, "captures/made/nak_gbn.pcap")
    mirror = os.path.join(tmp, "nak_erspan.pcap")
    run([sys.executable, os.path.join(HERE, "wrap.py"), "erspan2", nak, mirror])
    r = run([qptrace, "summary", "--json", "-q", "-f", "host 10.0.0.1", mirror])
    kinds = [f["kind"] for f in json.loads(r.stdout)["findings"]]
    check(kinds == ["filter_matched_nothing"], f"BPF on the inner address of a mirror: {kinds}")
    r = run([qptrace, "summary", "-q", "--fail-on", "warning", "-f", "host 10.0.0.1", mirror])
    check(r.returncode == 1 and "--addr" in r.stdout, f"... --fail-on warning: exit {r.returncode}")
    r = run([qptrace, "summary", "--json", "-q", "-f", "host 198.51.100.1", mirror])
    kinds = [f["kind"] for f in json.loads(r.stdout)["findings"]]
    check("filter_matched_nothing" not in kinds, f"BPF on the outer address: {kinds}")
    nsec, snap, _, frames = wrap.read_pcap(nak)
    moved = []
    for sec, frac, orig, d in frames:
        d = bytearray(d)
        if d[12:14] == b"\x08\x00" and d[23] == 17 and d[36:38] == (4791).to_bytes(2, "big"):
            d[36:38] = (4792).to_bytes(2, "big")
        moved.append((sec, frac, orig, bytes(d)))
    port = os.path.join(tmp, "port4792.pcap")
    wrap.write_pcap(port, nsec, snap, moved)
    js = json.loads(run([qptrace, "summary", "--json", "-q", port]).stdout)
    f = [f for f in js["findings"] if f["kind"] == "roce_other_port"]
    check(len(f) == 1 and "port 4792" in f[0]["text"] and "-p 4792" in f[0]["text"] and
          f"{len(frames)} UDP datagrams" in f[0]["text"], f"RoCEv2 on port 4792: {f}")
    r = run([qptrace, "summary", "-q", "--fail-on", "warning", port])
    check(r.returncode == 1, f"RoCEv2 on port 4792 --fail-on warning: exit {r.returncode}")
    js2 = json.loads(run([qptrace, "summary", "--json", "-q", "--no-crc", "-p", "4792", port]).stdout)
    check(js2["totals"]["retransmitted_packets"] == 8 and
          not [f for f in js2["findings"] if f["kind"] == "roce_other_port"],
          "with -p 4792: analysed, no roce_other_port")
    js3 = json.loads(run([qptrace, "summary", "--json", "-q", nak]).stdout)
    check(not [f for f in js3["findings"] if f["kind"] in ("roce_other_port", "filter_matched_nothing")],
          "nak_gbn itself: neither")


def test_every_capture_fits(qptrace, root):
    """The default summary of every capture of the repository: 40 lines at
    most (the made fleet and ICRC captures are checked above)."""
    caps = sorted(p for d in ("made", "rxe", "rxe/lossy", "public")
                  for p in glob.glob(os.path.join(root, "captures", d, "*.pcap*")))
    longest = (0, "")
    for cap in caps:
        r = run([qptrace, "summary", "-q", cap])
        longest = max(longest, (len(r.stdout.splitlines()), os.path.relpath(cap, root)))
    check(longest[0] <= 40 and len(caps) > 100,
          f"every capture ({len(caps)}): the longest default summary {longest[0]} lines ({longest[1]})")


def test_fail_on(qptrace, root):
    for name in ("nak_gbn", "rnr", "clean_write", "dup_capture"):
        cap = os.path.join(root, "captures/made", name + ".pcap")
        js = json.loads(run([qptrace, "summary", "--json", "-q", cap]).stdout)
        sev = {f["severity"] for f in js["findings"]}
        for level, worse in (("warning", {"warning", "error"}), ("error", {"error"})):
            want = 1 if sev & worse else 0
            got = run([qptrace, "summary", "-q", "--fail-on", level, cap]).returncode
            check(got == want, f"--fail-on {level} {name} (findings {sorted(sev)}): exit {got}, want {want}")
        got = run([qptrace, "summary", "-q", cap]).returncode
        check(got == 0, f"{name} without --fail-on: exit {got}")
    r = run([qptrace, "summary", "--fail-on", "severe", os.path.join(root, "captures/made/rnr.pcap")])
    check(r.returncode == 2 and "--fail-on" in r.stderr and not r.stdout,
          "--fail-on severe: exit 2, a message, no output")
    r = run([qptrace, "summary", "--fail-on", "warning", os.path.join(root, "nosuch.pcap")])
    check(r.returncode == 2, "--fail-on on a missing file: exit 2")


def ns_of(t):
    """A JSON time (seconds with six decimals) as integer nanoseconds."""
    s = f"{t:.6f}"
    whole, frac = s.split(".")
    return int(whole) * 10**9 + int(frac) * 1000


def iso_ns(s):
    import datetime
    d = datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)
    return int(d.timestamp()) * 10**9 + d.microsecond * 1000


def jsonl(qptrace, *args):
    r = run([qptrace, *args])
    return [json.loads(l) for l in r.stdout.splitlines()]


def is_pause(p):
    m = p.get("macc")
    if not m or m.get("error"):
        return False
    q = m.get("quanta", [])
    if m.get("kind") == "PAUSE":
        return bool(q and q[0])
    return any(q[i] for i in range(8) if m.get("cev", 0) >> i & 1 and i < len(q))


def test_intervals(qptrace, root, fleet):
    """summary --interval: each row's events are those `events --json` gives
    in that interval (by their time, from the first frame), its packets and
    pauses those `packets --json` lists; --from/--to: the window's counts
    are those events --from/--to and packets --from/--to give."""
    cases = [(os.path.join(root, "captures/made", n + ".pcap"), s) for n, s in
             (("nak_gbn", "0.00002"), ("naks", "0.0005"), ("cnp_ecn", "0.0001"),
              ("pfc_stall", "0.00005"), ("merged_hosts", "0.00001"))]
    cases.append((fleet, "0.005"))
    for cap, s in cases:
        name = os.path.basename(cap)
        js = json.loads(run([qptrace, "summary", "--json", "-q", "--interval", s, cap]).stdout)
        iv = js["intervals"]
        t0 = iso_ns(js["first_frame"])
        step = int(round(float(s) * 1e9))
        check(iv["start"] == js["first_frame"] and abs(iv["seconds"] - float(s)) < 1e-12,
              f"{name} --interval {s}: start and seconds")
        want_ev = {}
        all_ev = jsonl(qptrace, "events", "--json", "-q", cap)
        for e in all_ev:
            k = (ns_of(e["time"]) - t0) // step
            want_ev.setdefault(max(k, 0), {}).setdefault(e["kind"], 0)
            want_ev[max(k, 0)][e["kind"]] += 1
        want_pk, want_pause = {}, {}
        for p in jsonl(qptrace, "packets", "--json", cap):
            k = (ns_of(p["time"]) - t0) // step
            if p["transport"] != "MAC-control":
                want_pk[k] = want_pk.get(k, 0) + 1
            if is_pause(p):
                want_pause[k] = want_pause.get(k, 0) + 1
        rows = iv["rows"]
        bad = [i for i, r in enumerate(rows) if r["events"] != want_ev.get(i, {}) or
               r["packets"] != want_pk.get(i, 0) or r["pauses"] != want_pause.get(i, 0)]
        check(not bad and len(rows) > 1 and max(want_ev or [0]) < len(rows) and
              max(want_pk) < len(rows),
              f"{name} --interval {s}: {len(rows)} rows equal events/packets per interval"
              f"{'; first wrong ' + str(bad[0]) + ': ' + str(rows[bad[0]]) + ' want ' + str(want_ev.get(bad[0])) if bad else ''}")
        # a window: its counts are those of events/packets for the window
        # (from the first event to the middle one: never empty; without
        # events, the middle third of the capture)
        times = sorted(ns_of(e["time"]) - t0 for e in all_ev)
        span = iso_ns(js["last_frame"]) - t0
        frm, to = ((f"+{times[0] / 1e9:.6f}", f"+{times[len(times) // 2] / 1e9:.6f}") if times
                   else (f"+{span / 3e9:.6f}", f"+{2 * span / 3e9:.6f}"))
        wjs = json.loads(run([qptrace, "summary", "--json", "-q", "--from", frm, "--to", to,
                              cap]).stdout)
        w = wjs["window"]
        ev, by_dir = {}, {}
        wev = jsonl(qptrace, "events", "--json", "-q", "--from", frm, "--to", to, cap)
        for e in wev:
            ev[e["kind"]] = ev.get(e["kind"], 0) + 1
            if e["conv"] >= 0:
                k = by_dir.setdefault((e["conv"], e["dir"]), {})
                k[e["kind"]] = k.get(e["kind"], 0) + 1
        pk = [p for p in jsonl(qptrace, "packets", "--json", "--from", frm, "--to", to, cap)]
        check(w["events"] == ev and w["packets"] == sum(p["transport"] != "MAC-control" for p in pk)
              and w["pauses"] == sum(map(is_pause, pk)) and bool(ev or pk),
              f"{name} --from {frm} --to {to}: the window's counts {w} against events {ev}")
        check_window_counts(name, wjs, ev, by_dir, pk)
        # summary -l's worst conversations count the window too
        lt = run([qptrace, "summary", "-l", "-q", "--from", frm, "--to", to, cap]).stdout
        rows = re.findall(r"conv (\d+): (\d+)\+(\d+) retransmitted, (\d+)\+(\d+) PSN gaps, "
                          r"(\d+)\+(\d+) go-back-N", lt)
        bad = [r for r in rows for d in (0, 1) for k, kind in
               ((1, "retransmission"), (3, "psn_gap"), (5, "gbn_episode"))
               if int(r[k + d]) != by_dir.get((int(r[0]), d), {}).get(kind, 0)]
        check(not bad and (rows or not ev.get("retransmission")),
              f"{name} window: summary -l's {len(rows)} worst conversations count the window's "
              f"events{': ' + str(bad[:2]) if bad else ''}")
        # a window that starts after the first PSN gap: where the loss is,
        # its findings say as the whole input's do (the gap came before)
        gaps = [e for e in all_ev if e["kind"] == "psn_gap"]
        if gaps:
            after = f"+{(ns_of(gaps[0]['time']) - t0 + 1000) / 1e9:.6f}"
            g = json.loads(run([qptrace, "summary", "--json", "-q", "--from", after, cap]).stdout)
            where = {(f["conv"], f["dir"]): f["kind"] for f in js["findings"]
                     if f["kind"].startswith("loss_")}
            pairs = [(f["kind"], where[(f["conv"], f["dir"])]) for f in g["findings"]
                     if f["kind"].startswith("loss_") and (f["conv"], f["dir"]) in where]
            check(all(a == b for a, b in pairs) and (pairs or not name.startswith("nak_gbn")),
                  f"{name} --from {after} (after the first PSN gap): {len(pairs)} loss findings "
                  f"place the loss as the whole input's do: {pairs}")
        text = run([qptrace, "summary", "-q", "--from", frm, "--to", to, cap]).stdout
        check("in the window (--from/--to)" in text and
              "the diagnosis, the table and the totals count its frames and events" in text,
              f"{name}: the header says the counts are the window's")
        whole = re.search(r"(\d+) of (\d+) packets \([^)]*\) re-sent", text)
        if ev.get("retransmission") and whole:
            check(int(whole.group(1)) <= ev["retransmission"],
                  f"{name}: the first group's re-sent packets within the window's")


# the direction counters of summary --json against the events kinds that count them
COUNTED = {"retransmitted_packets": "retransmission", "psn_gaps": "psn_gap",
           "rnr_naks": "rnr_nak", "gbn_episodes": "gbn_episode", "cnps": "cnp",
           "ecn_ce": "ecn_ce", "duplicates": "duplicate", "out_of_order": "out_of_order",
           "timeouts": "timeout_resend", "rnr_retries": "rnr_retry", "dup_acks": "duplicate_ack",
           "ce_without_cnp": "ecn_no_cnp"}
TOTALS = {"retransmitted_packets": "retransmission", "psn_gaps": "psn_gap", "naks": "nak",
          "rnr_naks": "rnr_nak", "gbn_episodes": "gbn_episode", "cnps": "cnp", "ecn_ce": "ecn_ce"}


def check_window_counts(name, js, ev, by_dir, pk):
    """summary --from/--to counts the window: its totals, every conversation
    direction's counters and packets, its conversations and the findings'
    re-sent packets are those of events and packets for the same window."""
    t = js["totals"]
    bad = {k: (t[k], ev.get(v, 0)) for k, v in TOTALS.items() if t[k] != ev.get(v, 0)}
    # (the window's packets: those packets --from/--to lists, checked above)
    check(not bad and t["iba_packets"] == js["window"]["packets"],
          f"{name} window: totals against events {bad}, iba_packets {t['iba_packets']}")
    pk_dir = {}
    for p in pk:
        if p.get("conv") is not None and p.get("dir") is not None and p["conv"] >= 0:
            pk_dir[(p["conv"], p["dir"])] = pk_dir.get((p["conv"], p["dir"]), 0) + 1
    wrong = []
    for c in js["conversations"]:
        for d, x in enumerate(c["directions"]):
            want = by_dir.get((c["id"], d), {})
            for key, kind in COUNTED.items():
                if x[key] != want.get(kind, 0):
                    wrong.append((c["id"], d, key, x[key], want.get(kind, 0)))
            if sum(x["naks"].values()) != want.get("nak", 0):
                wrong.append((c["id"], d, "naks", x["naks"], want.get("nak", 0)))
            if x["packets"] != pk_dir.get((c["id"], d), 0):
                wrong.append((c["id"], d, "packets", x["packets"], pk_dir.get((c["id"], d), 0)))
    ids = {k[0] for k in pk_dir}
    check(not wrong and {c["id"] for c in js["conversations"]} == ids and
          js["window"]["conversations"] == len(ids),
          f"{name} window: {len(ids)} conversations' counters against events and packets"
          f"{': ' + str(wrong[:4]) if wrong else ''}")
    resent = sum(f["numbers"].get("resent_packets", 0) for f in js["findings"])
    if "rnr_retry" not in ev:  # (resends RNR NAKs explain are the RNR finding's)
        check(resent == ev.get("retransmission", 0),
              f"{name} window: the findings' re-sent packets {resent}, events {ev.get('retransmission', 0)}")


def test_timeline(qptrace, root, fleet, tmp):
    """plot --timeline: an SVG whose series have a point per interval of
    summary --interval S, each point's height its count (recovered from the
    drawing and its scale); without --interval, at most 512 intervals."""
    import xml.etree.ElementTree as ET
    ns = {"s": "http://www.w3.org/2000/svg"}
    for cap, s in ((os.path.join(root, "captures/made/nak_gbn.pcap"), "0.00002"), (fleet, "0.005")):
        svg = os.path.join(tmp, "timeline.svg")
        r = run([qptrace, "plot", "-q", "--timeline", "--interval", s, "-o", svg, cap])
        rows = json.loads(run([qptrace, "summary", "--json", "-q", "--interval", s, cap]).stdout)["intervals"]["rows"]
        root_el = ET.parse(svg).getroot()
        series = {p.get("data-series"): p.get("points") for p in root_el.iter("{%s}polyline" % ns["s"])}
        want = {"packets": [x["packets"] for x in rows],
                "re-sent": [x["events"].get("retransmission", 0) for x in rows],
                "NAKs": [x["events"].get("nak", 0) for x in rows],
                "pauses": [x["pauses"] for x in rows]}
        ok = r.returncode == 0
        for name, vals in want.items():
            ys = [float(p.split(",")[1]) for p in series.get(name, "").split()]
            # the panel: its lowest point is 0, its highest the largest count
            top, bottom = (50.0, 200.0) if name == "packets" else (240.0, 420.0)
            peak = max(max(vals), 1) if name == "packets" else max(
                [max(v) for v in want.values() if v is not want["packets"]] + [1])
            got = [(bottom - y) / (bottom - top) * peak for y in ys]
            # (points are drawn to 0.1 pixel)
            tol = 0.06 / (bottom - top) * peak + 1e-9
            ok &= len(ys) == len(rows) and all(abs(g - v) <= tol for g, v in zip(got, vals))
        check(ok, f"plot --timeline --interval {s} {os.path.basename(cap)}: {len(rows)} points a series, heights the counts")
    r = run([qptrace, "plot", "-q", "--timeline", "-o", svg, fleet])
    d = ET.parse(svg).getroot().find("s:desc", ns)
    n, width = int(d.get("data-intervals")), int(d.get("data-interval-ns"))
    check(r.returncode == 0 and 256 <= n <= 512 and width % 1000 == 0 and (width // 1000) & (width // 1000 - 1) == 0,
          f"plot --timeline without --interval: {n} intervals of {width} ns")


def main():
    qptrace, qpscen, root = sys.argv[1:4]
    tmp = tempfile.mkdtemp(prefix="qpt-rollup-", dir="/var/tmp" if os.path.isdir("/var/tmp") else None)
    try:
        for t in (lambda: test_fail_on(qptrace, root), lambda: test_empty_answers(qptrace, root, tmp),
                  lambda: test_every_capture_fits(qptrace, root), lambda: test_fleet(qptrace, qpscen, tmp),
                  lambda: test_sessions(qptrace, qpscen, tmp),
                  lambda: test_intervals(qptrace, root, os.path.join(tmp, "fleet_erspan.pcap")),
                  lambda: test_timeline(qptrace, root, os.path.join(tmp, "fleet_erspan.pcap"), tmp),
                  lambda: test_icrc(qptrace, qpscen, tmp)):
            start = time.monotonic()
            t()
            print(f"# {time.monotonic() - start:.1f} s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"1..{n_checks}")
    for f in failures:
        print(f"# FAILED {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
