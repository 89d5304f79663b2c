#!/usr/bin/env python3
"""Check qptrace against captures made by the Linux rxe driver.

For every NAME.pcap with a NAME.json manifest (written by tools/capture) in
the given directories (default: captures/rxe of this repository):

  * `qptrace summary --json` finds the conversation between the two hosts
    with the expected transport, pairing (CM when RDMA CM was used) and the
    QPNs the tools printed, with the starting PSNs they printed;
  * per direction, the message counts and sizes per operation match what
    the tool was asked to do (count, min = max = size);
  * unimpaired runs have no PSN gaps, NAKs or go-back-N episodes; the only
    retransmissions allowed are timer-driven ones, and every retransmission
    the summary counts must be a real one: `qptrace events --json` gives an
    original_frame that `qptrace packets --json` shows carrying the same PSN,
    opcode and destination QP from the same sender, earlier in the file;
  * impaired runs (packets dropped after the capture point) do show
    retransmissions, all of them real in the same sense.

Prints one line per capture and `N passed, N failed`; exit status 1 when any
failed, 77 when there is nothing to check or no qptrace binary.
"""
import argparse
import glob
import json
import os
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLIENT, SERVER = "10.0.0.2", "10.0.0.1"
ATOMICS = {"CMP_SWAP", "FETCH_ADD"}
READ_REQUEST = 12  # RC RDMA READ Request


def find_qptrace(given):
    cands = [given, os.environ.get("QPTRACE")] + [
        os.path.join(TOP, d, "analyzer", "qptrace") for d in ("build", "builddir", "build-t")]
    for c in cands:
        if c and os.access(c, os.X_OK):
            return c
    return None


def run_json(qptrace, cmd, pcap, lines=False):
    out = subprocess.run([qptrace, cmd, "--json", pcap], capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        raise RuntimeError(f"qptrace {cmd} exit {out.returncode}: {out.stderr.strip()[:300]}")
    if lines:
        return [json.loads(l) for l in out.stdout.splitlines() if l.strip()]
    return json.loads(out.stdout)


def qpgen_expect(qp):
    """expectation from a qpgen manifest: sender -> op -> [count, size]"""
    exp = {}
    sizes = {}
    for op in qp.get("ops", []):
        name = op["op"]
        name = {"RNR_SEND": "SEND", "BAD_RKEY_WRITE": "WRITE", "BAD_RKEY_READ": "READ"}.get(name, name)
        d = exp.setdefault(op["from"], {})
        d.setdefault(name, [0, None])
        d[name][0] += 1
        sizes.setdefault((op["from"], name), set()).add(op["size"])
    for (who, name), s in sizes.items():
        exp[who][name][1] = s.pop() if len(s) == 1 else sorted(s)
    return exp


def check(qptrace, pcap, man):
    errs, notes = [], []
    exp = man.get("expect", {})
    impaired = bool(man.get("impairment"))
    summ = run_json(qptrace, "summary", pcap)
    convs = [c for c in summ.get("conversations", [])
             if {e.get("addr") for e in c.get("endpoints", [])} == {CLIENT, SERVER}]
    want_tr = exp.get("transport", "RC")
    convs_tr = [c for c in convs if c.get("transport") == want_tr]
    want_n = exp.get("conversations", 1)
    if want_tr == "UC" and len(convs_tr) == 2 and all(c.get("paired_by") == "none" for c in convs_tr):
        # UC has no ACKs: each direction may stay an unpaired conversation
        sel = convs_tr
        notes.append("UC directions unpaired")
    elif len(convs_tr) == want_n == 1:
        sel = convs_tr
    elif len(convs_tr) == want_n:
        # e.g. perftest --rdma_cm: a control QP (parameter exchange) plus the
        # data QP; check the one that carries the expected operations
        def score(c):
            return sum(sum(v for k, v in d.get("messages", {}).items()
                           if any(k in (exp.get(w) or {}) for w in ("client", "server")))
                       for d in c.get("directions", []))
        sel = [max(convs_tr, key=score)]
        notes.append(f"{want_n} conversations, data QP {sel[0]['id']}")
    else:
        errs.append(f"expected {want_n} {want_tr} conversation(s) between {CLIENT} and {SERVER}, found "
                    f"{[(c.get('transport'), c.get('paired_by')) for c in convs]}")
        return errs, notes
    conv = sel[0]
    if exp.get("paired_by") and conv.get("paired_by") != exp["paired_by"]:
        errs.append(f"paired_by {conv.get('paired_by')}, expected {exp['paired_by']}")
    ep = {}
    for c in sel:
        for e in c["endpoints"]:
            if e.get("qpn") is not None:
                ep[e["addr"]] = e
    # QPN pairing and starting PSNs as printed by the tools / qpgen
    qps = {}
    for who, addr in (("client", CLIENT), ("server", SERVER)):
        qp = (man.get(who) or {}).get("qp", {}).get("local")
        if qp:
            qps[addr] = qp
    if "qpgen" in man:
        for who, addr in (("client", CLIENT), ("server", SERVER)):
            e = man["qpgen"]["endpoints"][who]
            qps[addr] = {"qpn": e["qpn"], "psn": e["starting_psn"]}
    for addr, qp in qps.items():
        if addr in ep and ep[addr].get("qpn") != qp["qpn"]:
            errs.append(f"{addr} QPN {ep[addr].get('qpn')} in capture, tool says {qp['qpn']}")
    dirs = {}
    for c in sel:
        for d in c.get("directions", []):
            if d.get("packets"):
                dirs[c["endpoints"][d["from"]]["addr"]] = d
    if want_tr in ("RC", "UC") and exp.get("psn_from_tool", True):
        for addr, qp in qps.items():
            d = dirs.get(addr)
            if d and d.get("request_packets", d.get("packets", 0)) and d.get("first_psn") is not None \
                    and d["first_psn"] != qp["psn"] and d.get("request_packets", 0) > 0:
                errs.append(f"{addr} first request PSN {d['first_psn']}, tool's starting PSN {qp['psn']}")
        cm = conv.get("cm")
        if cm and cm.get("starting_psn") and qps:
            got = set(cm["starting_psn"])
            want = {qp["psn"] for qp in qps.values()}
            if not want <= got:
                errs.append(f"CM starting PSNs {sorted(got)}, tool's {sorted(want)}")

    # per-op message counts and sizes
    exp_ops = exp if "qpgen" not in man else qpgen_expect(man["qpgen"])
    for who, addr in (("client", CLIENT), ("server", SERVER)):
        want = exp_ops.get(who)
        if want is None:
            continue
        d = dirs.get(addr, {})
        msgs = {k: v for k, v in d.get("messages", {}).items() if v}
        for op, (count, size) in want.items():
            if msgs.get(op, 0) != count:
                errs.append(f"{who} {op} messages {msgs.get(op, 0)}, expected {count}")
                continue
            ms = d.get("message_sizes", {}).get(op, {})
            if op in ATOMICS or size is None:
                continue
            sizes = size if isinstance(size, list) else [size]
            if ms.get("min") != min(sizes) or ms.get("max") != max(sizes):
                errs.append(f"{who} {op} sizes {ms.get('min')}..{ms.get('max')}, expected {size}")
        extra = set(msgs) - set(want)
        if extra:
            errs.append(f"{who} unexpected operations {sorted(extra)}")
        notes.append(f"{who} " + ",".join(f"{op}={msgs.get(op, 0)}" for op in sorted(want)))

    # qpgen's deliberate errors must show on the wire
    if "qpgen" in man:
        for op in man["qpgen"].get("ops", []):
            responder = SERVER if op["from"] == "client" else CLIENT
            d = dirs.get(responder, {})
            if op["op"] == "RNR_SEND" and not d.get("rnr_naks"):
                errs.append(f"RNR_SEND posted but no RNR NAK from {responder}")
            if op["status"] == "remote access error" and not (d.get("naks") or {}).get("REMOTE_ACCESS"):
                errs.append(f"{op['op']} failed with remote access error but no NAK REMOTE_ACCESS from {responder}")
            if op["op"] == "RNR_SEND" and d.get("rnr_naks"):
                notes.append(f"{d['rnr_naks']} RNR NAKs")
            if op["status"] == "remote access error" and (d.get("naks") or {}).get("REMOTE_ACCESS"):
                notes.append("NAK REMOTE_ACCESS")

    # retransmissions: every one must be real
    retx = sum(d.get("retransmitted_packets", 0) for d in dirs.values())
    if retx or impaired:
        evs = run_json(qptrace, "events", pcap, lines=True)
        pk = {p["frame"]: p for p in run_json(qptrace, "packets", pcap, lines=True) if "frame" in p}
        ids = {c["id"] for c in sel}
        rev = [e for e in evs if e.get("kind") == "retransmission" and e.get("conv") in ids]
        bad = 0
        mtu = int(man.get("path_mtu") or (man.get("qpgen") or {}).get("path_mtu") or 1024)
        for e in rev:
            o, r = pk.get(e.get("original_frame")), pk.get(e["frame"])
            ok = (o is not None and r is not None and e["original_frame"] < e["frame"]
                  and o.get("src") == r.get("src")
                  and o.get("bth", {}).get("dqpn") == r.get("bth", {}).get("dqpn")
                  and r.get("bth", {}).get("psn") == e.get("psn"))
            if ok:
                ob, rb = o["bth"], r["bth"]
                if ob.get("opcode") == rb.get("opcode") == READ_REQUEST:
                    # a READ retry asks again from the first missing response
                    # PSN, which lies in the range of the original request
                    span = max(1, -(-int((o.get("reth") or {}).get("dmalen", 0)) // mtu))
                    ok = (rb["psn"] - ob["psn"]) % (1 << 24) < span
                else:
                    ok = ob.get("psn") == rb.get("psn") and ob.get("opcode") == rb.get("opcode")
            if not ok:
                bad += 1
        if bad:
            errs.append(f"{bad} of {len(rev)} retransmission events are not repeats of an earlier frame")
        if len(rev) != retx:
            errs.append(f"summary counts {retx} retransmitted packets, events list {len(rev)}")
        if impaired and retx == 0:
            errs.append("impaired run shows no retransmission")
        notes.append(f"{retx} retransmissions verified" + ("" if impaired else " (timer-driven)"))
    if not impaired:
        for addr, d in dirs.items():
            naks = sum((d.get("naks") or {}).values())
            expected_naks = (d.get("naks") or {}).get("REMOTE_ACCESS", 0) if "qpgen" in man else 0
            if d.get("psn_gaps") or d.get("missing_psns") or naks - expected_naks:
                errs.append(f"{addr}: psn_gaps {d.get('psn_gaps')} missing {d.get('missing_psns')} "
                            f"naks {d.get('naks')} in an unimpaired run")
    return errs, notes


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("paths", nargs="*", help="directories or .pcap files (default captures/rxe)")
    ap.add_argument("--qptrace", help="qptrace binary (default: $QPTRACE or build/analyzer/qptrace)")
    a = ap.parse_args()
    qptrace = find_qptrace(a.qptrace)
    if not qptrace:
        print("validate: no qptrace binary found (build it or pass --qptrace)")
        return 77
    pcaps = []
    for p in a.paths or [os.path.join(TOP, "captures", "rxe")]:
        pcaps += sorted(glob.glob(os.path.join(p, "*.pcap"))) if os.path.isdir(p) else [p]
    passed = failed = 0
    for pcap in pcaps:
        mpath = pcap[:-5] + ".json"
        name = os.path.basename(pcap)[:-5]
        if not os.path.exists(mpath):
            print(f"FAIL {name}: no manifest {os.path.basename(mpath)}")
            failed += 1
            continue
        try:
            errs, notes = check(qptrace, pcap, json.load(open(mpath)))
        except Exception as e:  # noqa: BLE001 - report and go on
            errs, notes = [f"{type(e).__name__}: {e}"], []
        if errs:
            failed += 1
            print(f"FAIL {name}: " + "; ".join(errs))
        else:
            passed += 1
            print(f"ok   {name}: " + "; ".join(notes))
    if not pcaps:
        print("validate: no captures found")
        return 77
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
