#!/usr/bin/env python3
"""monitor_words.py - qptrace monitor -r says what events and summary say
(issue 31: one formatter, one schema), no root needed.

For each capture (made and rxe: go-back-N, RNR, CNP/ECN, ECN without CNP,
bad ICRC, PFC, READ, CM), alone in a directory read by `monitor -r DIR`:
  * its event lines are `qptrace events`' lines, the time stamp aside (the
    monitor's is the wall clock, events' is relative), word for word;
  * its --json events are events --json's objects, key for key and value
    for value ("type": "event" added);
  * its final diagnosis is summary's ("final " before it), line for line,
    and its --json final_diagnosis findings are summary --json's findings;
  * with --follow --interval 1 the periodic diagnoses are summary's too;
  * its per-conversation JSON lines use summary's keys (id, transport,
    endpoints with addr and qpn, retransmitted_packets, time_lost_us)
    with summary's values.

    monitor_words.py QPTRACE ROOT
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import tap  # tests/tap.py
from tap import check

CAPS = ("captures/made/nak_gbn.pcap", "captures/made/rnr.pcap", "captures/made/cnp_ecn.pcap",
        "captures/made/ecn_no_cnp.pcap", "captures/made/bad_icrc.pcap",
        "captures/made/pfc_stall.pcap", "captures/made/cm_full.pcap",
        "captures/made/fill_end_many.pcap", "captures/rxe/write_bw_drop.pcap",
        "captures/rxe/read_bw_drop.pcap")


def run(args):
    return subprocess.run(args, capture_output=True, text=True, timeout=120).stdout


def diag_block(text, first):
    """The lines of the block starting with `first` up to the blank line."""
    lines = text.splitlines()
    for i, l in enumerate(lines):
        if l.startswith(first):
            out = [l[len(first) - len("diagnosis"):]]
            for m in lines[i + 1:]:
                if not m.strip():
                    break
                out.append(m)
            return out
    return None


def main():
    qptrace, root = sys.argv[1:3]
    tmp = tempfile.mkdtemp(prefix="qpt-words-")
    n_events = 0
    try:
        for rel in CAPS:
            cap = os.path.join(root, rel)
            name = os.path.basename(rel)
            d = os.path.join(tmp, name + ".d")
            os.mkdir(d)
            shutil.copy(cap, d)
            mon = run([qptrace, "monitor", "-r", d, "--interval", "0", "--idle", "0"])
            ev = run([qptrace, "events", cap])
            m_ev = [l.split(" ", 1)[1] for l in mon.splitlines() if " conv " in l
                    and l.split(" ", 2)[1] == "frame"]
            e_ev = [l.split(" ", 1)[1] for l in ev.splitlines()]
            diff = next((f"{a!r} / {b!r}" for a, b in zip(m_ev, e_ev) if a != b), "")
            n_events += len(e_ev)
            check(m_ev == e_ev, f"{name}: {len(m_ev)} event lines = events' {len(e_ev)} "
                                         f"(times aside) {diff}")
            summ = run([qptrace, "summary", cap])
            md, sd = diag_block(mon, "final diagnosis"), diag_block(summ, "diagnosis")
            check(md == sd and sd, f"{name}: the final diagnosis is summary's "
                                   f"({len(sd or [])} lines) {'' if md == sd else (md, sd)}")

            monj = [json.loads(l) for l in run([qptrace, "monitor", "-r", d, "--interval", "0",
                                                "--idle", "0", "--json"]).splitlines()]
            evj = [json.loads(l) for l in run([qptrace, "events", "--json", cap]).splitlines()]
            mj = [{k: v for k, v in x.items() if k not in ("type", "time", "schema")}
                  for x in monj if x.get("type") == "event"]
            ej = [{k: v for k, v in x.items() if k not in ("time", "schema")} for x in evj]
            check(mj == ej, f"{name}: {len(mj)} JSON events = events --json's {len(ej)}")
            sj = json.loads(run([qptrace, "summary", "--json", cap]))
            fd = [x for x in monj if x.get("type") == "final_diagnosis"]
            check(fd and fd[-1]["findings"] == sj["findings"],
                  f"{name}: final_diagnosis findings = summary --json's ({len(sj['findings'])})")
            convs = {c["id"]: c for c in sj["conversations"]}
            fin = [x for x in monj if x.get("type") == "final"]
            bad = []
            for x in fin:
                c = convs.get(x["id"])
                want = c and {"transport": c["transport"], "endpoints": c["endpoints"],
                              "retransmitted_packets": sum(y["retransmitted_packets"]
                                                           for y in c["directions"]),
                              "time_lost_us": round(sum(y["time_lost_us"] for y in c["directions"]), 3)}
                got = {k: (round(x[k], 3) if k == "time_lost_us" else x[k]) for k in
                       ("transport", "endpoints", "retransmitted_packets", "time_lost_us")}
                if got != want:
                    bad.append((got, want))
            check(fin and not bad, f"{name}: {len(fin)} final conversation lines in summary's keys "
                                   f"and values {bad[:1]}")
        check(n_events >= 50, f"{n_events} event lines compared")
        # every --interval: the same diagnosis (of the engine so far)
        d = os.path.join(tmp, "write_bw_drop.pcap.d")
        lines = [json.loads(l) for l in run([qptrace, "monitor", "-r", d, "--follow", "--json",
                                             "--no-events", "--interval", "1", "--idle", "0",
                                             "--duration", "2.5"]).splitlines()]
        sj = json.loads(run([qptrace, "summary", "--json",
                             os.path.join(root, "captures/rxe/write_bw_drop.pcap")]))
        per = [x for x in lines if x.get("type") == "diagnosis"]
        check(per and all(x["findings"] == sj["findings"] for x in per),
              f"--interval 1: {len(per)} periodic diagnoses, each summary's findings")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
