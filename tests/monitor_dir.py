#!/usr/bin/env python3
"""monitor_dir.py - qptrace monitor -r DIR, no root needed.

  * a directory of made and rxe captures, read oldest first: the final
    totals equal the sums of `qptrace summary` over the files;
  * the monitor's memory is bounded: 200,000 distinct QPNs (tools/mkhostile.py
    --many-qpns) with --max-conversations 2000 renew the engine and peak
    under 64 MB (the engine alone keeps 65,536 halves: over 400 MB);
  * --metrics on 127.0.0.1: the text exposition format (promtool check
    metrics when installed), and the series summed equal the totals;
  * bad option values are refused with exit status 2;
  * rotations that reuse names, every frame written counted: a ring of 3
    files rewritten twice (tcpdump -C N -W 3) followed with --follow; one
    name truncated and written again (tcpdump -G without a time in the
    name), smaller and then larger than before; without --follow, a file
    rewritten while another is read (the monitor stopped with SIGSTOP
    while it reads the big one); each rewrite said on stderr;
  * Ctrl-C exits 130 after the final summary, SIGTERM 0.

    monitor_dir.py QPTRACE ROOT
"""
import json
import re
import os
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

CAPS = ("captures/made/nak_gbn.pcap", "captures/made/rnr.pcap", "captures/made/cnp_ecn.pcap",
        "captures/rxe/write_bw_drop.pcap", "captures/rxe/read_bw_drop.pcap")


def totals(qptrace, cap):
    d = json.loads(subprocess.run([qptrace, "summary", "--json", "-q", cap], check=True,
                                  capture_output=True, text=True).stdout)
    r = sum(x["retransmitted_packets"] for c in d["conversations"] for x in c["directions"])
    return d["totals"]["frames"], d["totals"]["iba_packets"], r


def pcap_records(path):
    """The header and records (sec, frac, data, orig) of a little-endian pcap."""
    b = open(path, "rb").read()
    assert b[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"), path
    recs, off = [], 24
    while off + 16 <= len(b):
        sec, frac, incl, orig = struct.unpack_from("<IIII", b, off)
        recs.append((sec, frac, b[off + 16:off + 16 + incl], orig))
        off += 16 + incl
    return b[:24], recs


def pcap_bytes(header, recs, n, t0):
    """n frames cycling through recs, their times moved to start at t0 (a
    new second for each pass: every file written has its own first record)."""
    out = [header]
    base = recs[0][0]
    for i in range(n):
        sec, frac, data, orig = recs[i % len(recs)]
        out.append(struct.pack("<IIII", t0 + (i // len(recs)) + sec - base, frac, len(data), orig))
        out.append(data)
    return b"".join(out)


def rewrite(path, data):
    """As tcpdump does: the same file (inode) truncated and written again."""
    with open(path, "wb") as f:
        f.write(data)


def final_frames(out):
    fin = [json.loads(l) for l in out.splitlines() if '"final_totals"' in l]
    return fin[-1]["frames"] if fin else None


def open_files(pid):
    try:
        return [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
    except OSError:
        return []


def rotations(qptrace, root, tmp):
    header, recs = pcap_records(os.path.join(root, "captures/made/nak_gbn.pcap"))
    n = len(recs)
    mon = [qptrace, "monitor", "--json", "--no-events", "--interval", "0", "--idle", "0"]

    # A ring of 3 (tcpdump -C 1 -W 3 -w r): r0 r1 r2, then r0 again...
    d = os.path.join(tmp, "ring")
    os.mkdir(d)
    p = subprocess.Popen(mon + ["-r", d, "--follow", "--duration", "60"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    written, t = 0, 1700000000
    for rnd in range(3):
        for i in range(3):
            k = n * (1 + (rnd + i) % 3)  # 40, 80 or 120 frames
            rewrite(os.path.join(d, f"r{i}"), pcap_bytes(header, recs, k, t))
            written += k
            t += 100
            time.sleep(0.4)
    time.sleep(1.0)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=30)
    said = err.count("read again from its start")
    check(final_frames(out) == written and said >= 6,
          f"--follow, a ring of 3 files rewritten twice: {final_frames(out)} frames counted, "
          f"{written} written; {said} lines say a file is read again (6 rewrites)")
    check(p.returncode == 130, f"--follow, Ctrl-C: exit status {p.returncode} (130)")

    # One name truncated and written again (tcpdump -G 60 -w x.pcap): 80
    # frames, then 40 (smaller than what was read), then 120 (larger).
    d = os.path.join(tmp, "gname")
    os.mkdir(d)
    p = subprocess.Popen(mon + ["-r", d, "--follow", "--duration", "60"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    written = 0
    for rnd, k in enumerate((2 * n, n, 3 * n)):
        rewrite(os.path.join(d, "x.pcap"), pcap_bytes(header, recs, k, t))
        written += k
        t += 100
        time.sleep(0.8)
    time.sleep(0.5)
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=30)
    said = err.count("read again from its start")
    check(final_frames(out) == written and said == 2,
          f"--follow, one name rewritten twice (-G): {final_frames(out)} frames counted, "
          f"{written} written; {said} lines say it is read again (2)")
    check(p.returncode == 0, f"--follow, SIGTERM: exit status {p.returncode} (0)")

    # Without --follow: r0 rewritten while the monitor reads the big r1.
    d = os.path.join(tmp, "plain")
    os.mkdir(d)
    big = 400000
    for i, k in enumerate((n, big, n)):
        rewrite(os.path.join(d, f"r{i}"), pcap_bytes(header, recs, k, t + 100000 * i))
        os.utime(os.path.join(d, f"r{i}"), (1000 + i, 1000 + i))
    written = 2 * n + big
    p = subprocess.Popen(mon + ["-r", d], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    r1 = os.path.join(d, "r1")
    end = time.monotonic() + 20
    caught = False
    while p.poll() is None and time.monotonic() < end:
        if r1 in open_files(p.pid):
            os.kill(p.pid, signal.SIGSTOP)
            caught = r1 in open_files(p.pid)
            if caught:
                rewrite(os.path.join(d, "r0"), pcap_bytes(header, recs, 2 * n, t + 900000))
                written += 2 * n
            os.kill(p.pid, signal.SIGCONT)
            if caught:
                break
        time.sleep(0.002)
    out, err = p.communicate(timeout=60)
    said = err.count("read again from its start")
    check(caught and final_frames(out) == written and said == 1 and p.returncode == 0,
          f"-r DIR, r0 rewritten while r1 is read: {final_frames(out)} frames counted, "
          f"{written} written; {said} line says r0 is read again; exit status {p.returncode}"
          f"{'' if caught else ' (the monitor was not caught reading r1)'}")


def main():
    qptrace, root = os.path.abspath(sys.argv[1]), sys.argv[2]
    tmp = tempfile.mkdtemp(prefix="qpt-mondir-")
    try:
        # each capture in a directory of its own (the files of one directory
        # are one stream: captures of the same QPs would look like resends)
        lines = []
        for i, rel in enumerate(CAPS):
            d = os.path.join(tmp, f"caps{i}")
            os.mkdir(d)
            shutil.copy(os.path.join(root, rel), os.path.join(d, "f.pcap"))
            want = totals(qptrace, os.path.join(root, rel))
            r = subprocess.run([qptrace, "monitor", "-r", d, "--json", "--interval", "0", "--idle", "0"],
                               capture_output=True, text=True, timeout=60)
            these = [json.loads(l) for l in r.stdout.splitlines()]
            lines += these
            fin = [l for l in these if l["type"] == "final_totals"]
            got = (fin[-1]["frames"], fin[-1]["iba_packets"], fin[-1]["retransmitted_packets"]) if fin else None
            check(r.returncode == 0 and got == tuple(want),
                  f"-r DIR with {rel}: frames, RoCE packets, retransmitted {got}, summary {tuple(want)}")
        ev = [l for l in lines if l["type"] == "event"]
        check(len(ev) > 0 and all("kind" in e and "conv" in e for e in ev),
              f"events streamed as JSON Lines: {len(ev)}")

        # Memory bound.
        q = os.path.join(tmp, "qpns")
        os.mkdir(q)
        subprocess.run([sys.executable, os.path.join(root, "tools/mkhostile.py"), "--many-qpns",
                        "200000", os.path.join(q, "many.pcap")], check=True, capture_output=True)
        c = tap.run_child([qptrace, "monitor", "-r", q, "--json", "--no-events", "--interval", "0",
                           "--max-conversations", "2000"], stderr=False)
        out = c.out.decode()
        peak = c.rss_kib  # this child's own peak
        fin = [json.loads(l) for l in out.splitlines() if '"final_totals"' in l]
        if tap.under_asan():
            # an instrumented binary's RSS (shadow memory, quarantine) says
            # nothing of the monitor's: the plain suite checks the bound
            tap.sanitized_note("the monitor's 64 MB peak RSS bound is not checked")
        check(fin and fin[-1]["frames"] == 200000 and fin[-1]["engine_renewals"] >= 90,
              f"200,000 QPNs with --max-conversations 2000: "
              f"{fin[-1]['engine_renewals'] if fin else None} engine renewals, "
              f"{fin[-1]['active_conversations'] if fin else None} listed")
        if not tap.under_asan():
            check(peak < 64 * 1024, f"200,000 QPNs with --max-conversations 2000: peak RSS "
                                    f"{peak / 1024:.1f} MB (at most 64)")

        # Metrics on the loopback: two captures of distinct QPs, one file
        # after the other (a rotation), one conversation with series of its
        # own (qptrace_qp_*), every packet in the link series.
        d = os.path.join(tmp, "two")
        os.mkdir(d)
        want = [0, 0, 0]
        for i, rel in enumerate(("captures/rxe/write_bw_drop.pcap", "captures/made/nak_gbn.pcap")):
            shutil.copy(os.path.join(root, rel), os.path.join(d, f"f{i}.pcap"))
            os.utime(os.path.join(d, f"f{i}.pcap"), (1000 + i, 1000 + i))
            want = [a + b for a, b in zip(want, totals(qptrace, os.path.join(root, rel)))]
        port = tap.free_port()
        p = subprocess.Popen([qptrace, "monitor", "-r", d, "--follow", "--no-events", "--interval", "0",
                              "--idle", "0", "--metrics", f"127.0.0.1:{port}", "--duration", "30",
                              "--metrics-max-conversations", "1"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        text = None
        for _ in range(60):
            time.sleep(0.25)
            try:
                text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2).read().decode()
                if "qptrace_frames_total %d" % want[0] in text:
                    break
            except OSError:
                pass
        try:
            code404 = urllib.request.urlopen(f"http://127.0.0.1:{port}/nope", timeout=2).status
        except urllib.error.HTTPError as e:
            code404 = e.code
        p.send_signal(2)
        out, _ = p.communicate(timeout=20)
        text = text or ""
        rt = sum(int(l.split()[-1]) for l in text.splitlines()
                 if l.startswith("qptrace_retransmitted_packets_total{"))
        qps = {l.split("{")[1].split("}")[0] for l in text.splitlines()
               if l.startswith("qptrace_qp_packets_total{")}
        qps = {re.sub(r',?direction="[^"]*"', "", q) for q in qps}
        check(rt == want[2] and len(qps) == 1,
              f"--metrics: retransmitted summed over the link series = {rt} (want {want[2]}): "
              f"{len(qps)} conversation with series of its own (1)")
        check(code404 == 404, f"--metrics: another path is 404 ({code404})")
        if shutil.which("promtool"):
            pr = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                                text=True)
            check(pr.returncode == 0, f"promtool check metrics: {pr.stdout.strip() or 'clean'} "
                                      f"{pr.stderr.strip()}")
        check("final totals" in out, "Ctrl-C: the final summary")
        check(p.returncode == 130, f"Ctrl-C: exit status {p.returncode} (130)")

        rotations(qptrace, root, tmp)

        # Refusals.
        for args, why in ((["monitor"], "no source"),
                          (["monitor", "-r", d, "-i", "lo"], "two sources"),
                          (["monitor", "-i", "lo", "--follow"], "--follow without -r"),
                          (["monitor", "-r", d, "--metrics", "nonsense"], "bad --metrics"),
                          (["monitor", "-r", d, "--max-conversations", "0"], "--max-conversations 0"),
                          (["monitor", "-r", os.path.join(tmp, "none")], "not a directory")):
            r = subprocess.run([qptrace, *args], capture_output=True, text=True, timeout=30)
            check(r.returncode == 2 and r.stderr.startswith("qptrace monitor"),
                  f"refused ({why}): {r.stderr.strip()}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"1..{tap.n}")
    return 1 if tap.failed else 0


if __name__ == "__main__":
    sys.exit(main())
