#!/usr/bin/env python3
"""Verdicts decided at the end of the input reach every front end (issue 29).

    end_verdicts.py QPTRACE ROOT [ROCE_SO WS_MAJOR_MINOR]

captures/made/fill_end_many.pcap (qpscen fill_end_many): 20 RC QPs, each
ending with a PSN gap filler that no later request decides (a WRITE held
back before the tap, then sent as the QP's last request: no NAK, no
silence).  Its verdict, out of order, is decided at the end of the input
(qpt_flow_end), all 20 at once.  Each front end must give the same 20,
per QP the same kind on the same frame (the QP's last request):

  * `events --json` (one thread and -j 2);
  * `summary --json`: out_of_order 1 in each QP's a->b direction, no
    episode (the summary counts verdicts, it names no frame for them);
  * `grade`, a rubric of one `no_verdict verdict=out_of_order` check: it
    fails, naming those 20 frames;
  * `monitor -r DIR --json`: the event lines, at the end and when the
    monitor renews its engine (--max-conversations);
  * the Wireshark plugin, two passes (`tshark -2`): roce.analysis.out_of_order
    on those frames, in those conversations (roce.stream);
  * `packets`: captures/made/late_revision.pcap, a verdict decided 300
    frames after its frame (more than packets holds): on a line of its own;
  * and `packets --qp N` with the requester's QPN lists every frame of its
    QP, the first WRITE too (sent before the two halves were paired).

Before qpt_flow_end the plugin gave 8 (one drain of at most 8 events),
monitor -r none (at the end or at a renewal), grade had no way to show
them (and without the end's events its check passes: none).  Prints "N passed, N failed".
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import tap  # tests/tap.py
from tap import check

CAP = "captures/made/fill_end_many.pcap"
NQ = 20


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, timeout=300, **kw)


def jsonl(text):
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def tshark_plugin(so, wsver, cap, fields, tmp):
    """tshark -2 with the plugin in a private HOME (as root: as nobody,
    Wireshark ignores personal plugins as root); rows of fields."""
    home = os.path.join(tmp, "home")
    pdir = os.path.join(home, f".local/lib/wireshark/plugins/{wsver}/epan")
    os.makedirs(pdir)
    shutil.copy(so, os.path.join(pdir, "roce.so"))
    shutil.copy(cap, os.path.join(home, "c.pcap"))
    prefix = []
    if os.geteuid() == 0:
        prefix = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
        for d, dirs, files in os.walk(home):
            for x in [d] + [os.path.join(d, f) for f in dirs + files]:
                os.chown(x, 65534, 65534)
                os.chmod(x, 0o755 if os.path.isdir(x) else 0o644)
    os.chmod(tmp, 0o755)
    env = dict(os.environ, HOME=home)
    env.pop("WIRESHARK_PLUGIN_DIR", None)
    env.pop("WIRESHARK_CONFIG_DIR", None)
    args = ["tshark", "-2", "-r", "c.pcap", "-T", "fields", "-E", "separator=\t"]
    for f in fields:
        args += ["-e", f]
    p = run(prefix + args, cwd=home, env=env)
    rows = [line.split("\t") for line in p.stdout.splitlines()]
    return p.returncode, rows, p.stderr


def main():
    qptrace = os.path.abspath(sys.argv[1])
    root = sys.argv[2]
    so, wsver = (sys.argv[3], sys.argv[4]) if len(sys.argv) > 4 else (None, None)
    os.chdir(root)

    # the truth, from the capture: each QP's requester QPN, its frames, and
    # its last request (the filler)
    pk = jsonl(run([qptrace, "packets", "--json", CAP]).stdout)
    summ = json.loads(run([qptrace, "summary", "--json", CAP]).stdout)
    qp_of = {}  # conversation id -> requester QPN
    for c in summ["conversations"]:
        qp_of[c["id"]] = c["endpoints"][c["directions"][0]["from"]]["qpn"]
    frames_of = {}  # requester QPN -> its frames
    filler = {}     # requester QPN -> the frame of its last request
    for p in pk:
        qpn = qp_of.get(p.get("conv"))
        if qpn is None:
            continue
        frames_of.setdefault(qpn, []).append(p["frame"])
        if p["dir"] == 0:
            filler[qpn] = max(filler.get(qpn, 0), p["frame"])
    check(len(filler) == NQ and sorted(filler) == [0x100 + i for i in range(NQ)],
          f"the capture has {NQ} QPs (requester QPNs 0x100..0x113): {len(filler)}")
    want = {qpn: ("out_of_order", f) for qpn, f in filler.items()}

    def by_qp(events):
        """{requester QPN: (kind, frame)} of the out_of_order events, and
        how many there were (one per QP)."""
        got = {}
        n = 0
        for e in events:
            if e.get("kind") != "out_of_order":
                continue
            n += 1
            got[qp_of.get(e["conv"], ("conv", e["conv"]))] = (e["kind"], e["frame"])
        return n, got

    # events, one thread and two
    for extra in ([], ["-j", "2"]):
        r = run([qptrace, "events", "--json"] + extra + [CAP])
        n, got = by_qp(jsonl(r.stdout))
        check(r.returncode == 0 and n == NQ and got == want,
              f"events --json {' '.join(extra)}: {n} out_of_order, per QP as the capture "
              f"says: {got == want}")

    # summary: the counters, per QP
    per = {}
    for c in summ["conversations"]:
        d = c["directions"][0]
        per[qp_of[c["id"]]] = (d["out_of_order"], len(d["episodes"]))
    check(per == {q: (1, 0) for q in filler},
          f"summary --json: out_of_order 1 and no episode on each QP's a->b: "
          f"{sum(v[0] for v in per.values())} out_of_order over {len(per)} QPs")

    tmp = tempfile.mkdtemp(prefix="qpt-endv-")
    try:
        # grade: a rubric of one no_verdict check
        rub = os.path.join(tmp, "ooo.ini")
        with open(rub, "w") as f:
            f.write("[rubric]\nname=no out-of-order packets\n\n"
                    "[check in_order]\nkind=no_verdict\nverdict=out_of_order\n")
        r = run([qptrace, "grade", "--rubric", rub, "--json", CAP])
        try:
            chk = json.loads(r.stdout)["captures"][0]["checks"][0]
        except (ValueError, KeyError, IndexError):
            chk = {"result": None, "frames": [], "reason": (r.stdout + r.stderr)[:300]}
        check(chk["result"] == "fail" and sorted(chk["frames"]) == sorted(filler.values()) and
              chk["reason"].startswith(f"{NQ} frames judged out_of_order"),
              f"grade no_verdict out_of_order: {chk['result']}, {len(chk['frames'])} frames "
              f"named ({chk['reason'][:60]!r})")

        # monitor -r DIR
        d = os.path.join(tmp, "dir")
        os.mkdir(d)
        shutil.copy(CAP, os.path.join(d, "f.pcap"))
        r = run([qptrace, "monitor", "-r", d, "--json", "--interval", "0", "--idle", "0"])
        lines = jsonl(r.stdout)
        n, got = by_qp([x for x in lines if x.get("type") == "event"])
        check(r.returncode == 0 and n == NQ and got == want,
              f"monitor -r DIR: {n} out_of_order events, per QP as the capture says: "
              f"{got == want}")

        # monitor renewing its engine (--max-conversations): the old engine
        # ends when ipv6.pcap's first conversation comes after these 20
        d = os.path.join(tmp, "renew")
        os.mkdir(d)
        for i, src in enumerate((CAP, "captures/made/ipv6.pcap")):
            dst = os.path.join(d, f"{i}.pcap")
            shutil.copy(src, dst)
            os.utime(dst, (1704067200 + 60 * i, 1704067200 + 60 * i))  # read in this order
        r = run([qptrace, "monitor", "-r", d, "--json", "--interval", "0", "--idle", "0",
                 "--max-conversations", str(NQ)])
        lines = jsonl(r.stdout)
        n, got = by_qp([x for x in lines if x.get("type") == "event"])
        renewals = [x.get("engine_renewals") for x in lines if x.get("type") == "final_totals"]
        check(r.returncode == 0 and renewals == [1] and n == NQ and got == want,
              f"monitor -r DIR renewing its engine ({renewals} renewal): {n} out_of_order "
              f"events, per QP as the capture says: {got == want}")

        # the plugin, two passes
        if not so:
            print("# the plugin not given (not built, or a sanitizer build): not checked here")
        elif not shutil.which("tshark"):
            print("# tshark not installed: the plugin not checked")
        else:
            rc, rows, err = tshark_plugin(so, wsver, CAP, ["frame.number", "roce.stream",
                                                           "roce.analysis.out_of_order"], tmp)
            evs = [{"kind": "out_of_order", "frame": int(row[0]), "conv": int(row[1])}
                   for row in rows if len(row) == 3 and row[2] not in ("", "0")]
            n, got = by_qp(evs)
            check(rc == 0 and n == NQ and got == want,
                  f"the plugin, tshark -2: {n} frames with roce.analysis.out_of_order, "
                  f"per QP as the capture says: {got == want} {err[:200]}")

        # packets --qp: every frame of the QP, those before the pairing too
        bad = []
        for qpn, frames in sorted(frames_of.items()):
            r = run([qptrace, "packets", "--json", "--qp", str(qpn), CAP])
            shown = [p["frame"] for p in jsonl(r.stdout)]
            if shown != frames:
                bad.append(f"QP {qpn:#x}: {shown} != {frames}")
        check(not bad and len(frames_of) == NQ,
              f"packets --qp REQUESTER lists every frame of its QP: "
              f"{len(frames_of) - len(bad)} of {len(frames_of)} QPs ({'; '.join(bad[:2])})")
        late_revision(qptrace)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return tap.done()


def late_revision(qptrace):
    """captures/made/late_revision.pcap: a filler whose verdict (the first
    resend of a go-back-N, by its manifest: the simulated sender's truth)
    300 frames later decide, beyond the 256 frames `packets` holds:
    its line was printed without it, so a line "# frame N, decided at
    frame M: ... [Go-back-N]" gives it, and standard error counts it
    (in JSON, which has no such line, too)."""
    cap = "captures/made/late_revision.pcap"
    man = json.load(open(cap[:-5] + ".json"))
    dirs = [c[d] for c in man["conversations"] for d in ("a_to_b", "b_to_a")]
    want = sorted(f for d in dirs for f in d["frames"]["retransmissions"])
    episodes = sum(d["gbn_episodes"] for d in dirs)
    r = run([qptrace, "packets", cap])
    resent, gbn = set(), []
    for line in r.stdout.splitlines():
        w = line.split()
        n = (int(w[2].rstrip(",")) if w[:2] == ["#", "frame"] else
             int(w[0]) if w and w[0].isdigit() else None)
        if n is not None and "[Retransmission]" in line:
            resent.add(n)
        if n is not None and "[Go-back-N]" in line:
            gbn.append(n)
    check(r.returncode == 0 and sorted(resent) == want and len(gbn) == episodes == 1 and
          gbn[0] == want[0] and "# frame %d, decided at frame " % want[0] in r.stdout,
          f"packets: the resends {sorted(resent)} (truth {want}), the go-back-N on "
          f"{gbn} ({episodes} in truth, on the first resend), decided 300 frames after "
          f"its frame, on a line of its own")
    check("1 verdict was decided after its frame was printed" in r.stderr,
          f"packets: standard error counts the verdict decided late: {r.stderr.strip()[:200]}")
    # a selection: shown frames only (--addr: both QPs, frame 5 among
    # them; --qp of the other QP: frame 5 not shown, no line for it)
    r = run([qptrace, "packets", "--addr", "10.0.0.1", cap])
    check(r.returncode == 0 and "# frame %d, decided at frame " % want[0] in r.stdout,
          f"packets --addr (a selection showing frame {want[0]}): its line of the verdict")
    r = run([qptrace, "packets", "--qp", "0x43", cap])
    check(r.returncode == 0 and "# frame" not in r.stdout and "decided after" not in r.stderr
          and r.stdout.count("\n") > 256,
          f"packets --qp 0x43 (not frame {want[0]}'s QP): no line of its verdict")
    r = run([qptrace, "packets", "--json", cap])
    check(r.returncode == 0 and "1 verdict was decided after its frame was printed" in r.stderr
          and not any(line.startswith("#") for line in r.stdout.splitlines()),
          f"packets --json: no '#' line, standard error counts it: {r.stderr.strip()[:200]}")


if __name__ == "__main__":
    sys.exit(main())
