#!/usr/bin/env python3
"""Check qptrace against the lossy rxe captures (tools/capture -L).

Each run NAME was captured on both sides at once: NAME.server.pcap (vethA,
rxe0) and NAME.client.pcap (vethB, rxe1), with random loss (netem) in the
middle of the path, so a lost packet is in its sender's file only.  Three
views are checked: each file alone and both read together (the merged
view, where every delivered packet appears twice: capture copies).

Ground truth comes from the captures themselves, not from qptrace: the
sender's own file holds every transmission of its packets in order (the
loss is after it), so a request packet there is a retransmission when the
same QP already sent that PSN (for a READ request: a PSN inside an earlier
READ's response range); each packet of the other file is matched to the
transmission it is (same bytes, latest sent before it arrived).  Checks:

  * in every view, the checks of validate.py (QPNs, PSNs, per-operation
    message counts and sizes exactly as the tool's command line asks,
    retransmission events repeat an earlier frame, NAKs and episodes line
    up);
  * the three views give the same messages;
  * every true retransmission in a view has a retransmission (or
    rnr_retry) event, and no other frame has one (in the merged view: no
    capture copy); when its original transmission is in the view, the event
    names a frame of that PSN sent earlier;
  * merged view: no go-back-N episode starts at a capture copy, and each
    direction has as many episodes as in its sender's own file;
  * the rxe counters (rdma statistic, before and after, in the manifest)
    agree with the capture on the device's own side, where they mean the
    same thing (drivers/infiniband/sw/rxe):
      sent_pkts          every RoCE packet rxe_xmit_packet sent (requests,
                         responses, ACKs/NAKs, CM MADs): = RoCE packets from
                         the device in its own file;
      rcvd_pkts          every packet rxe_rcv accepted (header, QP and ICRC
                         checks passed): = RoCE packets to the device in
                         its own file;
      out_of_seq_request one per NAK PSN sequence error the responder sends
                         (check_psn counts it when it sets sent_psn_nak): =
                         NAKs PSN_SEQ_ERR from the device in its own file,
                         and = qptrace's naks.PSN_SEQ_ERR there;
      send_rnr_err       RNR NAKs sent: = RNR NAKs from the device, = qptrace's
                         rnr_naks;
      duplicate_request  requests arriving with a PSN below the responder's
                         expected PSN: = what a replay of the arrivals in
                         the device's own file gives (no RNR NAKs in the run);
      rcvd_seq_err       NAKs PSN_SEQ_ERR the completer took (only those
                         beyond its acknowledged PSN): <= those arriving;
      rcvd_rnr_err       RNR NAKs the completer took: <= those arriving;
    and the loss: packets from a side in its own file minus those in the
    other side's file = what netem dropped in between (TCP included).
    completer_retry_err (retry sequences the requester started) is printed
    next to qptrace's go-back-N episodes, not compared: qptrace's episodes
    also start at resends the completer did not count as a new sequence.

Prints one line per run and view and `N passed, N failed`; exit status 1
when any failed, 77 when there is nothing to check or no qptrace binary.
"""
import argparse
import glob
import json
import os
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import validate  # noqa: E402

CLIENT, SERVER = validate.CLIENT, validate.SERVER
ROLE_ADDR = {"server": SERVER, "client": CLIENT}
READ_REQUEST = 0x0C
RNR_RETRY_KINDS = ("retransmission", "rnr_retry")


ORDER = {}     # tuple(files) -> merged frame -> (role, frame in its file)
MERGED = {}    # tuple(files) -> packets of the merged view, numbered along its timeline


def run_json(qptrace, cmd, pcaps, lines=False):
    pcaps = [pcaps] if isinstance(pcaps, str) else list(pcaps)
    if cmd == "packets" and len(pcaps) > 1 and tuple(pcaps) in MERGED:
        # `qptrace packets` prints each file with its own frame numbers;
        # summary and events number the frames along the merged timeline
        return MERGED[tuple(pcaps)]
    out = subprocess.run([qptrace, cmd, "--json"] + pcaps, capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        raise RuntimeError(f"qptrace {cmd} exit {out.returncode}: {out.stderr.strip()[:300]}")
    if lines:
        return [json.loads(l) for l in out.stdout.splitlines() if l.strip()]
    return json.loads(out.stdout)


validate.run_json = run_json    # validate.check() on a list of files: the merged view


def pcap_frames(path):
    """(time, src, dst, proto, dport, (sec, frac)) of every frame of an Ethernet pcap"""
    out = []
    with open(path, "rb") as f:
        hdr = f.read(24)
        magic = struct.unpack("<I", hdr[:4])[0]
        end = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
        nano = magic in (0xA1B23C4D, 0x4D3CB2A1)
        while True:
            rh = f.read(16)
            if len(rh) < 16:
                break
            ts, tf, incl, _ = struct.unpack(end + "IIII", rh)
            d = f.read(incl)
            t = ts + tf / (1e9 if nano else 1e6)
            if len(d) < 34 or d[12:14] != b"\x08\x00":
                out.append((t, None, None, None, None, (ts, tf)))
                continue
            ihl = (d[14] & 15) * 4
            proto = d[23]
            src = ".".join(str(b) for b in d[26:30])
            dst = ".".join(str(b) for b in d[30:34])
            dport = struct.unpack(">H", d[14 + ihl + 2:14 + ihl + 4])[0] if proto == 17 else None
            out.append((t, src, dst, proto, dport, (ts, tf)))
    return out


def merge_order(raw, roles):
    """merged frame number -> (role, frame in its file): by time, ties to the
    earlier file (as mergecap and qptrace merge)"""
    recs = sorted((r[5], i, n + 1, role) for i, role in enumerate(roles) for n, r in enumerate(raw[role]))
    return {k + 1: (role, n) for k, (_, _, n, role) in enumerate(recs)}


def is_request(p):
    op = p.get("bth", {}).get("opcode")
    return op is not None and (op <= 0x0C or op in (0x13, 0x14, 0x16, 0x17)) and p["bth"]["dqpn"] != 1


def psn_diff(a, b):
    d = (a - b) & 0xFFFFFF
    return d - (1 << 24) if d & 0x800000 else d


def pkey(p):
    b = p["bth"]
    return (p["src"], b["dqpn"], b["psn"], b["opcode"], (p.get("icrc") or {}).get("value"))


class Truth:
    """transmissions per sender from its own file; every frame of either file
    mapped to the transmission it is"""

    def __init__(self, pk, mtu):
        self.pk = pk            # role -> {frame: packet}
        self.tx = {}            # role -> [frame in its own file] of its requests, in order
        self.retx = {}          # (role, own frame) -> first transmission's own frame, for retransmissions
        self.of = {}            # (file role, frame) -> (sender role, sender's own frame)
        for role in ("server", "client"):
            me = ROLE_ADDR[role]
            frames = [f for f, p in sorted(pk[role].items()) if p.get("src") == me and is_request(p)]
            self.tx[role] = frames
            seen = {}           # (dqpn, psn) -> first frame
            reads = {}          # dqpn -> [(psn, span, frame)]
            for f in frames:
                p = pk[role][f]
                b = p["bth"]
                k = (b["dqpn"], b["psn"])
                first = seen.get(k)
                if first is None and b["opcode"] == READ_REQUEST:
                    for psn0, span, f0 in reads.get(b["dqpn"], []):
                        if 0 <= psn_diff(b["psn"], psn0) < span:
                            first = f0
                            break
                if first is not None:
                    self.retx[(role, f)] = first
                else:
                    seen[k] = f
                    if b["opcode"] == READ_REQUEST:
                        span = max(1, -(-int((p.get("reth") or {}).get("dmalen", 0)) // mtu))
                        reads.setdefault(b["dqpn"], []).append((b["psn"], span, f))
                self.of[(role, f)] = (role, f)
        # the other side's sightings of each sender's requests
        for role, other in (("server", "client"), ("client", "server")):
            me = ROLE_ADDR[role]
            bykey = {}
            for f in self.tx[role]:
                bykey.setdefault(pkey(pk[role][f]), []).append(f)
            self.unmatched = getattr(self, "unmatched", 0)
            for f, p in sorted(pk[other].items()):
                if p.get("src") != me or not is_request(p):
                    continue
                cands = [g for g in bykey.get(pkey(p), []) if pk[role][g]["time"] <= p["time"] + 1e-6]
                if cands:
                    self.of[(other, f)] = (role, cands[-1])
                else:
                    self.unmatched += 1

    def sender(self, f_role, frame):
        return self.of.get((f_role, frame))


def view_frames(view, pk_view, order):
    """view frame -> (file role, frame in that file)"""
    if view != "merged":
        return {f: (view, f) for f in pk_view}
    return {f: order[f] for f in pk_view}


def check_view(view, files, man, qptrace, pk, truth, errs, notes):
    exp = man.get("expect", {})
    pk_view = pk[view] if view != "merged" else {p["frame"]: p for p in MERGED[tuple(files)]}
    summ = run_json(qptrace, "summary", files)
    evs = run_json(qptrace, "events", files, lines=True)
    vf = view_frames(view, pk_view, ORDER[tuple(files)] if view == "merged" else None)
    if view == "merged":
        # qptrace's own numbering of the merged timeline must be ours
        name = {r: os.path.basename(files[i]) for i, r in enumerate(("server", "client"))}
        off = [(e["frame"], e.get("file"), e.get("file_frame")) for e in evs if "file_frame" in e
               and (e["frame"] not in vf or name[vf[e["frame"]][0]] != os.path.basename(e.get("file") or "")
                    or vf[e["frame"]][1] != e["file_frame"])]
        if off:
            errs.append(f"{len(off)} events place their frame elsewhere in the merged timeline than "
                        f"mergecap order does (frame, file, file_frame: {off[:4]})")
    # sightings of each transmission in this view, in order
    sight = {}
    for f in sorted(vf):
        s = truth.sender(*vf[f])
        if s is not None:
            sight.setdefault(s, []).append(f)
    retx_ev = {}    # frame -> its retransmission event (else its rnr_retry event, whose
    for e in evs:   # original_frame is the RNR NAK, not the packet sent before)
        if e.get("kind") in RNR_RETRY_KINDS and (e["frame"] not in retx_ev or e["kind"] == "retransmission"):
            retx_ev[e["frame"]] = e
    bad_flagged, missed, no_orig, copies_flagged = [], [], [], []
    n_true = n_with_orig = n_unknowable = 0
    top = {}        # (sender, dqpn) -> highest PSN in this view so far
    for f in sorted(vf):
        s = truth.sender(*vf[f])
        if s is None:
            continue
        first_sighting = sight[s][0] == f
        b = pk_view[f]["bth"]
        hi = top.get((s[0], b["dqpn"]))
        newest = hi is None or psn_diff(b["psn"], hi) > 0
        if newest:
            top[(s[0], b["dqpn"])] = b["psn"]
        is_retx = s in truth.retx and first_sighting
        ev = retx_ev.get(f)
        if not first_sighting:
            if ev:
                copies_flagged.append(f)
            continue
        if is_retx:
            n_true += 1
            orig = (s[0], truth.retx[s])
            orig_frames = sight.get(orig, [])
            if ev is None and not orig_frames and newest:
                # its original and everything after it were lost before
                # this capture point: nothing in the view tells it apart
                n_unknowable += 1
                continue
            if ev is None:
                missed.append(f)
                continue
            if orig_frames:
                n_with_orig += 1
                of = ev.get("original_frame") if ev.get("kind") == "retransmission" else None
                os_ = truth.sender(*vf[of]) if of in vf else None
                same_psn = os_ is not None and of < f and (
                    os_ == orig or truth.retx.get(os_) == orig[1] and os_[0] == orig[0])
                if not same_psn:
                    no_orig.append((f, of))
        elif ev is not None:
            bad_flagged.append(f)
    # every retransmission event: one naming an original must name an earlier
    # frame of the same PSN, opcode and QP from the same sender (a READ retry:
    # inside the original's response range); one naming none is right only
    # when no such frame is in the view (the original lost before it)
    mtu = int(man.get("path_mtu") or 1024)
    earlier = {}
    for f in sorted(pk_view):
        p = pk_view[f]
        if "bth" in p:
            earlier.setdefault((p["src"], p["bth"]["dqpn"], p["bth"]["psn"], p["bth"]["opcode"]), []).append(f)
    not_repeat, unnamed = [], []
    for e in evs:
        if e.get("kind") != "retransmission" or e["frame"] not in pk_view:
            continue
        r = pk_view[e["frame"]]
        o = pk_view.get(e.get("original_frame"))
        if e.get("original_frame") is None:
            k = (r["src"], r["bth"]["dqpn"], r["bth"]["psn"], r["bth"]["opcode"])
            if any(g < e["frame"] for g in earlier.get(k, [])):
                unnamed.append(e["frame"])
            continue
        ok = o is not None and e["original_frame"] < e["frame"] and o.get("src") == r.get("src") \
            and o["bth"]["dqpn"] == r["bth"]["dqpn"]
        if ok and o["bth"]["opcode"] == r["bth"]["opcode"] == READ_REQUEST:
            span = max(1, -(-int((o.get("reth") or {}).get("dmalen", 0)) // mtu))
            ok = psn_diff(r["bth"]["psn"], o["bth"]["psn"]) in range(span)
        elif ok:
            ok = o["bth"]["psn"] == r["bth"]["psn"] and o["bth"]["opcode"] == r["bth"]["opcode"]
        if not ok:
            not_repeat.append((e["frame"], e.get("original_frame")))
    if not_repeat:
        errs.append(f"{len(not_repeat)} retransmission events name an original that is not the same packet "
                    f"(frame, original: {not_repeat[:6]})")
    if unnamed:
        errs.append(f"{len(unnamed)} retransmission events name no original though the same packet is earlier "
                    f"in the view (frames {unnamed[:8]})")
    if missed:
        errs.append(f"{len(missed)} of {n_true} retransmissions have no retransmission event "
                    f"(frames {missed[:8]})")
    if bad_flagged:
        errs.append(f"{len(bad_flagged)} first transmissions reported as retransmissions (frames {bad_flagged[:8]})")
    if copies_flagged:
        errs.append(f"{len(copies_flagged)} capture copies reported as retransmissions (frames {copies_flagged[:8]})")
    if no_orig:
        errs.append(f"{len(no_orig)} of {n_with_orig} retransmissions with the original in the capture do not "
                    f"name it (frame, named: {no_orig[:6]})")
    notes.append(f"{n_true} retransmissions ({n_with_orig} with original"
                 f"{f', {n_unknowable} not recognisable here: original lost, newest PSN' if n_unknowable else ''})")
    if view == "merged":
        copy_frames = {f for fs in sight.values() for f in fs[1:]}
        ep_bad = [e["frame"] for e in evs if e.get("kind") == "gbn_episode" and e["frame"] in copy_frames]
        if ep_bad:
            errs.append(f"{len(ep_bad)} go-back-N episodes start at a capture copy (frames {ep_bad[:8]})")
    return summ, evs


def directions(summ):
    """sender addr -> [direction dicts] over the conversations between the hosts"""
    out = {}
    for c in summ.get("conversations", []):
        if {e.get("addr") for e in c.get("endpoints", [])} != {CLIENT, SERVER}:
            continue
        for d in c.get("directions", []):
            out.setdefault(c["endpoints"][d["from"]]["addr"], []).append(d)
    return out


def msgs_of(summ):
    return {a: {k: sum(d.get("messages", {}).get(k, 0) for d in ds) for d in ds for k in d.get("messages", {})}
            for a, ds in directions(summ).items()}


def replay_duplicates(pk_own, me, first_psn, mtu):
    """duplicate requests the responder `me` saw: arrivals below its expected PSN"""
    exp, dup = {}, 0
    for f, p in sorted(pk_own.items()):
        if p.get("dst") != me or not is_request(p):
            continue
        b = p["bth"]
        q = b["dqpn"]
        if q not in exp:
            exp[q] = first_psn.get(q, b["psn"])
        d = psn_diff(b["psn"], exp[q])
        if d == 0:
            n = 1
            if b["opcode"] == READ_REQUEST:
                n = max(1, -(-int((p.get("reth") or {}).get("dmalen", 0)) // mtu))
            exp[q] = (exp[q] + n) & 0xFFFFFF
        elif d < 0:
            dup += 1
    return dup


def check_counters(man, pk, raw, truth, summs, mtu, errs, notes):
    cnt = man.get("counters")
    if not cnt:
        errs.append("manifest has no rxe counters")
        return
    rnr_any = False
    for role, other in (("server", "client"), ("client", "server")):
        me = ROLE_ADDR[role]
        dl = cnt[role].get("delta", {})
        if "sent_pkts" not in dl:
            errs.append(f"{role}: no rxe counters in the manifest")
            continue
        own = pk[role]
        roce_from = sum(1 for t, s, d, pr, dp, _ in raw[role] if s == me and dp == 4791)
        roce_to = sum(1 for t, s, d, pr, dp, _ in raw[role] if d == me and dp == 4791)
        qpt_from = sum(1 for p in own.values() if p.get("src") == me)
        if dl["sent_pkts"] != roce_from:
            errs.append(f"{role} rxe sent_pkts {dl['sent_pkts']}, {roce_from} RoCE packets from it in its capture")
        if qpt_from != roce_from:
            errs.append(f"{role}: qptrace decodes {qpt_from} RoCE packets from it, the pcap has {roce_from}")
        if dl.get("rcvd_pkts") != roce_to:
            errs.append(f"{role} rxe rcvd_pkts {dl.get('rcvd_pkts')}, {roce_to} RoCE packets to it in its capture")
        naks = sum(1 for p in own.values() if p.get("src") == me and (p.get("aeth") or {}).get("nak") == "PSN_SEQ_ERR")
        rnrs = sum(1 for p in own.values() if p.get("src") == me and (p.get("aeth") or {}).get("kind") == "RNR")
        naks_in = sum(1 for p in own.values() if p.get("dst") == me and (p.get("aeth") or {}).get("nak") == "PSN_SEQ_ERR")
        rnrs_in = sum(1 for p in own.values() if p.get("dst") == me and (p.get("aeth") or {}).get("kind") == "RNR")
        rnr_any = rnr_any or rnrs or rnrs_in
        dirs = directions(summs[role]).get(me, [])
        q_naks = sum((d.get("naks") or {}).get("PSN_SEQ_ERR", 0) for d in dirs)
        q_rnr = sum(d.get("rnr_naks", 0) for d in dirs)
        if dl.get("out_of_seq_request") != naks:
            errs.append(f"{role} rxe out_of_seq_request {dl.get('out_of_seq_request')}, {naks} NAK PSN_SEQ_ERR sent")
        if q_naks != naks:
            errs.append(f"{role}: qptrace counts {q_naks} NAK PSN_SEQ_ERR sent, rxe out_of_seq_request "
                        f"{dl.get('out_of_seq_request')}, packets {naks}")
        if dl.get("send_rnr_err") != rnrs:
            errs.append(f"{role} rxe send_rnr_err {dl.get('send_rnr_err')}, {rnrs} RNR NAKs sent")
        if q_rnr != rnrs:
            errs.append(f"{role}: qptrace counts {q_rnr} RNR NAKs sent, rxe send_rnr_err {dl.get('send_rnr_err')}")
        if dl.get("rcvd_seq_err", 0) > naks_in:
            errs.append(f"{role} rxe rcvd_seq_err {dl.get('rcvd_seq_err')} > {naks_in} NAK PSN_SEQ_ERR arriving")
        if dl.get("rcvd_rnr_err", 0) > rnrs_in:
            errs.append(f"{role} rxe rcvd_rnr_err {dl.get('rcvd_rnr_err')} > {rnrs_in} RNR NAKs arriving")
        # first PSN of each of my QPs as its peer sent it (the peer's own file)
        first = {}
        for f in truth.tx[other]:
            b = pk[other][f]["bth"]
            first.setdefault(b["dqpn"], b["psn"])
        dup = replay_duplicates(own, me, first, mtu)
        if not rnr_any:
            if dl.get("duplicate_request") != dup:
                errs.append(f"{role} rxe duplicate_request {dl.get('duplicate_request')}, replay of its arrivals "
                            f"gives {dup}")
        eps = sum(d.get("gbn_episodes", 0) for d in dirs)
        notes.append(f"{role}: sent {dl['sent_pkts']} rcvd {dl.get('rcvd_pkts')} dup {dl.get('duplicate_request')}"
                     f"{'' if not rnr_any else ' (not replayed: RNR)'} oos/NAK {dl.get('out_of_seq_request')} "
                     f"rcvd_seq_err {dl.get('rcvd_seq_err')}/{naks_in} rnr {dl.get('send_rnr_err')}/"
                     f"{dl.get('rcvd_rnr_err')} retry {dl.get('completer_retry_err')} vs episodes {eps}")
    # loss in the middle = what netem dropped
    net = (man.get("impairment") or {}).get("netem", {})
    for role, other, dev in (("server", "client", "pB"), ("client", "server", "pA")):
        me = ROLE_ADDR[role]
        a = sum(1 for r in raw[role] if r[1] == me)
        b = sum(1 for r in raw[other] if r[1] == me)
        if dev in net and net[dev]["dropped"] != a - b:
            errs.append(f"{role} -> {other}: {a} packets in its capture, {b} arrived, netem on {dev} dropped "
                        f"{net[dev]['dropped']}")
        notes.append(f"{role}->{other} lost {a - b} of {a}")


def check_run(qptrace, d, man):
    name = man["name"]
    files = {r: os.path.join(d, man["capture"]["files"][r]) for r in ("server", "client")}
    res = []
    mtu = int(man.get("path_mtu") or 1024)
    pk = {r: {p["frame"]: p for p in run_json(qptrace, "packets", files[r], lines=True) if "frame" in p}
          for r in files}
    raw = {r: pcap_frames(files[r]) for r in files}
    truth = Truth(pk, mtu)
    order = merge_order(raw, ("server", "client"))
    key = (files["server"], files["client"])
    ORDER[key] = order
    # each packet of the merged view keeps the side that captured it (tap)
    MERGED[key] = [dict(pk[role][f], frame=n, tap=role) for n, (role, f) in sorted(order.items())
                   if f in pk[role]]
    summs, msgs = {}, {}
    for view, fl in (("server", [files["server"]]), ("client", [files["client"]]),
                     ("merged", [files["server"], files["client"]])):
        errs, notes = [], []
        try:
            e2, n2 = validate.check(qptrace, fl if view == "merged" else fl[0], man)
            # validate.py wants an original for every retransmission event;
            # here the original may be lost before the capture: checked below
            e2 = [e for e in e2 if "retransmission events are not repeats of an earlier frame" not in e]
            if view != "merged":
                # the peer's first request lost in the middle is not in this
                # file: its first PSN here is a later one, rightly
                other = "client" if view == "server" else "server"
                f0 = truth.tx[other][0] if truth.tx[other] else None
                seen = f0 is not None and any(v == (other, f0) for (r, _), v in truth.of.items() if r == view)
                if not seen:
                    lost = [e for e in e2 if e.startswith(f"{ROLE_ADDR[other]} first request PSN")]
                    e2 = [e for e in e2 if e not in lost]
                    notes += [f"{other}'s first request lost before this capture"] if lost else []
            errs += e2
            notes += n2
            summ, _ = check_view(view, fl, man, qptrace, pk, truth, errs, notes)
            summs[view] = summ
            msgs[view] = msgs_of(summ)
        except Exception as e:  # noqa: BLE001 - report and go on
            errs.append(f"{type(e).__name__}: {e}")
        res.append((f"{name} [{view}]", errs, notes))
    errs, notes = [], []
    if truth.unmatched:
        errs.append(f"{truth.unmatched} requests in one side's capture are not in the sender's")
    if len(msgs) == 3 and not (msgs["server"] == msgs["client"] == msgs["merged"]):
        errs.append(f"views give different messages: server {msgs['server']}, client {msgs['client']}, "
                    f"merged {msgs['merged']}")
    if "merged" in summs:
        for role in ("server", "client"):
            me = ROLE_ADDR[role]
            e_own = sum(d.get("gbn_episodes", 0) for d in directions(summs[role]).get(me, []))
            e_mrg = sum(d.get("gbn_episodes", 0) for d in directions(summs["merged"]).get(me, []))
            # The merged view also sees the answers the other side sent that
            # were lost on the way to this side: one can end an episode
            # there, and the resend after it is then a new (timeout)
            # episode.  So the counts may differ by at most the packets
            # lost towards this side (the sender's file minus this one's).
            other = "client" if role == "server" else "server"
            lost_in = (sum(1 for r in raw[other] if r[1] == ROLE_ADDR[other]) -
                       sum(1 for r in raw[role] if r[1] == ROLE_ADDR[other]))
            if abs(e_own - e_mrg) > max(lost_in, 0):
                errs.append(f"{role}'s go-back-N episodes: {e_own} in its own capture, {e_mrg} merged, "
                            f"more apart than the {lost_in} packets lost towards it")
            elif e_own != e_mrg:
                notes.append(f"{role}'s go-back-N episodes: {e_own} in its own capture, {e_mrg} merged "
                             f"(within the {lost_in} packets lost towards it)")
    if len(summs) >= 2:
        check_counters(man, pk, raw, truth, summs, mtu, errs, notes)
    res.append((f"{name} [counters]", errs, notes))
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("paths", nargs="*", help="directories of lossy runs (default captures/rxe/lossy)")
    ap.add_argument("--qptrace", help="qptrace binary (default: $QPTRACE or build/analyzer/qptrace)")
    ap.add_argument("--json", help="write every run's results here")
    a = ap.parse_args()
    qptrace = validate.find_qptrace(a.qptrace)
    if not qptrace:
        print("validate_lossy: no qptrace binary found (build it or pass --qptrace)")
        return 77
    mans = []
    for p in a.paths or [os.path.join(validate.TOP, "captures", "rxe", "lossy")]:
        for m in sorted(glob.glob(os.path.join(p, "*.json"))):
            man = json.load(open(m))
            if isinstance(man, dict) and "files" in (man.get("capture") or {}):
                mans.append((p, man))
    passed = failed = 0
    report = []
    for d, man in mans:
        for label, errs, notes in check_run(qptrace, d, man):
            report.append({"check": label, "errors": errs, "notes": notes})
            if errs:
                failed += 1
                print(f"FAIL {label}: " + "; ".join(errs))
                if notes:
                    print("     (" + "; ".join(notes) + ")")
            else:
                passed += 1
                print(f"ok   {label}: " + "; ".join(notes))
    if not mans:
        print("validate_lossy: no lossy captures found")
        return 77
    if a.json:
        json.dump(report, open(a.json, "w"), indent=1)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
