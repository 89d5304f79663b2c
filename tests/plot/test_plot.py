#!/usr/bin/env python3
"""qptrace plot: the SVG's marks against the engine's own counts.

    test_plot.py QPTRACE SOURCE_ROOT

For made captures, every series of the time-sequence graph (a <g> with
data-series/data-total) must hold as many marks as `qptrace summary --json`
and `qptrace events --json` count: retransmissions == retransmitted packets,
NAK marks == NAKs, and so on.  Go-back-N shading is checked per trigger
(nak, timeout, read_retry, resend): shaded rectangles of each class and the
legend's count for it against the episodes of `summary --json`, one colour
per class, on made and rxe captures.  Also checks the legend, the self-contained
SVG, the 24-bit PSN unwrap, --top file naming and order, a conversation
paired late (its packets in the direction the engine folds them into),
standard input, and that bad
input gives one line on stderr and exit status 2.  Python 3 standard
library only.  Prints "N passed, N failed".
"""
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import tap  # noqa: E402 (tests/tap.py)
from tap import check  # noqa: E402

tap.quiet = True  # only the failures, then "N passed, N failed"

SVG = "{http://www.w3.org/2000/svg}"
SERIES = ["requests", "responses", "duplicates", "retransmissions", "psn_gaps",
          "ecn_ce", "naks", "rnr_naks", "cnps"]


def run(qptrace, *args, stdin=None):
    return subprocess.run([qptrace, *args], stdin=stdin, capture_output=True,
                          text=True, timeout=120)


def series_counts(root):
    """{series: (marks drawn, data-total, data-drawn)} summed over panels."""
    out = {}
    for g in root.iter(SVG + "g"):
        name = g.get("data-series")
        if name is None or g.get("data-total") is None:
            continue
        n, total, drawn = out.get(name, (0, 0, 0))
        out[name] = (n + len(list(g)), total + int(g.get("data-total")),
                     drawn + int(g.get("data-drawn", len(list(g)))))
    return out


def engine_counts(qptrace, cap, conv):
    s = run(qptrace, "summary", "--json", "-q", cap)
    e = run(qptrace, "events", "--json", "-q", cap)
    assert s.returncode == 0 and e.returncode == 0, (s.stderr, e.stderr)
    c = [x for x in json.loads(s.stdout)["conversations"] if x["id"] == conv][0]
    d = c["directions"]
    ev = {}
    for line in e.stdout.splitlines():
        x = json.loads(line)
        if x["conv"] == conv:
            ev[x["kind"]] = ev.get(x["kind"], 0) + 1
    tot = lambda k: sum(x[k] for x in d)
    summ = {
        "retransmissions": tot("retransmitted_packets"),
        "naks": sum(sum(x["naks"].values()) for x in d),
        "rnr_naks": tot("rnr_naks"),
        "cnps": tot("cnps"),
        "ecn_ce": tot("ecn_ce"),
        "psn_gaps": tot("psn_gaps"),
        "duplicates": tot("duplicates"),
        "gbn_episodes": tot("gbn_episodes"),
        "request_packets": tot("request_packets"),
    }
    evc = {
        "retransmissions": ev.get("retransmission", 0),
        "naks": ev.get("nak", 0),
        "rnr_naks": ev.get("rnr_nak", 0),
        "cnps": ev.get("cnp", 0),
        "ecn_ce": ev.get("ecn_ce", 0),
        "psn_gaps": ev.get("psn_gap", 0),
        "duplicates": ev.get("duplicate", 0),
        "gbn_episodes": ev.get("gbn_episode", 0),
    }
    return summ, evc


# legend wording per trigger (docs/plot.md)
TRIGGER_WORDS = {"nak": "after NAK", "timeout": "after timeout",
                 "read_retry": "after READ retry", "resend": "NAK not captured"}


def json_triggers(qptrace, cap, conv, args=()):
    """Counter {trigger: episodes} of one conversation, from summary --json."""
    s = run(qptrace, "summary", "--json", "-q", *args, cap)
    assert s.returncode == 0, s.stderr
    c = [x for x in json.loads(s.stdout)["conversations"] if x["id"] == conv][0]
    return collections.Counter(e["trigger"] for d in c["directions"]
                               for e in d.get("episodes", []))


def check_triggers(qptrace, cap, tmp, name, want, args=()):
    """Shaded episodes and legend, per trigger class, against summary --json.

    want: triggers the capture must have (so the check is not vacuous);
    args: more options for both commands (a BPF filter)."""
    out = os.path.join(tmp, name + "-trig.svg")
    r = run(qptrace, "plot", "--conv", "0", "-o", out, "-q", *args, cap)
    check(r.returncode == 0, f"{name}: plot exit {r.returncode} {r.stderr!r}")
    if r.returncode:
        return
    check(self_contained(out), f"{name}: no script or external reference")
    root = ET.parse(out).getroot()
    js = json_triggers(qptrace, cap, 0, args)
    check(all(js[t] > 0 for t in want), f"{name}: summary has episodes {sorted(want)} ({dict(js)})")
    rects = [x for g in root.iter(SVG + "g") if g.get("data-series") == "gbn_episodes"
             and g.get("data-total") is not None for x in g]
    shaded = collections.Counter(x.get("class") for x in rects)
    check(shaded == js, f"{name}: shaded episodes per trigger {dict(shaded)} == summary {dict(js)}")
    fills = {}
    for x in rects:
        fills.setdefault(x.get("class"), set()).add(x.get("fill"))
    check(all(len(f) == 1 for f in fills.values())
          and len({next(iter(f)) for f in fills.values()}) == len(fills),
          f"{name}: one distinct colour per trigger class ({fills})")
    legend = [g for g in root.iter(SVG + "g") if g.get("id") == "legend"][0]
    entries = {}
    for g in legend.iter(SVG + "g"):
        if g.get("data-legend") != "gbn_episodes":
            continue
        text = "".join(g.find(SVG + "text").itertext())
        m = re.search(r"\(([\d,]+)\)$", text)
        entries[g.get("data-trigger")] = (text, int(m.group(1).replace(",", "")) if m else None)
        sw = g.find(SVG + "rect").get("fill")
        if g.get("data-trigger") in fills:
            check({sw} == fills[g.get("data-trigger")],
                  f"{name}: legend swatch of {g.get('data-trigger')} {sw} is its shading {fills[g.get('data-trigger')]}")
    if js:
        check(set(entries) == set(js), f"{name}: legend names the triggers present {sorted(entries)} == {sorted(js)}")
        for t, n in js.items():
            text, count = entries.get(t, ("", None))
            check(TRIGGER_WORDS[t] in text and count == n,
                  f"{name}: legend for {t}: {text!r} (want {TRIGGER_WORDS[t]!r}, {n})")
    else:
        check(list(entries) == ["none"] and entries["none"][1] == 0,
              f"{name}: no episodes, one grey legend entry ({entries})")


def self_contained(path):
    text = open(path, encoding="utf-8").read()
    return ("<script" not in text and "href=" not in text and "@import" not in text
            and "url(http" not in text)


def check_scenario(qptrace, cap, tmp, name, expect_nonzero):
    out = os.path.join(tmp, name + ".svg")
    r = run(qptrace, "plot", "--conv", "0", "-o", out, "-q", cap)
    check(r.returncode == 0 and r.stderr == "", f"{name}: plot exit {r.returncode} {r.stderr!r}")
    if r.returncode:
        return
    root = ET.parse(out).getroot()
    check(root.tag == SVG + "svg", f"{name}: root is <svg>")
    check(self_contained(out), f"{name}: no script or external reference")
    legend = [g for g in root.iter(SVG + "g") if g.get("id") == "legend"]
    check(len(legend) == 1, f"{name}: one legend")
    if legend:
        keys = {g.get("data-legend") for g in legend[0].iter(SVG + "g") if g.get("data-legend")}
        check(set(SERIES) | {"acked", "gbn_episodes"} <= keys,
              f"{name}: legend lists every series ({sorted(keys)})")
    got = series_counts(root)
    check(set(SERIES) | {"gbn_episodes", "acked"} <= set(got),
          f"{name}: every series group present ({sorted(got)})")
    summ, evc = engine_counts(qptrace, cap, 0)
    for k in ["retransmissions", "naks", "rnr_naks", "cnps", "ecn_ce", "psn_gaps",
              "duplicates", "gbn_episodes"]:
        n = got.get(k, (0, 0, 0))
        check(n[0] == summ[k] == evc[k],
              f"{name}: {k}: {n[0]} marks, summary {summ[k]}, events {evc[k]}")
        if k != "gbn_episodes":
            check(n[1] == n[0] and n[2] == n[0],
                  f"{name}: {k}: data-total {n[1]} data-drawn {n[2]} marks {n[0]}")
    if got.get("responses", (0,))[0] == 0:
        req = got["requests"][0] + got["retransmissions"][0] + got["duplicates"][0]
        check(req == summ["request_packets"],
              f"{name}: request ticks {req} == request_packets {summ['request_packets']}")
    check(got.get("acked", (0, 0))[1] > 0, f"{name}: ACKed PSN line has points")
    for k in expect_nonzero:
        check(got.get(k, (0,))[0] > 0, f"{name}: {k} is not empty")


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    qptrace, root = sys.argv[1], sys.argv[2]
    made = os.path.join(root, "captures", "made")
    with tempfile.TemporaryDirectory(prefix="qpt-plot-") as tmp:
        for name, nonzero in [("nak_gbn", ["retransmissions", "naks", "psn_gaps", "gbn_episodes"]),
                              ("timeout_resend", ["retransmissions", "gbn_episodes"]),
                              ("read_retry", ["retransmissions", "gbn_episodes"]),
                              ("rnr", ["retransmissions", "rnr_naks"]),
                              ("cnp_ecn", ["cnps", "ecn_ce"]),
                              ("dup_capture", ["duplicates"]),
                              ("psn_wrap", []),
                              ("naks", ["naks", "rnr_naks"])]:
            check_scenario(qptrace, os.path.join(made, name + ".pcap"), tmp, name, nonzero)

        # -c N: both reads of the input stop at the same frame, and the
        # plot shows the requests summary -c N counts
        cap = os.path.join(made, "lossless_ok.pcap")
        for n in (200, 40):
            r = run(qptrace, "plot", "-c", str(n), cap)
            s = run(qptrace, "summary", "--json", "-q", "-c", str(n), cap)
            ok = r.returncode == 0 and s.returncode == 0
            check(ok, f"plot -c {n}: exit {r.returncode} ({r.stderr.strip()})")
            if ok:
                got = series_counts(ET.fromstring(r.stdout)).get("requests", (0, 0, 0))[1]
                want = sum(d["request_packets"] for c in json.loads(s.stdout)["conversations"]
                           for d in c["directions"])
                check(got == want and got > 0,
                      f"plot -c {n}: {got} request packets drawn, summary -c {n} counts {want}")

        # timeout episode is shaded as such, NAK episode as such
        for name, cls in [("timeout_resend", "timeout"), ("nak_gbn", "nak")]:
            svg = ET.parse(os.path.join(tmp, name + ".svg")).getroot()
            rects = [r for g in svg.iter(SVG + "g") if g.get("data-series") == "gbn_episodes"
                     and g.get("data-total") is not None for r in g]
            check(rects and all(r.get("class") == cls for r in rects),
                  f"{name}: episode shaded as {cls}")

        # go-back-N shading and legend by trigger, against summary --json
        rxe = os.path.join(root, "captures", "rxe")
        for cap, name, want in [(os.path.join(made, "nak_gbn.pcap"), "nak_gbn", ["nak"]),
                                (os.path.join(made, "timeout_resend.pcap"), "timeout_resend", ["timeout"]),
                                (os.path.join(made, "read_retry.pcap"), "read_retry", ["read_retry"]),
                                (os.path.join(rxe, "read_bw_drop.pcap"), "rxe_read_bw_drop",
                                 ["timeout", "read_retry"]),
                                (os.path.join(rxe, "write_bw_drop.pcap"), "rxe_write_bw_drop", ["nak"]),
                                (os.path.join(made, "clean_send.pcap"), "clean_send", [])]:
            check_triggers(qptrace, cap, tmp, name, want)
        # Only the requester's side of nak_gbn: the NAK is not in what is
        # read, so the go-back-N episode is a resend.
        check_triggers(qptrace, os.path.join(made, "nak_gbn.pcap"), tmp, "nak_gbn_one_side",
                       ["resend"], ("-f", "src host 10.0.0.1"))

        # 24-bit wrap: PSN offsets stay small (0xFFFFF0 -> 0 is +16, not -16 M)
        svg = ET.parse(os.path.join(tmp, "psn_wrap.svg")).getroot()
        labels = [float(t.text) for g in svg.iter(SVG + "g") if g.get("class") == "axis-y"
                  for t in g.iter(SVG + "text") if t.text and t.text.lstrip("-").isdigit()]
        check(labels and min(labels) >= -5 and max(labels) <= 100,
              f"psn_wrap: y axis spans the unwrapped offsets ({labels})")

        # --top N: FILE-conv<ID>.svg for each, the most retransmissions first
        cap = os.path.join(made, "multi_qp.pcap")
        out = os.path.join(tmp, "mq.svg")
        r = run(qptrace, "plot", "--top", "3", "-o", out, "-q", cap)
        files = sorted(f for f in os.listdir(tmp) if f.startswith("mq-conv"))
        check(r.returncode == 0 and len(files) == 3 and all(f.endswith(".svg") for f in files),
              f"--top 3 writes three mq-conv<ID>.svg ({files}, {r.stderr!r})")
        ids = []
        for f in files:
            svg = ET.parse(os.path.join(tmp, f)).getroot()
            ids.append(svg.get("data-conv"))
            check(f == f"mq-conv{svg.get('data-conv')}.svg", f"{f}: named after its conversation")
        summ = json.loads(run(qptrace, "summary", "--json", "-q", cap).stdout)
        check(len(set(ids)) == 3 and all(int(i) in [c["id"] for c in summ["conversations"]] for i in ids),
              "--top: three distinct existing conversations")

        # --top N: the N worst conversations, in the order of qpt_conv_cmp_worst
        # (retransmitted packets + PSN gaps + RNR NAKs + duplicates + NAKs of
        # both directions, most first, then by id), as summary ranks them
        for capname, n in [("naks", 3), ("multi_qp", 4)]:
            cap2 = os.path.join(made, capname + ".pcap")
            r = run(qptrace, "plot", "--top", str(n), "-o", os.path.join(tmp, "w.svg"), cap2)
            got = [int(x) for x in re.findall(r"conversation (\d+) \(", r.stderr)]
            summ = json.loads(run(qptrace, "summary", "--json", "-q", cap2).stdout)
            trouble = lambda c: sum(d["retransmitted_packets"] + d["psn_gaps"] + d["rnr_naks"]
                                    + d["duplicates"] + sum(d["naks"].values())
                                    for d in c["directions"])
            want = [c["id"] for c in sorted(summ["conversations"],
                                            key=lambda c: (-trouble(c), c["id"]))][:n]
            check(r.returncode == 0 and got == want,
                  f"--top {n} on {capname}: plotted {got}, worst first {want}")

        # late pairing: a one-way conversation of ACKs (id 1) folded into
        # conversation 0 when an ACK answers its requests.  Its packets go to
        # the direction the engine folds them into (b->a): their ACKs are on
        # the a->b requests' panel, the only one (the ACKed line rises once,
        # at the first ACK; taken in the direction it had in conversation 1,
        # that ACK would make a b->a panel of its own).
        sys.path.insert(0, os.path.join(root, "tools"))
        import mkhostile as mk
        late = os.path.join(tmp, "late.pcap")
        mk.write_pcap(late, 1, [mk.send(1, 2, 0x12, 100), mk.ack(2, 1, 0x11, 200),
                                mk.ack(2, 1, 0x11, 100, msn=1), mk.send(1, 2, 0x12, 101),
                                mk.ack(2, 1, 0x11, 101, msn=2)])
        summ = json.loads(run(qptrace, "summary", "--json", "-q", late).stdout)
        check([c["id"] for c in summ["conversations"]] == [0],
              f"late pairing: one conversation, id 0 ({[c['id'] for c in summ['conversations']]})")
        r = run(qptrace, "plot", "--conv", "0", "-o", "-", late)
        svg = ET.fromstring(r.stdout.encode()) if r.returncode == 0 else None
        if svg is not None:
            panels = [g.get("data-dir") for g in svg.iter(SVG + "g") if g.get("class") == "panel"]
            acked = [int(g.get("data-total")) for g in svg.iter(SVG + "g")
                     if g.get("data-series") == "acked"]
            check(panels == ["0"] and acked == [1],
                  f"late pairing: one panel a->b with the ACKed line ({panels}, acked {acked})")
        else:
            check(False, f"late pairing: plot exit {r.returncode} {r.stderr!r}")

        # standard input gives the same graph (the subtitle names "-")
        with open(os.path.join(made, "nak_gbn.pcap"), "rb") as f:
            r = run(qptrace, "plot", "--conv", "0", "-o", "-", "-", stdin=f)
        a = ET.fromstring(r.stdout.encode()) if r.returncode == 0 else None
        check(a is not None and series_counts(a) ==
              series_counts(ET.parse(os.path.join(tmp, "nak_gbn.svg")).getroot()),
              f"stdin: same series as the file ({r.returncode}, {r.stderr!r})")

        # bad input: one line on stderr, exit 2, no output file
        nak = os.path.join(made, "nak_gbn.pcap")
        bad = [("bad --conv", ["--conv", "42", "-o", os.path.join(tmp, "x.svg"), nak]),
               ("missing file", ["--conv", "0", "-o", os.path.join(tmp, "x.svg"),
                                 os.path.join(tmp, "nope.pcap")]),
               ("not a capture", ["--conv", "0", "-o", os.path.join(tmp, "x.svg"),
                                  os.path.join(root, "tests", "plot", "test_plot.py")]),
               ("--top without -o", ["--top", "2", cap]),
               ("--top and --conv", ["--top", "2", "--conv", "1", "-o", out, cap]),
               ("several conversations, no --conv", ["-o", os.path.join(tmp, "x.svg"), cap]),
               ("unwritable output", ["--conv", "0", "-o", os.path.join(tmp, "no", "dir.svg"), nak])]
        for what, args in bad:
            r = run(qptrace, "plot", *args)
            lines = r.stderr.strip().splitlines()
            check(r.returncode == 2 and len(lines) == 1,
                  f"{what}: exit {r.returncode} (want 2), stderr {r.stderr!r}")
        check(not os.path.exists(os.path.join(tmp, "x.svg")), "bad input writes no file")

    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
