#!/usr/bin/env python3
"""schemas.py - every JSON document qptrace writes against its schema.

    schemas.py QPTRACE ROOT

docs/schema/qptrace-{summary,events,packets,monitor}-1.json are JSON Schema
(draft 2020-12) files; each document names its own ("schema" member).  For
every capture of captures/made, captures/rxe (and lossy/), captures/public
and captures/hostile that qptrace reads, `summary --json`, `events --json`
and `packets --json` are validated, every document (JSON Lines: every
line), with python3-jsonschema (Debian's; tools/setup-deps installs it);
`monitor -r DIR --json` over a folder of captures too, every line.  A
document naming another schema than its command's, or none, fails; so
does a schema that is not valid JSON Schema.  The schemas are strict where
the issue 30 roll-up is (groups, findings: no unknown member, every kind
named) and name the members other front ends rely on elsewhere.
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

try:
    import jsonschema
except ImportError:
    print("Bail out! python3-jsonschema is missing (tools/setup-deps installs it)")
    sys.exit(1)

failures = []
n = 0


def check(ok, what):
    global n
    n += 1
    if not ok:
        print(f"not ok {n} - {what}")
        failures.append(what)


def validate(validator, name, doc, where):
    errs = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
    check(not errs, f"{where}: {errs[0].message if errs else ''} at "
          f"{'/'.join(str(p) for p in errs[0].path) if errs else ''}")
    check(isinstance(doc, dict) and doc.get("schema") == f"qptrace-{name}-1",
          f"{where}: names the schema {doc.get('schema') if isinstance(doc, dict) else doc!r}")


def main():
    qptrace, root = sys.argv[1:3]
    validators = {}
    for name in ("summary", "events", "packets", "monitor"):
        path = os.path.join(root, "docs/schema", f"qptrace-{name}-1.json")
        with open(path) as f:
            s = json.load(f)
        jsonschema.Draft202012Validator.check_schema(s)
        check(s.get("$id") == f"qptrace-{name}-1", f"{path}: $id")
        validators[name] = jsonschema.Draft202012Validator(s)
    caps = sorted(p for d in ("made", "rxe", "rxe/lossy", "public", "hostile")
                  for p in glob.glob(os.path.join(root, "captures", d, "*.pcap*")))
    docs = {"summary": 0, "events": 0, "packets": 0, "monitor": 0}
    for cap in caps:
        rel = os.path.relpath(cap, root)
        for name in ("summary", "events", "packets"):
            r = subprocess.run([qptrace, name, "--json", "-q", cap], capture_output=True,
                               text=True, timeout=300)
            if r.returncode == 2 and not r.stdout:
                continue  # not a capture qptrace reads (hostile): no JSON
            lines = [r.stdout] if name == "summary" else r.stdout.splitlines()
            for i, line in enumerate(lines):
                try:
                    doc = json.loads(line)
                except ValueError as e:
                    check(False, f"{name} {rel} line {i + 1}: not JSON: {e}")
                    continue
                validate(validators[name], name, doc, f"{name} {rel}" +
                         (f" line {i + 1}" if name != "summary" else ""))
                docs[name] += 1
    # monitor: a folder of captures read once, events and the final lines
    tmp = tempfile.mkdtemp(prefix="qpt-schemas-")
    try:
        for i, c in enumerate(("made/nak_gbn.pcap", "made/naks.pcap", "made/cnp_ecn.pcap",
                               "rxe/rc_pingpong_drop.pcap")):
            shutil.copy(os.path.join(root, "captures", c), os.path.join(tmp, f"r{i}.pcap"))
        r = subprocess.run([qptrace, "monitor", "-r", tmp, "--json", "--interval", "0.001",
                            "--idle", "0"], capture_output=True, text=True, timeout=120)
        check(r.returncode == 0, f"monitor -r: exit {r.returncode} {r.stderr[-200:]}")
        types = set()
        for i, line in enumerate(r.stdout.splitlines()):
            doc = json.loads(line)
            types.add(doc.get("type"))
            validate(validators["monitor"], "monitor", doc, f"monitor line {i + 1}")
            docs["monitor"] += 1
        check({"event", "final_totals"} <= types, f"monitor: the lines validated {sorted(types)}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for name, k in docs.items():
        check(k > 0, f"{name}: {k} documents validated")
    print(f"1..{n}")
    print(f"# {len(caps)} captures; documents validated: " +
          ", ".join(f"{k} {name}" for name, k in docs.items()))
    for f in failures[:50]:
        print(f"# FAILED {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
