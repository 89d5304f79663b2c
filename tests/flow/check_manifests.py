#!/usr/bin/env python3
"""Check `qptrace summary --json` and `qptrace events --json` against the
ground-truth manifests that tools/qpscen writes next to each made capture.

usage: check_manifests.py QPTRACE MANIFEST.json...

Per conversation (matched by its two endpoints; the k-th of a pair of
endpoints in the manifest to the k-th in the summary), per direction: packets,
payload bytes, messages per operation, retransmitted packets, NAKs by kind,
RNR NAKs, go-back-N episodes, CNPs, ECN-CE, duplicates, and the frame
numbers of retransmissions, NAKs, RNR NAKs, duplicates, CNPs and ECN-CE
marks (and of the go-back-N episodes' first resends, where the manifest
gives them: qpscen random) must equal the manifest's.  The messy-capture manifests also give
ACKs, READ retries, PSN gaps and missing PSNs, READ response gaps, out-of-order packets,
duplicate ACKs, new sequences, timestamps going backwards and the trigger
of each go-back-N episode in order ("?": any), which must match too.  A CM connection request the manifest
shows without a REP must be in the summary's `cm_failed` (its REQ, MRA
and REJ frames and the REQ sender), with a `cm_reject` event at its REJ,
and nothing else may be there.  Prints `N passed, N failed`.
"""
import ipaddress
import json
import os
import subprocess
import sys

DIR_FIELDS = ["packets", "payload_bytes", "retransmitted_packets", "rnr_naks",
              "gbn_episodes", "cnps", "ecn_ce", "duplicates"]
# Printed by qpscen only for the messy-capture scenarios (scen_messy.c);
# checked when the manifest has them.
EXTRA_FIELDS = ["acks", "read_retries", "psn_gaps", "missing_psns",
                "response_gaps", "missing_responses",
                "out_of_order", "dup_acks", "new_sequences", "time_backwards"]
EVENT_KINDS = {"retransmissions": "retransmission", "naks": "nak",
               "gbn_episodes": "gbn_episode",
               "rnr_naks": "rnr_nak", "duplicates": "duplicate",
               "cnps": "cnp", "ecn_ce": "ecn_ce"}


def run(qptrace, cmd, cap):
    out = subprocess.run([qptrace, cmd, "--json", cap], capture_output=True,
                         text=True, timeout=60)
    if out.returncode != 0:
        raise RuntimeError(f"{cmd} exited {out.returncode}: {out.stderr.strip()}")
    return out.stdout


def check(qptrace, manifest):
    m = json.load(open(manifest))
    cap = manifest[:-5] + ".pcap"
    errs = []
    summ = json.loads(run(qptrace, "summary", cap))
    events = [json.loads(l) for l in run(qptrace, "events", cap).splitlines() if l]
    convs = summ["conversations"]

    def key(addr, qpn):
        try:
            addr = str(ipaddress.ip_address(addr))
        except ValueError:
            pass
        return (addr, qpn)

    errs += check_cm_failed(m, summ, events, key)
    if "pfc" in m:
        errs += check_pfc(qptrace, m, cap, key)
    seen = {}
    for mc in m.get("conversations", []):
        a, b = mc["a"], mc["b"]
        found = None
        # QPNs reused by a new connection: the k-th manifest conversation
        # between two endpoints is the k-th summary conversation between them.
        pair = frozenset([key(a["addr"], a["qpn"]), key(b["addr"], b["qpn"])])
        nth = seen.get(pair, 0)
        seen[pair] = nth + 1
        # Management datagrams (QP0/QP1) are counted in totals, not as
        # conversations; a CM exchange without data (REJ) has no packets.
        if a["qpn"] <= 1 or b["qpn"] <= 1:
            continue
        if not any(mc.get(d, {}).get("packets") for d in ("a_to_b", "b_to_a")):
            continue
        # A QPN is carried only by the packets sent to it (the BTH names the
        # destination QP): an end the capture saw nothing sent to has none
        # in any capture, and nothing pairs the two (random hw 7401, rxe
        # 5666: every answer lost).  Its address must match.
        deaf = [k for k, d in ((key(a["addr"], a["qpn"]), "b_to_a"),
                               (key(b["addr"], b["qpn"]), "a_to_b"))
                if not mc.get(d, {}).get("packets")]
        for c in convs:
            # a QP the capture never saw a packet to has no QPN in the
            # summary (one direction missing): its address must match
            eps = [key(e["addr"], e["qpn"]) if e["qpn"] is not None else None
                   for e in c["endpoints"]]
            ka, kb = key(a["addr"], a["qpn"]), key(b["addr"], b["qpn"])
            if None in eps and mc.get("lossless"):
                eps = [x if x is not None else (ka if i == 0 else kb) if
                       c["endpoints"][i]["addr"] == (a if i == 0 else b)["addr"] else
                       (kb if i == 0 else ka) for i, x in enumerate(eps)]
            elif None in eps and len(deaf) == 1:
                k = deaf[0]
                eps = [k if x is None and key(c["endpoints"][i]["addr"], None)[0] == k[0] else x
                       for i, x in enumerate(eps)]
            if eps == [key(a["addr"], a["qpn"]), key(b["addr"], b["qpn"])]:
                found, flip = c, False
            elif eps == [key(b["addr"], b["qpn"]), key(a["addr"], a["qpn"])]:
                found, flip = c, True
            if found and nth:
                found, nth = None, nth - 1
            if found:
                break
        if mc["transport"] == "UC":
            # UC has no ACKs to pair by: each direction is a one-way flow.
            errs += check_uc(mc, convs, events, key)
            continue
        name = f"conv {a['addr']}/{a['qpn']}<->{b['addr']}/{b['qpn']}"
        if not found:
            errs.append(f"{name}: not found in summary")
            continue
        if found["transport"] != mc["transport"]:
            errs.append(f"{name}: transport {found['transport']} != {mc['transport']}")
        want_pair = mc.get("pairing")
        if want_pair == "traffic" and len(deaf) == 1:
            want_pair = "none"
        if want_pair and mc["transport"] == "RC" and found["paired_by"] != want_pair:
            errs.append(f"{name}: paired_by {found['paired_by']} != {want_pair}")
        for label, idx in (("a_to_b", 0), ("b_to_a", 1)):
            md = mc.get(label)
            if md is None:
                continue
            qd = found["directions"][idx ^ (1 if flip else 0)]
            for f in DIR_FIELDS:
                if f in md and qd.get(f) != md[f]:
                    errs.append(f"{name} {label}: {f} {qd.get(f)} != {md[f]}")
            for op, n in md.get("messages", {}).items():
                if qd["messages"].get(op, 0) != n:
                    errs.append(f"{name} {label}: messages.{op} {qd['messages'].get(op, 0)} != {n}")
            if "episode_triggers" in md:
                for f in EXTRA_FIELDS:
                    if f in md and qd.get(f, 0) != md[f]:
                        errs.append(f"{name} {label}: {f} {qd.get(f, 0)} != {md[f]}")
                want = md["episode_triggers"]
                got = [e["trigger"] for e in qd.get("episodes", [])]
                if len(got) != len(want) or any(w not in ("?", g) for w, g in zip(want, got)):
                    errs.append(f"{name} {label}: episode triggers {got} != {want}")
            for k, n in md.get("naks", {}).items():
                if qd["naks"].get(k, 0) != n:
                    errs.append(f"{name} {label}: naks.{k} {qd['naks'].get(k, 0)} != {n}")
            if "first_psn" in md and md["packets"] and qd.get("first_psn") is not None \
                    and md.get("messages") and any(md["messages"].values()) \
                    and qd["first_psn"] != md["first_psn"]:
                errs.append(f"{name} {label}: first_psn {qd['first_psn']} != {md['first_psn']}")
            conv_dir = idx ^ (1 if flip else 0)
            errs += check_qos(name, label, md, qd)
            ids = {c["id"] for c in convs}
            for fk, kind in EVENT_KINDS.items():
                if fk == "gbn_episodes" and fk not in md.get("frames", {}):
                    continue  # the episode frames: given by qpscen random only
                want = sorted(md.get("frames", {}).get(fk, []))
                got = sorted(e["frame"] for e in events
                             if e["kind"] == kind and e["conv"] == found["id"] and e["dir"] == conv_dir)
                if mc.get("lossless"):
                    # an event of a half the engine folded into this
                    # conversation later (a CNP before the first ACK) has
                    # the id and direction of its time, no longer listed
                    got = sorted(got + [e["frame"] for e in events if e["kind"] == kind
                                        and e["conv"] not in ids and e["frame"] in want])
                if want != got:
                    errs.append(f"{name} {label}: {kind} frames {got} != {want}")
        if mc.get("lossless"):
            errs += check_lossless(name, mc["lossless"], found, flip, summ, events)
    return errs


QOS_KEYS = ["pcp", "dscp", "ack_pcp", "ack_dscp", "cnp_pcp", "cnp_dscp"]


def check_qos(name, label, md, qd):
    """The PCP/DSCP counts per class the generator wrote (emit.c counts
    every packet it writes by its own opcode class and tag)."""
    errs = []
    for k in QOS_KEYS:
        if k in md and qd.get(k) != md[k]:
            errs.append(f"{name} {label}: {k} {qd.get(k)} != {md[k]}")
    return errs


def check_lossless(name, ml, found, flip, summ, events):
    """The ECN model of tools/qpscen/scen_ecn.c against the summary: the
    reaction time of every CNP (as a distribution), the marks without CNP
    (counter and one ecn_no_cnp event each), the marks the CNP timer
    covered, the rate windows around CNPs, and the findings of the
    conversation that must and must not be there."""
    errs = []
    for label, idx in (("a_to_b", 0), ("b_to_a", 1)):
        md = ml.get(label)
        if md is None:
            continue
        d = idx ^ (1 if flip else 0)
        qd = found["directions"][d]
        if qd.get("ce_without_cnp") != md["ce_without_cnp"]:
            errs.append(f"{name} {label}: ce_without_cnp {qd.get('ce_without_cnp')} != {md['ce_without_cnp']}")
        nev = sum(1 for e in events if e["kind"] == "ecn_no_cnp" and e["conv"] == found["id"]
                  and e["dir"] == d)
        if nev != md["ce_without_cnp"]:
            errs.append(f"{name} {label}: {nev} ecn_no_cnp events != {md['ce_without_cnp']} marks")
        ecn = qd.get("ecn") or {}
        if ecn.get("ce_covered") != md["ce_covered"]:
            errs.append(f"{name} {label}: ce_covered {ecn.get('ce_covered')} != {md['ce_covered']}")
        want = md["ecn_reaction_us"]
        got = qd.get("ecn_reaction_us")
        if not want:
            if got is not None:
                errs.append(f"{name} {label}: ecn_reaction_us {got} != null")
        elif got is None:
            errs.append(f"{name} {label}: ecn_reaction_us null, manifest {want}")
        else:
            exp = {"n": len(want), "min": min(want), "max": max(want),
                   "mean": sum(want) / len(want)}
            for k, v in exp.items():
                if abs(got[k] - v) > 0.001:
                    errs.append(f"{name} {label}: ecn_reaction_us.{k} {got[k]} != {v}")
        for k in ("rate_windows", "rate_windows_cut"):
            if ecn.get(k) != md[k]:
                errs.append(f"{name} {label}: ecn.{k} {ecn.get(k)} != {md[k]}")
        for k in ("rate_before_bps", "rate_after_bps"):
            if k in md and (ecn.get(k) is None or abs(ecn[k] - md[k]) > 1):
                errs.append(f"{name} {label}: ecn.{k} {ecn.get(k)} != {md[k]}")
    kinds = {f["kind"] for f in summ["findings"] if f["conv"] == found["id"]}
    for k in ml.get("findings", []):
        if k not in kinds:
            errs.append(f"{name}: no {k} finding (findings: {sorted(kinds)})")
    for k in ml.get("no_findings", []):
        if k in kinds:
            errs.append(f"{name}: a {k} finding, none expected")
    return errs


def check_pfc(qptrace, m, cap, key):
    """The lossless-network manifests (tools/qpscen/scen_pfc.c): qptrace
    summary --json --link-speed (the manifest's speed) must list exactly
    the manifest's priorities with their PAUSE/PFC frames, XOFF and XON
    frames, 802.3x PAUSE frames and quanta; pause_us must be the quanta at
    512 bit times each; the stalled conversations (matched by endpoints) must
    be those the generator held silent through a pause; pfc_priority_mismatch
    must be a finding exactly when the manifest says the scenario shows it,
    and pfc_stalls exactly when some conversation was stalled."""
    errs = []
    mp = m["pfc"]
    bps = mp["link_speed_bps"]
    out = subprocess.run([qptrace, "summary", "--json", "--link-speed", str(bps), cap],
                         capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        return [f"summary --link-speed exited {out.returncode}: {out.stderr.strip()}"]
    summ = json.loads(out.stdout)
    ids = {}  # manifest conversation id -> qptrace conversation id
    for mc in m.get("conversations", []):
        want = [key(mc["a"]["addr"], mc["a"]["qpn"]), key(mc["b"]["addr"], mc["b"]["qpn"])]
        for c in summ["conversations"]:
            eps = [key(e["addr"], e["qpn"]) for e in c["endpoints"]]
            if eps in (want, want[::-1]):
                ids[mc["id"]] = c["id"]
    got = {p["priority"]: p for p in summ.get("pfc", [])}
    want = {p["priority"]: p for p in mp["priorities"]}
    if sorted(got) != sorted(want):
        errs.append(f"pfc priorities {sorted(got)} != manifest {sorted(want)}")
    for prio, wp in want.items():
        gp = got.get(prio)
        if not gp:
            continue
        for f in ("pause_frames", "xoff_frames", "xon_frames", "pause_8023x", "quanta_total"):
            if gp.get(f) != wp[f]:
                errs.append(f"pfc priority {prio}: {f} {gp.get(f)} != {wp[f]}")
        us = wp["quanta_total"] * 512 / bps * 1e6
        if not isinstance(gp.get("pause_us"), (int, float)) or abs(gp["pause_us"] - us) > 0.001:
            errs.append(f"pfc priority {prio}: pause_us {gp.get('pause_us')} != {us:.3f}")
        stalled = sorted(ids.get(i, f"manifest conv {i} not found") for i in wp["stalled_conversations"])
        if sorted(gp.get("stalled_conversations", [])) != stalled:
            errs.append(f"pfc priority {prio}: stalled {gp.get('stalled_conversations')} != {stalled}")
    kinds = [f["kind"] for f in summ["findings"]]
    if ("pfc_priority_mismatch" in kinds) != mp["pfc_priority_mismatch"]:
        errs.append(f"pfc_priority_mismatch finding {'present' if 'pfc_priority_mismatch' in kinds else 'absent'}"
                    f", manifest says {mp['pfc_priority_mismatch']}")
    any_stall = any(p["stalled_conversations"] for p in mp["priorities"])
    if ("pfc_stalls" in kinds) != any_stall:
        errs.append(f"pfc_stalls finding {'present' if 'pfc_stalls' in kinds else 'absent'}, "
                    f"manifest stalls {any_stall}")
    return errs


def check_cm_failed(m, summ, events, key):
    """CM requests without a REP in the manifest == the summary's cm_failed."""
    errs = []
    want = {}
    for mc in m.get("conversations", []):
        msgs = {c["msg"]: c["frame"] for c in mc.get("cm", [])}
        if "REQ" in msgs and "REP" not in msgs and "RTU" not in msgs:
            want[msgs["REQ"]] = (key(mc["a"]["addr"], mc["a"]["qpn"]), key(mc["b"]["addr"], None),
                                 msgs.get("MRA", 0), msgs.get("REJ", 0))
    got = {f["req_frame"]: (key(f["from"]["addr"], f["from"]["qpn"]), key(f["to"]["addr"], None),
                            f["mra_frame"], f["rej_frame"])
           for f in summ.get("cm_failed", [])}
    if got != want:
        errs.append(f"cm_failed {got} != manifest {want}")
    rej = sorted(w[3] for w in want.values() if w[3])
    got_rej = sorted(e["frame"] for e in events if e["kind"] == "cm_reject")
    if rej != got_rej:
        errs.append(f"cm_reject events at frames {got_rej} != manifest REJ frames {rej}")
    return errs


def check_uc(mc, convs, events, key):
    errs = []
    for label, src, dst in (("a_to_b", mc["a"], mc["b"]), ("b_to_a", mc["b"], mc["a"])):
        md = mc.get(label)
        if not md or not md.get("packets"):
            continue
        c = next((c for c in convs
                  if key(c["endpoints"][0]["addr"], None) == key(src["addr"], None)
                  and key(c["endpoints"][1]["addr"], c["endpoints"][1]["qpn"]) == key(dst["addr"], dst["qpn"])), None)
        if not c:
            errs.append(f"UC flow {label} to {dst['addr']}/{dst['qpn']}: not found")
            continue
        qd = c["directions"][0]
        for f in DIR_FIELDS:
            if f in md and qd.get(f) != md[f]:
                errs.append(f"UC {label}: {f} {qd.get(f)} != {md[f]}")
        for op, n in md.get("messages", {}).items():
            if qd["messages"].get(op, 0) != n:
                errs.append(f"UC {label}: messages.{op} {qd['messages'].get(op, 0)} != {n}")
    return errs


def main():
    qptrace, manifests = sys.argv[1], sys.argv[2:]
    passed = failed = 0
    for man in manifests:
        try:
            errs = check(qptrace, man)
        except Exception as e:  # a crash of the tool is a failure, not a skip
            errs = [f"error: {e}"]
        if errs:
            failed += 1
            print(f"FAIL {os.path.basename(man)}")
            for e in errs:
                print("   ", e)
        else:
            passed += 1
            print(f"ok   {os.path.basename(man)}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
