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
# the two hosts' addresses: the VM's, or (tools/capture --host) the ones the
# manifest names; check() sets them per capture
VM_CLIENT, VM_SERVER = "10.0.0.2", "10.0.0.1"
CLIENT, SERVER = VM_CLIENT, VM_SERVER
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


def qpgen_qps(qp):
    """per-QP records of a qpgen manifest (older ones: one RC pair in "endpoints")"""
    if qp.get("qps"):
        return qp["qps"]
    e = qp["endpoints"]
    return [{"qp": 0, "transport": qp.get("transport", "RC"), "client": e["client"], "server": e["server"]}]


def qpgen_units(man, convs, errs, notes):
    """one unit per qpgen QP pair: the conversation(s) carrying it, found by
    the QPNs qpgen reports; transports and pairing checked here"""
    qp = man["qpgen"]
    exp = man.get("expect", {})
    units = []
    used = set()
    for rec in qpgen_qps(qp):
        i, tr = rec.get("qp", 0), rec.get("transport", "RC")
        cq, sq = rec["client"]["qpn"], rec["server"]["qpn"]
        label = f"qp{i}" if len(qpgen_qps(qp)) > 1 else ""

        def qpn_at(c, addr):
            return next((e.get("qpn") for e in c["endpoints"] if e.get("addr") == addr), "absent")
        if tr == "UC":
            # no ACKs: each direction is its own one-way flow, named by the
            # receiving QP (the sender's QPN is not on the wire)
            sel = [c for c in convs if c.get("transport") == "UC" and
                   ((qpn_at(c, SERVER) == sq and qpn_at(c, CLIENT) is None and
                     c["endpoints"][0]["addr"] == CLIENT) or
                    (qpn_at(c, CLIENT) == cq and qpn_at(c, SERVER) is None and
                     c["endpoints"][0]["addr"] == SERVER))]
            senders = {o["from"] for o in qp.get("ops", []) if o.get("qp", 0) == i}
            if len(sel) != len(senders):
                errs.append(f"{label or 'UC'}: {len(sel)} one-way UC conversations for QPNs {cq}/{sq}, "
                            f"expected {len(senders)}")
        else:
            sel = [c for c in convs if qpn_at(c, CLIENT) == cq and qpn_at(c, SERVER) == sq]
            if len(sel) != 1:
                errs.append(f"{label or tr}: {len(sel)} conversations with QPNs client {cq} server {sq}, "
                            f"found {[(c['id'], c.get('transport'), [e.get('qpn') for e in c['endpoints']]) for c in convs]}")
        for c in sel:
            used.add(c["id"])
            if c.get("transport") != tr:
                errs.append(f"{label} conversation {c['id']} transport {c.get('transport')}, qpgen used {tr}")
            want_pair = exp.get("paired_by") or {"RC": "cm", "UC": "none", "UD": "traffic"}[tr]
            if c.get("paired_by") != want_pair:
                errs.append(f"{label} conversation {c['id']} paired_by {c.get('paired_by')}, expected {want_pair}")
        dirs = {}
        for c in sel:
            for d in c.get("directions", []):
                if d.get("packets"):
                    dirs[c["endpoints"][d["from"]]["addr"]] = d
        ops = [o for o in qp.get("ops", []) if o.get("qp", 0) == i]
        units.append({"label": label, "transport": tr, "sel": sel, "dirs": dirs,
                      "qps": {CLIENT: {"qpn": cq, "psn": rec["client"]["starting_psn"]},
                              SERVER: {"qpn": sq, "psn": rec["server"]["starting_psn"]}},
                      "exp_ops": qpgen_expect({"ops": ops}), "ops": ops})
    extra = [c for c in convs if c["id"] not in used]
    if extra:
        errs.append(f"conversations not made by qpgen's QPs: {[(c['id'], c.get('transport')) for c in extra]}")
    if len(units) > 1:
        notes.append(f"{len(units)} QP pairs {units[0]['transport']}")
    return units


def tool_unit(man, convs, errs, notes):
    exp = man.get("expect", {})
    qps = {}
    for who, addr in (("client", CLIENT), ("server", SERVER)):
        qp = (man.get(who) or {}).get("qp", {}).get("local")
        if qp:
            qps[addr] = qp
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
        # data QP; check the one with the QPNs the tool printed, else the one
        # that carries the most of the expected operations
        def score(c):
            qpn_ok = all(any(e.get("addr") == a and e.get("qpn") == q["qpn"] for e in c["endpoints"])
                         for a, q in qps.items()) if qps else False
            return (qpn_ok, sum(sum(v for k, v in d.get("messages", {}).items()
                                    if any(k in (exp.get(w) or {}) for w in ("client", "server")))
                                for d in c.get("directions", [])))
        sel = [max(convs_tr, key=score)]
        notes.append(f"{want_n} conversations, data QP {sel[0]['id']}")
    else:
        errs.append(f"expected {want_n} {want_tr} conversation(s) between {CLIENT} and {SERVER}, found "
                    f"{[(c.get('transport'), c.get('paired_by')) for c in convs]}")
        return []
    conv = sel[0]
    if exp.get("paired_by") and conv.get("paired_by") != exp["paired_by"]:
        errs.append(f"paired_by {conv.get('paired_by')}, expected {exp['paired_by']}")
    dirs = {}
    for c in sel:
        for d in c.get("directions", []):
            if d.get("packets"):
                dirs[c["endpoints"][d["from"]]["addr"]] = d
    return [{"label": "", "transport": want_tr, "sel": sel, "dirs": dirs, "qps": qps,
             "exp_ops": exp, "ops": []}]


def check_unit(u, man, pk, errs, notes):
    exp = man.get("expect", {})
    sel, dirs, qps, tr = u["sel"], u["dirs"], u["qps"], u["transport"]
    pre = f"{u['label']} " if u["label"] else ""
    ep = {}
    for c in sel:
        for e in c["endpoints"]:
            if e.get("qpn") is not None:
                ep[e["addr"]] = e
    # QPNs and starting PSNs as printed by the tools / qpgen
    for addr, qp in qps.items():
        if addr in ep and ep[addr].get("qpn") != qp["qpn"]:
            errs.append(f"{pre}{addr} QPN {ep[addr].get('qpn')} in capture, tool says {qp['qpn']}")
    if tr in ("RC", "UC") and exp.get("psn_from_tool", True):
        for addr, qp in qps.items():
            d = dirs.get(addr)
            if d and d.get("request_packets", 0) > 0 and d.get("first_psn") is not None \
                    and d["first_psn"] != qp["psn"]:
                errs.append(f"{pre}{addr} first request PSN {d['first_psn']}, tool's starting PSN {qp['psn']}")
        cm = sel[0].get("cm") if sel else None
        if cm and cm.get("starting_psn") and qps:
            got = set(cm["starting_psn"])
            want = {qp["psn"] for qp in qps.values()}
            if not want <= got:
                errs.append(f"{pre}CM starting PSNs {sorted(got)}, tool's {sorted(want)}")
    elif tr == "UD" and pk is not None:
        # the summary has no first PSN for UD: take the first datagram to the
        # peer's QP from packets --json
        for addr, qp in qps.items():
            peer = SERVER if addr == CLIENT else CLIENT
            first = next((p for f, p in sorted(pk.items()) if p.get("src") == addr and
                          p.get("bth", {}).get("dqpn") == qps[peer]["qpn"]), None)
            if dirs.get(addr) and first is None:
                errs.append(f"{pre}{addr}: no UD datagram to QP {qps[peer]['qpn']} in packets")
            elif first is not None:
                if first["bth"]["psn"] != qp["psn"]:
                    errs.append(f"{pre}{addr} first UD PSN {first['bth']['psn']}, starting PSN {qp['psn']}")
                if (first.get("deth") or {}).get("sqpn") != qp["qpn"]:
                    errs.append(f"{pre}{addr} DETH source QP {first['deth'].get('sqpn') if first.get('deth') else None}, expected {qp['qpn']}")

    # per-op message counts and sizes
    exp_ops = u["exp_ops"]
    for who, addr in (("client", CLIENT), ("server", SERVER)):
        want = exp_ops.get(who)
        if want is None:
            continue
        d = dirs.get(addr, {})
        msgs = {k: v for k, v in d.get("messages", {}).items() if v}
        for op, (count, size) in want.items():
            if msgs.get(op, 0) != count:
                errs.append(f"{pre}{who} {op} messages {msgs.get(op, 0)}, expected {count}")
                continue
            ms = d.get("message_sizes", {}).get(op, {})
            if op in ATOMICS or size is None:
                continue
            sizes = size if isinstance(size, list) else [size]
            if ms.get("min") != min(sizes) or ms.get("max") != max(sizes):
                errs.append(f"{pre}{who} {op} sizes {ms.get('min')}..{ms.get('max')}, expected {size}")
        extra = set(msgs) - set(want)
        if extra:
            errs.append(f"{pre}{who} unexpected operations {sorted(extra)}")
        notes.append(f"{pre}{who} " + ",".join(f"{op}={msgs.get(op, 0)}" for op in sorted(want)))

    # qpgen's deliberate errors must show on the wire
    for op in u["ops"]:
        responder = SERVER if op["from"] == "client" else CLIENT
        d = dirs.get(responder, {})
        if op["op"] == "RNR_SEND" and not d.get("rnr_naks"):
            errs.append(f"{pre}RNR_SEND posted but no RNR NAK from {responder}")
        if op["status"] == "remote access error" and not (d.get("naks") or {}).get("REMOTE_ACCESS"):
            errs.append(f"{pre}{op['op']} failed with remote access error but no NAK REMOTE_ACCESS from {responder}")
        if op["op"] == "RNR_SEND" and d.get("rnr_naks"):
            notes.append(f"{pre}{d['rnr_naks']} RNR NAKs")
        if op["status"] == "remote access error" and (d.get("naks") or {}).get("REMOTE_ACCESS"):
            notes.append(f"{pre}NAK REMOTE_ACCESS")
        if op["op"] == "SEND_INV" and op.get("peer_with_invalidate") is False:
            errs.append(f"{pre}SEND_INV seq {op['seq']}: the receive did not complete with invalidate")


def check_send_inv(man, pk, units, errs, notes):
    """every SEND_INV carries the invalidated rkey in an IETH (SEND_ONLY_INV
    0x17 / SEND_LAST_INV 0x16)"""
    invs = [o for u in units for o in u["ops"] if o["op"] == "SEND_INV"]
    if not invs:
        return
    wire = [p for p in pk.values() if p.get("bth", {}).get("opcode") in (0x16, 0x17)]
    keys = [p.get("ieth") for p in wire]
    want = [o["invalidate_rkey"] for o in invs]
    if sorted(k for k in keys if k is not None) != sorted(want):
        errs.append(f"IETH rkeys on the wire {keys}, qpgen invalidated {want}")
    else:
        notes.append(f"{len(want)} IETH rkeys match")


def check_gbn(man, summ, evs, pk, ids, errs, notes):
    """go-back-N episodes line up with the NAKs in the capture"""
    convs = {c["id"]: c for c in summ.get("conversations", []) if c["id"] in ids}
    eps = {}
    for cid, c in convs.items():
        for d in c.get("directions", []):
            if len(d.get("episodes", [])) != d.get("gbn_episodes", 0):
                errs.append(f"conv {cid} dir {d['from']}: gbn_episodes {d.get('gbn_episodes')}, "
                            f"{len(d.get('episodes', []))} episodes listed")
            for e in d.get("episodes", []):
                eps[(cid, d["from"], e["first_resent_frame"])] = e
    gev = [e for e in evs if e.get("kind") == "gbn_episode" and e.get("conv") in convs]
    if len(gev) != len(eps):
        errs.append(f"{len(gev)} gbn_episode events, summary lists {len(eps)} episodes")
    n_nak = 0
    for e in gev:
        c = convs[e["conv"]]
        me, other = c["endpoints"][e["dir"]]["addr"], c["endpoints"][1 - e["dir"]]["addr"]
        ep = eps.get((e["conv"], e["dir"], e["frame"]))
        if ep is None:
            errs.append(f"gbn_episode event at frame {e['frame']} has no summary episode")
            continue
        if ep["trigger"] == "nak":
            n_nak += 1
            nak = pk.get(e.get("original_frame"))
            aeth = (nak or {}).get("aeth") or {}
            if e.get("original_frame") != ep["trigger_frame"]:
                errs.append(f"episode at frame {e['frame']}: event names frame {e.get('original_frame')}, "
                            f"summary trigger_frame {ep['trigger_frame']}")
            elif not (nak and aeth.get("kind") == "NAK" and aeth.get("nak") == "PSN_SEQ_ERR"
                      and nak.get("src") == other and nak.get("dst") == me):
                errs.append(f"episode at frame {e['frame']}: trigger frame {e.get('original_frame')} is not "
                            f"a NAK PSN_SEQ_ERR from {other}")
            elif ep.get("from_psn") != e.get("psn"):
                errs.append(f"episode at frame {e['frame']} resends from PSN {e.get('psn')}, "
                            f"summary from_psn {ep.get('from_psn')}")
            elif nak["bth"]["psn"] != e.get("psn"):
                # The requester goes back to the NAK's PSN (rxe_comp.c); a
                # first resend above it is the NAK's go-back-N only when
                # the resends of the PSNs from the NAK's up to it are not in
                # this capture (lost again before the capture point), and
                # it is one the requester sent before the NAK.
                lo, first = nak["bth"]["psn"], e.get("psn")
                ahead = (first - lo) & 0xFFFFFF
                seen = [f for f, p in pk.items() if nak["frame"] < f < e["frame"] and
                        p.get("src") == me and p.get("dst") == other and "bth" in p and
                        ((p["bth"]["psn"] - lo) & 0xFFFFFF) < ahead]
                sent_before = [f for f, p in pk.items() if f < nak["frame"] and p.get("src") == me
                               and "bth" in p and p["bth"]["psn"] == first]
                if not 0 < ahead < 65536 or seen or not sent_before:
                    errs.append(f"episode at frame {e['frame']} resends from PSN {first}, NAK frame "
                                f"{nak['frame']} asks for {lo}: "
                                + (f"frames {seen} resend PSNs in between" if seen else
                                   f"PSN {first} was not sent before the NAK" if not sent_before else
                                   "not ahead of the NAK's PSN"))
                else:
                    notes.append(f"episode at frame {e['frame']}: NAK frame {nak['frame']}'s go-back-N "
                                 f"from PSN {lo}, its first {ahead} resent PSN(s) not captured")
        first = pk.get(ep["first_resent_frame"])
        if not first or first.get("src") != me or first["bth"]["psn"] != ep.get("from_psn"):
            errs.append(f"episode first_resent_frame {ep['first_resent_frame']} does not carry PSN "
                        f"{ep.get('from_psn')} from {me}")
    # every NAK PSN_SEQ_ERR is answered: an episode it triggered, or a resend of its PSN
    triggers = {e["trigger_frame"] for e in eps.values() if e["trigger"] == "nak"}
    naks = 0
    requests = {}  # (requester, responder): its requests in frame order
    for cid, c in convs.items():
        addrs = {e["addr"]: e.get("qpn") for e in c["endpoints"]}
        for f, p in sorted(pk.items()):
            a = p.get("aeth") or {}
            if a.get("nak") != "PSN_SEQ_ERR" or p.get("src") not in addrs or p.get("dst") not in addrs:
                continue
            if p["bth"].get("dqpn") != addrs.get(p["dst"]):
                continue
            # a view merged from both sides: each NAK once, as its sender's
            # own capture saw it (the other side's sighting is a copy)
            if "tap" in p and {SERVER: "server", CLIENT: "client"}.get(p["src"]) != p["tap"]:
                continue
            naks += 1
            if f in triggers:
                continue
            resend = any(q.get("src") == p["dst"] and g > f and q["bth"].get("psn") == p["bth"]["psn"]
                         and not q.get("aeth") for g, q in pk.items())
            # a NAK that reaches a requester already going back (an episode
            # begun before it and not ended by then) changes nothing: only
            # the first NAK of a retry matters (rxe_comp.c)
            during = any(e["first_resent_frame"] < f and (not e.get("end_frame") or e["end_frame"] >= f)
                         and pk.get(e["first_resent_frame"], {}).get("src") == p["dst"]
                         for e in eps.values())
            # or the responder answered that PSN after all (the request
            # reached it later): there was nothing to recover.  An answer
            # is a READ response at that PSN, or an ACK (an ATOMIC
            # Acknowledge too) at it or past it: an ACK acknowledges
            # every PSN up to its own (IBA 9.7.5.1.1)
            answered = any(q.get("src") == p["src"] and g > f and "bth" in q and
                           ("RESPONSE" in q["bth"].get("opcode_name", "").upper() and
                            q["bth"].get("psn") == p["bth"]["psn"] or
                            (q.get("aeth") or {}).get("kind") == "ACK" and
                            (q["bth"]["psn"] - p["bth"]["psn"]) & 0xFFFFFF < 0x800000)
                           for g, q in pk.items())
            if not resend and not during and not answered:
                errs.append(f"NAK PSN_SEQ_ERR frame {f} (PSN {p['bth']['psn']}) has no episode and no resend")
            # The requester's next request after the NAK, within 10 ms (a
            # NAK's go-back-N follows at once; rxe's local ACK timeouts
            # here are seconds), going back (a PSN not past its request
            # before the NAK) to one from the NAK's PSN up: the NAK's
            # go-back-N, even when its first resends were lost again
            # before the capture point.  (A requester that goes on
            # forward, e.g. with an RNR retry of a long message, is not
            # going back for this NAK.)
            key = (p["dst"], p["src"])
            if key not in requests:
                requests[key] = [(g, q) for g, q in sorted(pk.items()) if q.get("src") == key[0]
                                 and q.get("dst") == key[1] and "bth" in q and not q.get("aeth")
                                 and "RESPONSE" not in q["bth"].get("opcode_name", "").upper()]
            reqs = requests[key]
            nxt = next(((g, q) for g, q in reqs if g > f), None)
            prev = next(((g, q) for g, q in reversed(reqs) if g < f), None)
            if nxt and prev and not during and nxt[1].get("time", 0) - p.get("time", 0) < 0.010:
                ahead = (nxt[1]["bth"]["psn"] - p["bth"]["psn"]) & 0xFFFFFF
                back = (prev[1]["bth"]["psn"] - nxt[1]["bth"]["psn"]) & 0xFFFFFF
                if ahead < 65536 and back < 65536 and f not in triggers:
                    errs.append(f"NAK PSN_SEQ_ERR frame {f} (PSN {p['bth']['psn']}) is followed by the "
                                f"resend frame {nxt[0]} (PSN {nxt[1]['bth']['psn']}), but no episode "
                                f"names it as trigger")
    nak_count = sum((d.get("naks") or {}).get("PSN_SEQ_ERR", 0)
                    for c in convs.values() for d in c.get("directions", []))
    if nak_count != naks:
        errs.append(f"summary counts {nak_count} NAK PSN_SEQ_ERR, packets show {naks}")
    notes.append(f"{len(eps)} go-back-N episodes ({n_nak} after NAK), {naks} NAKs line up")


def check(qptrace, pcap, man):
    global CLIENT, SERVER
    errs, notes = [], []
    CLIENT = (man.get("client") or {}).get("addr") or VM_CLIENT
    SERVER = (man.get("server") or {}).get("addr") or VM_SERVER
    if man.get("host"):
        # a capture made by tools/capture --host on this machine's devices
        devs = man.get("devices") or {}
        for r, addr in (("server", SERVER), ("client", CLIENT)):
            d = devs.get(r) or {}
            if not d.get("device") or d.get("addr") != addr or d.get("device") != (man.get(r) or {}).get("device"):
                errs.append(f"host manifest: {r} device record {d} does not match {r} {man.get(r, {}).get('device')} {addr}")
        notes.append(f"host {devs.get('server', {}).get('device')}/{devs.get('client', {}).get('device')}")
    impaired = bool(man.get("impairment"))
    summ = run_json(qptrace, "summary", pcap)
    convs = [c for c in summ.get("conversations", [])
             if {e.get("addr") for e in c.get("endpoints", [])} == {CLIENT, SERVER}]
    if "qpgen" in man:
        units = qpgen_units(man, convs, errs, notes)
    else:
        units = tool_unit(man, convs, errs, notes)
    if not units:
        return errs, notes
    dirs_all = [d for u in units for d in u["dirs"].values()]
    retx = sum(d.get("retransmitted_packets", 0) for d in dirs_all)
    need_pk = (retx or impaired or any(u["transport"] == "UD" for u in units)
               or any(o["op"] == "SEND_INV" for u in units for o in u["ops"]))
    pk = {p["frame"]: p for p in run_json(qptrace, "packets", pcap, lines=True) if "frame" in p} \
        if need_pk else None
    for u in units:
        check_unit(u, man, pk, errs, notes)
    if pk is not None:
        check_send_inv(man, pk, units, errs, notes)

    # retransmissions: every one must be real
    ids = {c["id"] for u in units for c in u["sel"]}
    if retx or impaired:
        evs = run_json(qptrace, "events", pcap, lines=True)
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
        if impaired:
            check_gbn(man, summ, evs, pk, ids, errs, notes)
    if not impaired:
        for d in dirs_all:
            naks = sum((d.get("naks") or {}).values())
            expected_naks = (d.get("naks") or {}).get("REMOTE_ACCESS", 0) if "qpgen" in man else 0
            if d.get("psn_gaps") or d.get("missing_psns") or naks - expected_naks:
                errs.append(f"psn_gaps {d.get('psn_gaps')} missing {d.get('missing_psns')} "
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
