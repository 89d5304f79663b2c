#!/usr/bin/env python3
"""monitor_rules.py - the shipped Prometheus rules and Grafana dashboard
(monitoring/, issue 31).

  * promtool check rules monitoring/qptrace-rules.yml;
  * promtool test rules monitoring/qptrace-rules.test.yml (every alert
    fires on its trouble, none on a healthy link), and the unit tests can
    fail: with the retransmit ratio's threshold raised to 5 % they do;
  * every query of monitoring/qptrace-dashboard.json (panels and template
    variables) parses (promtool check rules on them as recording rules)
    and names only metrics that `qptrace monitor --metrics` exports (a
    scrape of a monitor reading made and rxe captures: go-back-N, PFC,
    ECN, READs) or that the rules file records; its label names are
    labels of those series.

    monitor_rules.py QPTRACE ROOT
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

import tap  # tests/tap.py
from tap import check

CAPS = ("captures/made/nak_gbn.pcap", "captures/made/pfc_stall.pcap",
        "captures/made/cnp_ecn.pcap", "captures/rxe/read_bw_drop.pcap")
# PromQL words a dashboard query may use besides metric names
PROMQL = {"sum", "max", "min", "avg", "count", "topk", "bottomk", "rate", "irate", "increase",
          "histogram_quantile", "time", "by", "without", "on", "ignoring", "and", "or",
          "unless", "label_values", "e6"}


def exported(qptrace, root, tmp):
    """The metric and label names of a real scrape of the monitor."""
    d = os.path.join(tmp, "caps")
    os.mkdir(d)
    frames = 0
    for i, rel in enumerate(CAPS):
        dst = os.path.join(d, f"f{i}.pcap")
        shutil.copy(os.path.join(root, rel), dst)
        os.utime(dst, (1000 + i, 1000 + i))
        s = json.loads(subprocess.run([qptrace, "summary", "--json", "-q", dst], check=True,
                                      capture_output=True, text=True).stdout)
        frames += s["totals"]["frames"]
    port = tap.free_port()
    p = subprocess.Popen([qptrace, "monitor", "-r", d, "--follow", "--no-events", "--interval", "0",
                          "--idle", "0", "--duration", "60", "--metrics", f"127.0.0.1:{port}"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    text = ""
    try:
        for _ in range(120):
            time.sleep(0.25)
            try:
                text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics",
                                              timeout=5).read().decode()
            except OSError:
                continue
            if f"qptrace_frames_total {frames}\n" in text:
                break
    finally:
        p.send_signal(signal.SIGINT)
        p.communicate(timeout=30)
    check(f"qptrace_frames_total {frames}\n" in text, f"a scrape of the monitor ({frames} frames)")
    names, labels = set(), {"instance", "job", "le"}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            names.add(line.split()[2])
        elif line and not line.startswith("#"):
            m = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? ", line)
            names.add(m.group(1))
            labels.update(re.findall(r'(\w+)="', m.group(3) or ""))
    return names, labels


def main():
    qptrace, root = sys.argv[1:3]
    mon = os.path.join(root, "monitoring")
    if not shutil.which("promtool"):
        tap.skip("promtool not installed (tools/setup-deps: prometheus)")
    tap.need_metrics(qptrace)
    tmp = tempfile.mkdtemp(prefix="qpt-rules-")
    try:
        rules = os.path.join(mon, "qptrace-rules.yml")
        r = subprocess.run(["promtool", "check", "rules", rules], capture_output=True, text=True)
        check(r.returncode == 0, f"promtool check rules: {(r.stdout + r.stderr).strip()}")
        r = subprocess.run(["promtool", "test", "rules", "qptrace-rules.test.yml"], cwd=mon,
                           capture_output=True, text=True)
        check(r.returncode == 0 and "SUCCESS" in r.stdout,
              f"promtool test rules: {(r.stdout + r.stderr).strip()[-400:]}")
        # the unit tests can fail: a rule that alerts too late
        shutil.copy(os.path.join(mon, "qptrace-rules.test.yml"), tmp)
        broken = open(rules).read().replace("link:qptrace_retransmit_ratio:rate5m > 0.01",
                                            "link:qptrace_retransmit_ratio:rate5m > 0.05")
        open(os.path.join(tmp, "qptrace-rules.yml"), "w").write(broken)
        r = subprocess.run(["promtool", "test", "rules", "qptrace-rules.test.yml"], cwd=tmp,
                           capture_output=True, text=True)
        check(r.returncode != 0 and "QptraceRetransmitRatioHigh" in r.stdout + r.stderr,
              "with the retransmit threshold at 5 % the unit tests fail")

        recorded = set(re.findall(r"^\s*- record: (\S+)", open(rules).read(), re.M))
        names, labels = exported(qptrace, root, tmp)
        dash = json.load(open(os.path.join(mon, "qptrace-dashboard.json")))
        exprs = [t["expr"] for p in dash["panels"] for t in p["targets"]]
        for v in dash["templating"]["list"]:
            if v["type"] == "query":
                exprs.append(re.sub(r"^label_values\((.*), *\w+\)$", r"\1", v["query"]["query"]))
        check(len(exprs) >= 20, f"the dashboard's queries: {len(exprs)}")
        # parse them all: as recording rules, promtool checks their syntax
        sub = [e.replace("$__rate_interval", "5m").replace("$instance", ".*").replace("$link", ".*")
               for e in exprs]
        qfile = os.path.join(tmp, "dash-queries.yml")
        with open(qfile, "w") as f:
            f.write("groups:\n  - name: dashboard\n    rules:\n")
            for i, e in enumerate(sub):
                f.write(f"      - record: dashboard:query{i}\n        expr: {json.dumps(e)}\n")
        r = subprocess.run(["promtool", "check", "rules", qfile], capture_output=True, text=True)
        check(r.returncode == 0, f"every dashboard query parses: {(r.stdout + r.stderr).strip()[-300:]}")
        unknown, bad_labels = set(), set()
        for e in sub:
            # label matchers and by/without lists: label names
            for m in re.finditer(r"\{([^}]*)\}", e):
                bad_labels.update(set(re.findall(r"(\w+)\s*=~?", m.group(1))) - labels)
            for m in re.finditer(r"\b(?:by|without)\s*\(([^)]*)\)", e):
                bad_labels.update({x.strip() for x in m.group(1).split(",")} - labels)
            bare = re.sub(r'"[^"]*"', "", e)
            bare = re.sub(r"\{[^}]*\}", "", bare)
            bare = re.sub(r"\b(?:by|without)\s*\([^)]*\)", "", bare)
            bare = re.sub(r"\[[^\]]*\]", "", bare)
            for tok in re.findall(r"[a-zA-Z_:][a-zA-Z0-9_:]*", bare):
                if tok not in PROMQL and tok not in names and tok not in recorded:
                    unknown.add(tok)
        check(not unknown, f"the dashboard names only exported metrics and recorded rules "
                           f"(unknown: {sorted(unknown)})")
        check(not bad_labels, f"its label names are the series' (unknown: {sorted(bad_labels)})")
        used = {t for e in sub for t in re.findall(r"[a-zA-Z_:][a-zA-Z0-9_:]*", e)}
        check(used & recorded and "qptrace_qp_recent_trouble" in used,
              f"it uses the recorded rules ({sorted(used & recorded)}) and the per-QP series")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
