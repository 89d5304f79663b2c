#!/usr/bin/env python3
"""monitor_series.py - qptrace monitor --metrics: series by link and
direction, per-QP series for the worst, no root needed (issue 31).

  * 200 clean QP pairs (tools/qpscen bench --loss 0) are read first from
    DIR and fill every one of --metrics-max-conversations 100 per-QP
    places; then a bad QP arrives (captures/made/nak_gbn.pcap inside
    ERSPAN II, session 42, tests/wrap.py) in a second file: it gets series
    of its own (first come first served left it in `other`), still at most
    100 QP pairs have series, and its retransmissions there are
    `qptrace summary`'s of that capture, per direction;
  * every series carries the link (the ERSPAN session, or DIR for the
    frames captured as they are) and the direction; the link series sum to
    summary's totals per direction and over both files;
  * qptrace_build_info names `qptrace --version`'s version; the last-packet
    timestamp of each link is its file's last record's time;
  * the series are fewer than docs/monitoring.md's bound;
  * promtool check metrics is clean (when promtool is installed);
  * with --metrics-max-links 1 the rest fold into one `other` series and
    the totals stay summary's;
  * PFC pause and XOFF frames per priority (captures/made/pfc_stall.pcap
    as a third file) are summary's.

    monitor_series.py QPTRACE QPSCEN ROOT
"""
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request

import tap  # tests/tap.py
from tap import check

SERIES = re.compile(r'^([a-z_:]+)\{(.*)\} (\S+)$')
LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def parse(text):
    """[(name, {labels}, value)] of the labelled samples."""
    out = []
    for line in text.splitlines():
        m = SERIES.match(line)
        if m:
            out.append((m.group(1), dict(LABEL.findall(m.group(2))), float(m.group(3))))
    return out


def summary(qptrace, cap):
    return json.loads(subprocess.run([qptrace, "summary", "--json", "-q", cap], check=True,
                                     capture_output=True, text=True).stdout)


def last_time(path):
    """The time of the last record of a little-endian microsecond pcap."""
    b = open(path, "rb").read()
    assert b[:4] == b"\xd4\xc3\xb2\xa1", path
    off, t = 24, None
    while off + 16 <= len(b):
        sec, usec, incl, _ = struct.unpack_from("<IIII", b, off)
        t = sec + usec / 1e6
        off += 16 + incl
    return t


def scrape(port, until, timeout=60):
    text = ""
    end = time.time() + timeout
    while time.time() < end:
        time.sleep(0.3)
        try:
            text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
        except OSError:
            continue
        if until(text):
            break
    return text


def main():
    qptrace, qpscen, root = sys.argv[1:4]
    tap.need_metrics(qptrace)
    tmp = tempfile.mkdtemp(prefix="qpt-series-")
    p = None
    try:
        d = os.path.join(tmp, "roce-mirror")
        os.mkdir(d)
        clean = os.path.join(tmp, "clean.pcap")
        subprocess.run([qpscen, "bench", "-o", clean, "--packets", "4000", "--qps", "200",
                        "--loss", "0", "--same-hosts"], check=True, capture_output=True)
        bad = os.path.join(tmp, "bad.pcap")
        subprocess.run([sys.executable, os.path.join(root, "tests", "wrap.py"), "erspan2",
                        os.path.join(root, "captures/made/nak_gbn.pcap"), bad], check=True)
        sc, sb = summary(qptrace, clean), summary(qptrace, bad)
        check(len(sc["conversations"]) == 200 and sc["totals"]["retransmitted_packets"] == 0
              and sb["totals"]["retransmitted_packets"] > 0,
              f"the inputs: 200 clean QP pairs ({len(sc['conversations'])}, "
              f"{sc['totals']['retransmitted_packets']} resent), a bad one "
              f"({sb['totals']['retransmitted_packets']} resent)")
        shutil.copy(clean, os.path.join(d, "a.pcap"))
        os.utime(os.path.join(d, "a.pcap"), (1000, 1000))
        port = tap.free_port()
        p = subprocess.Popen([qptrace, "monitor", "-r", d, "--follow", "--no-events",
                              "--interval", "0", "--idle", "0", "--duration", "90",
                              "--metrics", f"127.0.0.1:{port}",
                              "--metrics-max-conversations", "100"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        f1 = sc["totals"]["frames"]
        t1 = scrape(port, lambda t: f"qptrace_frames_total {f1}\n" in t)
        qp1 = {tuple(sorted((l["qpn_a"], l["qpn_b"], l["host_a"], l["host_b"])))
               for n, l, _ in parse(t1) if n == "qptrace_qp_packets_total"}
        check(f"qptrace_frames_total {f1}\n" in t1 and len(qp1) == 100,
              f"the clean file read: {len(qp1)} QP pairs with series of their own (100)")

        shutil.copy(bad, os.path.join(d, "b.pcap"))
        os.utime(os.path.join(d, "b.pcap"), (2000, 2000))
        f2 = f1 + sb["totals"]["frames"]
        text = scrape(port, lambda t: f"qptrace_frames_total {f2}\n" in t)
        check(f"qptrace_frames_total {f2}\n" in text, f"the bad file read ({f2} frames)")
        s = parse(text)
        link = "erspan 198.51.100.1 session 42"
        conv = sb["conversations"][0]
        ep = conv["endpoints"]
        qpns = {f"0x{e['qpn']:06x}" for e in ep}
        bad_rt = [(l, v) for n, l, v in s if n == "qptrace_qp_retransmitted_packets_total"
                  and {l["qpn_a"], l["qpn_b"]} == qpns]
        pairs = {(l["qpn_a"], l["qpn_b"], l["host_a"], l["host_b"])
                 for n, l, _ in s if n == "qptrace_qp_packets_total"}
        check(len(bad_rt) >= 1 and len(pairs) <= 100,
              f"the bad QP, arriving after 200 clean ones, has series of its own "
              f"({len(bad_rt)} directions; {len(pairs)} QP pairs with series, at most 100)")
        # per direction: what summary says each direction resent
        want = {}
        for x in conv["directions"]:
            src = ep[0]["addr"] if x["from"] in (0, ep[0]["addr"]) else ep[1]["addr"]
            want[src] = (x["retransmitted_packets"], x["packets"])
        got = {}
        for l, v in bad_rt:
            src = l["host_a"] if l["direction"] == "a_to_b" else l["host_b"]
            got[src] = int(v)
        check(all(got.get(k, 0) == w[0] for k, w in want.items()) and
              all(l["link"] == link for l, _ in bad_rt),
              f"its retransmissions by direction {got} = summary's "
              f"{ {k: w[0] for k, w in want.items()} }, on link '{link}'")
        # the link series: every packet, per link and direction
        lp = {}
        for n, l, v in s:
            if n == "qptrace_packets_total":
                src = l["host_a"] if l["direction"] == "a_to_b" else l["host_b"]
                lp[(l["link"], src)] = lp.get((l["link"], src), 0) + int(v)
        check(all(lp.get((link, k)) == w[1] for k, w in want.items()),
              f"link series packets by direction on '{link}': "
              f"{ {k: lp.get((link, k)) for k in want} } = summary's "
              f"{ {k: w[1] for k, w in want.items()} }")
        dlink = sum(v for (lk, _), v in lp.items() if lk == "roce-mirror")
        wclean = sum(x["packets"] for c in sc["conversations"] for x in c["directions"])
        check(dlink == wclean, f"link 'roce-mirror' (DIR, frames not wrapped): {dlink} packets "
                               f"= summary's {wclean}")
        for name in ("retransmitted_packets", "naks", "gbn_episodes", "psn_gaps"):
            metric = {"naks": "qptrace_naks_total", "psn_gaps": "qptrace_psn_gaps_total"}.get(
                name, f"qptrace_{name}_total")
            tot = sum(v for n, l, v in s if n == metric)
            w = sc["totals"][name] + sb["totals"][name]
            check(tot == w, f"sum({metric}) {tot:.0f} = summary's {name} over both files {w}")
        no_dir = [n for n, l, _ in s if n.startswith("qptrace_") and "host_a" in l
                  and ("direction" not in l or "link" not in l)]
        check(not no_dir, f"every host series has a direction and a link label ({no_dir[:3]})")
        ver = subprocess.run([qptrace, "--version"], capture_output=True, text=True).stdout.split()[1]
        check(f'qptrace_build_info{{version="{ver}"}} 1\n' in text,
              f"qptrace_build_info names version {ver}")
        ts = {l["link"]: v for n, l, v in s if n == "qptrace_last_packet_timestamp_seconds"}
        check(abs(ts.get(link, 0) - last_time(bad)) < 1e-5 and
              abs(ts.get("roce-mirror", 0) - last_time(clean)) < 1e-5,
              f"last-packet timestamps {ts} = the files' last records "
              f"({last_time(bad):.6f}, {last_time(clean):.6f})")
        check("process_resident_memory_bytes " in text and "process_cpu_seconds_total " in text,
              "process metrics")
        # the bound of docs/monitoring.md: link series x 56 + QP pairs x 2
        # directions x 10 + links x 18 + 40 fixed
        nlinks = len(ts)
        nls = len({tuple(sorted(l.items())) for n, l, _ in s if n == "qptrace_packets_total"})
        n = sum(1 for line in text.splitlines() if line and not line.startswith("#"))
        bound = nls * 56 + 100 * 2 * 10 + nlinks * 18 + 40
        check(n <= bound, f"{n} series, at most {bound} ({nls} link series, {nlinks} links)")
        if shutil.which("promtool"):
            pr = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                                text=True)
            check(pr.returncode == 0 and not pr.stdout.strip() and not pr.stderr.strip(),
                  f"promtool check metrics: {pr.stdout.strip() or 'clean'} {pr.stderr.strip()}")
        else:
            print("# promtool not installed (tools/setup-deps: prometheus): not checked")
        # PFC: a third file, pauses on priority 3; per priority as summary
        pfc = os.path.join(root, "captures/made/pfc_stall.pcap")
        sp = summary(qptrace, pfc)
        shutil.copy(pfc, os.path.join(d, "c.pcap"))
        os.utime(os.path.join(d, "c.pcap"), (3000, 3000))
        f3 = f2 + sp["totals"]["frames"]
        text = scrape(port, lambda t: f"qptrace_frames_total {f3}\n" in t)
        s = parse(text)
        got = {(n, l["priority"]): int(v) for n, l, v in s
               if n.startswith("qptrace_pfc_") and l["link"] == "roce-mirror" and v}
        want = {}
        for x in sp["pfc"]:
            want[("qptrace_pfc_pause_frames_total", str(x["priority"]))] = x["pause_frames"]
            want[("qptrace_pfc_xoff_frames_total", str(x["priority"]))] = x["xoff_frames"]
        check(got == want and want, f"PFC frames per priority {got} = summary's {want}")
        p.send_signal(signal.SIGINT)
        p.communicate(timeout=30)
        check(p.returncode == 130, f"Ctrl-C: exit status {p.returncode}")

        # --metrics-max-links 1: one link series, the rest in `other`, the
        # totals still exact
        port = tap.free_port()
        p = subprocess.Popen([qptrace, "monitor", "-r", d, "--follow", "--no-events",
                              "--interval", "0", "--idle", "0", "--duration", "60",
                              "--metrics", f"127.0.0.1:{port}", "--metrics-max-links", "1"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        s = parse(scrape(port, lambda t: f"qptrace_frames_total {f3}\n" in t))
        ls = [l for n, l, _ in s if n == "qptrace_packets_total"]
        tot = sum(v for n, _, v in s if n == "qptrace_packets_total")
        want = sum(x["packets"] for sm in (sc, sb, sp) for c in sm["conversations"]
                   for x in c["directions"])
        check(len(ls) == 2 and sum(1 for l in ls if l["link"] == "other") == 1 and tot == want,
              f"--metrics-max-links 1: {len(ls)} link series (one and 'other'), "
              f"{tot:.0f} packets in them = summary's {want}")
        p.send_signal(signal.SIGINT)
        p.communicate(timeout=30)
    finally:
        if p and p.poll() is None:
            p.kill()
            p.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
