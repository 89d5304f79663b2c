#!/usr/bin/env python3
"""`qptrace summary --json` on each public capture against what the capture's
description says was run (tests/flow/public_expect.json): conversation
count, transport, pairing, per-op message counts, sizes and packets per
message, and zero retransmissions / gaps / NAKs / duplicates.

usage: check_public.py QPTRACE CAPTURES_DIR
"""
import json
import os
import subprocess
import sys

ANOMALIES = ["retransmitted_packets", "psn_gaps", "duplicates", "out_of_order",
             "rnr_naks", "gbn_episodes"]


def check(qptrace, path, want):
    out = subprocess.run([qptrace, "summary", "--json", path], capture_output=True,
                         text=True, timeout=60)
    if out.returncode:
        return [f"exit {out.returncode}: {out.stderr.strip()}"]
    convs = json.loads(out.stdout)["conversations"]
    errs = []
    if len(convs) != len(want):
        errs.append(f"{len(convs)} conversations, expected {len(want)}")
    for i, (c, w) in enumerate(zip(convs, want)):
        if c["transport"] != w["transport"]:
            errs.append(f"conv {i}: transport {c['transport']} != {w['transport']}")
        if c["paired_by"] != w["paired_by"]:
            errs.append(f"conv {i}: paired_by {c['paired_by']} != {w['paired_by']}")
        for d, wd in enumerate(w["dirs"]):
            qd = c["directions"][d]
            if set(qd["messages"]) != set(wd):
                errs.append(f"conv {i} dir {d}: ops {sorted(qd['messages'])} != {sorted(wd)}")
            for op, (n, size, pkts) in wd.items():
                got = qd["messages"].get(op, 0)
                if got != n:
                    errs.append(f"conv {i} dir {d}: {op} messages {got} != {n}")
                sz = qd["message_sizes"].get(op)
                if sz and size is not None and (sz["min"], sz["max"]) != (size, size):
                    errs.append(f"conv {i} dir {d}: {op} sizes {sz['min']}..{sz['max']} != {size}")
                if sz and pkts is not None and sz["packets"] != n * pkts:
                    errs.append(f"conv {i} dir {d}: {op} packets {sz['packets']} != {n}x{pkts}")
            for k in ANOMALIES:
                if qd[k]:
                    errs.append(f"conv {i} dir {d}: {k} = {qd[k]}, expected 0")
            if any(qd["naks"].values()):
                errs.append(f"conv {i} dir {d}: NAKs {qd['naks']}")
    return errs


def main():
    qptrace, capdir = sys.argv[1], sys.argv[2]
    table = json.load(open(os.path.join(os.path.dirname(__file__), "public_expect.json")))
    passed = failed = 0
    for name, want in sorted(table.items()):
        if name.startswith("_"):
            continue
        errs = check(qptrace, os.path.join(capdir, name), want)
        if errs:
            failed += 1
            print(f"FAIL {name}")
            for e in errs:
                print("   ", e)
        else:
            passed += 1
            print(f"ok   {name}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
