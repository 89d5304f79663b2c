#!/usr/bin/env python3
"""Tests for `qptrace grade` and the rubrics shipped in rubrics/.

    test_grade.py QPTRACE ROOT

QPTRACE is the qptrace binary, ROOT the repository root.  Captures are taken
from ROOT/captures/public, or /work/shared/captures/public when the repo has
none.  Python 3 standard library only.  Prints "N passed, N failed" and
exits 1 when anything failed.
"""
import csv
import glob
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gradecheck import finish, ok  # noqa: E402

if len(sys.argv) != 3:
    sys.exit(__doc__)
QPTRACE = os.path.abspath(sys.argv[1])
ROOT = os.path.abspath(sys.argv[2])
RUBRICS = os.path.join(ROOT, "rubrics")
CAPS = os.path.join(ROOT, "captures", "public")
if not os.path.isdir(CAPS):
    CAPS = "/work/shared/captures/public"
RXE = os.path.join(ROOT, "captures", "rxe")

def cap(name):
    return os.path.join(CAPS, "linlinw5_" + name + ".pcap")


def rubric(name):
    return os.path.join(RUBRICS, name + ".ini")


def grade(rubric_path, *files, json_out=False, extra=()):
    args = [QPTRACE, "grade", "--rubric", rubric_path] + list(extra)
    if json_out:
        args.append("--json")
    p = subprocess.run(args + list(files), capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def graded_json(rubric_path, *files, extra=()):
    rc, out, err = grade(rubric_path, *files, json_out=True, extra=extra)
    try:
        doc = json.loads(out)
    except ValueError as e:
        doc = None
        err += "\nJSON error: %s\n%s" % (e, out[:2000])
    return rc, doc, err


def check_reasons(doc, index=0):
    """{check name: (result, reason, frames)} of one capture."""
    c = doc["captures"][index]
    return {k["name"]: (k["result"], k["reason"], k["frames"]) for k in c["checks"]}


def write_first_frames(src, dst, n):
    """Writes the first n frames of a classic pcap file (either byte order)."""
    with open(src, "rb") as f:
        data = f.read()
    magic = data[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
        endian = "<"
    elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        endian = ">"
    else:
        raise ValueError("%s is not a classic pcap file" % src)
    out = [data[:24]]
    off = 24
    for _ in range(n):
        if off + 16 > len(data):
            break
        incl = struct.unpack(endian + "I", data[off + 8:off + 12])[0]
        out.append(data[off:off + 16 + incl])
        off += 16 + incl
    with open(dst, "wb") as f:
        f.write(b"".join(out))


# ---- 1. every shipped rubric passes on its capture ------------------------

MATCH = [
    ("write_bw", "rdma_write_bw"),
    ("read_bw", "rdma_read_bw"),
    ("send_bw", "rdma_send_bw"),
    ("atomic_bw", "rdma_atomic_bw"),
    ("write_lat", "rdma_write_lat"),
    ("read_lat", "rdma_read_lat"),
    ("rc_pingpong", "pingpong_rc"),
    ("uc_pingpong", "pingpong_uc"),
    ("ud_pingpong", "pingpong_ud"),
    ("rdma_cm", "rdma_cm"),
    ("rping", "rping"),
    ("nccl", "nccl_nccl_node0"),
    ("nccl", "nccl_ring2_node0"),
    ("nccl", "nccl_tree2_node0"),
]
# the linlinw5 tutorial ran the pingpongs with -p 12345 (and ud with -s
# 1024): the rubrics default to the tools' port 18515 and the rxe runs
LINLINW5 = {
    "rc_pingpong": ["--command", "ibv_rc_pingpong -n 5 -s 1024 -p 12345"],
    "uc_pingpong": ["--command", "ibv_uc_pingpong -n 5 -s 1024 -p 12345"],
    "ud_pingpong": ["--command", "ibv_ud_pingpong -n 5 -s 1024 -p 12345"],
}
# rubrics graded on made captures (captures/made, tools/qpscen)
MADE_MATCH = [("lossless", "lossless_ok")]
shipped = sorted(f[:-4] for f in os.listdir(RUBRICS) if f.endswith(".ini"))
ok(set(shipped) == set(r for r, _ in MATCH) | set(r for r, _ in MADE_MATCH),
   "every shipped rubric has a matching capture in this test",
   "shipped: %s" % shipped)
for r, c in MATCH:
    rc, out, err = grade(rubric(r), cap(c), extra=LINLINW5.get(r, ()))
    ok(rc == 0 and "FAIL" not in out and "score" in out,
       "%s passes on %s (exit %d)" % (r, c, rc), out + err)

MADE = os.path.join(ROOT, "captures", "made")
for r, c in MADE_MATCH:
    rc, out, err = grade(rubric(r), os.path.join(MADE, c + ".pcap"))
    ok(rc == 0 and "FAIL" not in out and "score" in out,
       "%s passes on made %s (exit %d)" % (r, c, rc), out + err)
# the lossless rubric on the made captures that break it: which checks fail
# is what the generator made (tools/qpscen/scen_ecn.c)
for c, want_fail in [("ecn_no_cnp", {"cnps_answered"}),
                     ("cnp_priority_bad", {"cnp_class", "cnp_priority"}),
                     ("mtu_mismatch", {"mtu"}),
                     ("pfc_mismatch", {"pfc_priority"})]:
    rc, doc, err = graded_json(rubric("lossless"), os.path.join(MADE, c + ".pcap"))
    res = check_reasons(doc) if doc else {}
    failed_checks = {k for k, v in res.items() if v[0] == "fail"}
    ok(rc == 1 and failed_checks == want_fail,
       "lossless fails on made %s: %s (want %s)" % (c, sorted(failed_checks), sorted(want_fail)),
       json.dumps(res, indent=1) + err)
rc, doc, err = graded_json(rubric("lossless"), os.path.join(MADE, "ecn_no_cnp.pcap"))
res = check_reasons(doc) if doc else {}
ok(res.get("cnps_answered", ("", "", []))[2][:1] == [151] and
   "6 of 9 ECN-CE marked packets" in res.get("cnps_answered", ("", "", []))[1],
   "lossless cnps_answered names the first unanswered mark (frame 151) and counts 6 of 9",
   json.dumps(res.get("cnps_answered"), indent=1))
# the expected class is a parameter: CNPs on DSCP 46 pass when 46 is asked
rc, doc, err = graded_json(rubric("lossless"), os.path.join(MADE, "lossless_ok.pcap"),
                           extra=["--set", "roce_priority=5"])
res = check_reasons(doc) if doc else {}
ok(rc == 1 and res.get("data_priority", ("",))[0] == "fail" and
   "priority 3" in res.get("data_priority", ("", ""))[1],
   "lossless with --set roce_priority=5 fails data_priority on the priority-3 capture",
   json.dumps(res, indent=1) + err)

# ---- 2. mismatched captures fail with the right reasons -------------------

# (rubric, capture, {check: [substrings its reason must contain]})
MISMATCH = [
    ("uc_pingpong", "pingpong_rc", {
        "transport": ["transport RC present, expected only UC"],
        "no_acks": ["not checked: it needs send_messages"],
        "send_messages": ["not checked: it needs transport"]}),
    ("uc_pingpong", "pingpong_ud", {
        "transport": ["transport UD present, expected only UC"]}),
    ("rc_pingpong", "pingpong_uc", {
        "transport": ["transport UC present, expected only RC"],
        "acks": ["not checked: it needs send_messages"]}),
    ("ud_pingpong", "pingpong_rc", {
        "transport": ["transport RC present, expected only UD"],
        "deth": ["not checked: it needs transport"],
        "no_acks": ["not checked: it needs send_messages"]}),
    ("write_bw", "pingpong_rc", {
        "write_messages": ["0 RC WRITE messages", "expected at least 5", "10 RC SEND"],
        "multi_packet": ["no RC WRITE FIRST/MIDDLE/LAST packet"],
        "oob_tcp": ["no TCP frame on port 18515"]}),
    ("write_bw", "rdma_write_lat", {
        "write_messages": ["of 10 RC WRITE messages are 3000 bytes", "10 of 64 bytes"],
        "multi_packet": ["every message fits in one packet", "WRITE_ONLY"]}),
    ("write_bw", "rdma_cm", {
        "oob_tcp": ["no TCP frame on port 18515"]}),
    ("read_bw", "rdma_read_lat", {
        "read_messages": ["are 3000 bytes", "5 of 64 bytes"],
        "multi_packet_responses": ["every message fits in one packet", "READ_RESPONSE_ONLY"]}),
    ("send_bw", "rdma_write_bw", {
        "send_messages": ["0 RC SEND messages", "5 RC WRITE"]}),
    ("atomic_bw", "rdma_write_bw", {
        "fetch_add": ["no FETCH_ADD atomic request"]}),
    ("write_lat", "rdma_write_bw", {
        "write_messages": ["only 5 RC WRITE messages, expected at least 10",
                           "sizes seen: 5 of 3000 bytes"],
        "single_packet": ["expected at least 10"]}),
    ("read_lat", "rdma_write_lat", {
        "read_messages": ["0 RC READ messages", "10 RC WRITE"]}),
    ("rdma_cm", "rdma_write_bw", {
        "cm_handshake": ["no CM messages in the capture"],
        "paired_by_cm": ["0 conversations paired by cm", "paired by traffic"]}),
    ("rdma_cm", "rping", {
        "write_messages": ["are 3000 bytes"]}),
    ("rping", "rdma_write_bw", {
        "cm_handshake": ["no CM messages"],
        "read": ["0 RC READ messages"]}),
    ("nccl", "rdma_write_bw", {
        "qps": ["2 distinct RC QPs in 1 conversation", "expected at least 4 QPs"],
        "write_imm": ["0 RC WRITE_IMM messages", "5 RC WRITE"],
        "immediate": ["no WRITE_IMM packet with immediate data"]}),
    ("nccl", "pingpong_uc", {
        "qps": ["0 distinct RC QPs"],
        "acks": ["no ACK"]}),
]
for r, c, want in MISMATCH:
    rc, doc, err = graded_json(rubric(r), cap(c))
    if doc is None:
        ok(False, "%s on %s: JSON" % (r, c), err)
        continue
    got = check_reasons(doc)
    ok(rc == 1 and doc["captures"][0]["result"] == "fail",
       "%s fails on %s (exit %d)" % (r, c, rc), err)
    for name, subs in want.items():
        res, reason, _frames = got.get(name, ("missing", "", []))
        want_res = "not-checked" if "not checked" in subs[0] else "fail"
        ok(res == want_res and all(s in reason for s in subs),
           "%s on %s: %s %s: %s" % (r, c, name, want_res, reason),
           "expected %s with %r" % (want_res, subs))

# rping cut before the RTU: the handshake check names the RTU and the REP frame.
tmp = tempfile.mkdtemp(prefix="qpt-grade-")
try:
    cut = os.path.join(tmp, "rping_before_rtu.pcap")
    write_first_frames(cap("rping"), cut, 2)
    rc, doc, err = graded_json(rubric("rping"), cut)
    if doc is None:
        ok(False, "rping cut before RTU: JSON", err)
    else:
        res, reason, frames = check_reasons(doc)["cm_handshake"]
        ok(rc == 1 and res == "fail" and "no CM RTU after REP in frame 2" in reason
           and frames == [1, 2],
           "rping cut before RTU: cm_handshake fails: %s (frames %s)" % (reason, frames))
    rc, out, err = grade(rubric("rping"), cut)
    ok(rc == 1 and "FAIL  0/3  cm_handshake: conversation 0: no CM RTU after REP in frame 2" in out,
       "rping cut before RTU: text output names the RTU", out + err)

    # Cut before the teardown: handshake complete, DREQ missing.
    cut2 = os.path.join(tmp, "rping_no_teardown.pcap")
    write_first_frames(cap("rping"), cut2, 60)
    rc, doc, err = graded_json(rubric("rping"), cut2)
    res, reason, _ = check_reasons(doc)["cm_handshake"] if doc else ("?", err, [])
    ok(rc == 1 and res == "fail" and "no CM DREQ" in reason,
       "rping cut before DREQ: cm_handshake fails: %s" % reason)

    # ---- 3. rubric errors carry the line number --------------------------

    BAD = [
        ("unknown kind", "[rubric]\nname=x\n\n[check a]\nkind=opz\npoints=1\n",
         ":5: kind: unknown kind 'opz'"),
        ("bad number", "[rubric]\nname=x\n[check a]\nkind=ops\nop=WRITE\nmin_count=five\n",
         ":6: min_count: 'five' is not a whole number"),
        ("unknown key", "[rubric]\nname=x\n[check a]\nkind=acks\n# comment\ncolour=blue\n",
         ":6: key 'colour' is not known for kind=acks"),
        ("bad bool", "[rubric]\nname=x\n[check a]\nkind=acks\npresent=maybe\n",
         ":5: present: 'maybe' is not true or false"),
        ("not key=value", "[rubric]\nname=x\n[check a]\nkind=acks\nthis is wrong\n",
         ":5: 'this is wrong' is not a key=value pair"),
        ("bad group header", "[rubric]\nname=x\n[check a\nkind=acks\n",
         ":3: bad group header"),
        ("unknown group", "[rubric]\nname=x\n[check a]\nkind=acks\n\n[grading]\nx=1\n",
         ":6: unknown group [grading]"),
        ("missing kind", "[rubric]\nname=x\n\n\n[check a]\npoints=1\n",
         ":5: [check a] has no kind="),
        ("missing required key", "[rubric]\nname=x\n[check mtu]\nkind=path_mtu\n",
         ":3: [check mtu]: kind=path_mtu needs value="),
        ("bad MTU", "[rubric]\nname=x\n[check a]\nkind=path_mtu\nvalue=1500\n",
         ":5: value: 1500 is not a path MTU"),
        ("bad op", "[rubric]\nname=x\n[check a]\nkind=ops\nop=WRIT\n",
         ":5: op: unknown operation 'WRIT'"),
        ("bad transport", "[rubric]\nname=x\n[check a]\nkind=transport\ntransport=TCP\n",
         ":5: transport: 'TCP' is not RC, UC, UD, XRC or RD"),
        ("bad port", "[rubric]\nname=x\n[check a]\nkind=oob_tcp\nport=70000\n",
         ":5: port: '70000' is not a whole number from 1 to 65535"),
        ("bad by", "[rubric]\nname=x\n[check a]\nkind=paired\nby=magic\n",
         ":5: by: 'magic' is not cm, traffic or any"),
        ("duplicate key", "[rubric]\nname=x\n[check a]\nkind=acks\npresent=true\npresent=false\n",
         ":6: key 'present' appears twice in [check a] (first on line 5)"),
        ("key outside group", "name=x\n[rubric]\nname=y\n",
         ":1: key 'name' is outside any group"),
        ("no name", "[rubric]\ndescription=d\n[check a]\nkind=acks\n",
         ":1: [rubric] has no name="),
    ]
    for what, text, want in BAD:
        path = os.path.join(tmp, "bad.ini")
        with open(path, "w") as f:
            f.write(text)
        rc, out, err = grade(path, cap("rping"))
        ok(rc == 2 and (path + want) in err and not out,
           "bad rubric (%s) reports %s" % (what, want.strip(":")), "exit %d\n%s%s" % (rc, out, err))
    # Several problems are all reported, each with its line.
    path = os.path.join(tmp, "bad.ini")
    with open(path, "w") as f:
        f.write("[rubric]\nname=x\n[check a]\nkind=ops\nop=WRITE\nsize=big\n"
                "[check b]\nkind=nope\n")
    rc, out, err = grade(path, cap("rping"))
    ok(rc == 2 and path + ":6:" in err and path + ":8:" in err,
       "bad rubric: every error reported with its line", err)
    ok(grade(os.path.join(tmp, "missing.ini"), cap("rping"))[0] == 2,
       "missing rubric file: exit 2")

    # ---- 4. a folder with an unreadable file -----------------------------

    folder = os.path.join(tmp, "lab")
    os.mkdir(folder)
    for c in ("rdma_write_bw", "rdma_cm", "pingpong_rc"):
        shutil.copy(cap(c), folder)
    with open(os.path.join(folder, "broken.pcap"), "w") as f:
        f.write("this is not a capture\n")
    with open(os.path.join(folder, "notes.txt"), "w") as f:
        f.write("not graded\n")
    rc, out, err = grade(rubric("write_bw"), folder)
    names = [l[3:] for l in out.split("\n") if l.startswith("== ")]
    ok(rc == 2, "folder with an unreadable file: exit 2 (got %d)" % rc, out + err)
    ok(names == [os.path.join(folder, n) for n in
                 ("broken.pcap", "linlinw5_pingpong_rc.pcap", "linlinw5_rdma_cm.pcap",
                  "linlinw5_rdma_write_bw.pcap")],
       "folder: every *.pcap graded, sorted, notes.txt skipped", "\n".join(names))
    ok("ERROR  cannot read the capture: unknown file format" in out
       and "broken.pcap: unknown file format" in err,
       "folder: the unreadable file is reported", out + err)
    ok("4 captures: 1 passed, 2 failed, 1 unreadable" in out,
       "folder: totals table counts it", out)
    rc, doc, err = graded_json(rubric("write_bw"), folder)
    if doc:
        res = {os.path.basename(c["file"]): (c["result"], c.get("score")) for c in doc["captures"]}
        ok(rc == 2 and res == {"broken.pcap": ("error", None),
                               "linlinw5_pingpong_rc.pcap": ("fail", 2),
                               "linlinw5_rdma_cm.pcap": ("fail", 8),
                               "linlinw5_rdma_write_bw.pcap": ("pass", 10)}
           and doc["totals"] == {"captures": 4, "passed": 1, "failed": 2, "errors": 1,
                                 "found": 4, "graded": 3, "unreadable": 1, "not_captures": 1,
                                 "copies": 0},
           "folder --json: results, scores and totals", json.dumps(doc["totals"]) + str(res))
    else:
        ok(False, "folder --json parses", err)
    # Without the broken file: 1 when something fails, 0 when all pass.
    os.remove(os.path.join(folder, "broken.pcap"))
    ok(grade(rubric("write_bw"), folder)[0] == 1, "folder with a failing capture: exit 1")
    ok(grade(rubric("write_bw"), cap("rdma_write_bw"), cap("rdma_write_bw"))[0] == 0,
       "all captures pass: exit 0")
    # A nonexistent file among good ones still grades the good ones.
    rc, out, err = grade(rubric("write_bw"), os.path.join(tmp, "nope.pcap"), cap("rdma_write_bw"))
    ok(rc == 2 and "score 10/10" in out and "nope.pcap" in out,
       "nonexistent capture: reported, the other graded, exit 2", out + err)

    # ---- 5. JSON shape and frame proofs ----------------------------------
    rc, doc, err = graded_json(rubric("write_bw"), cap("rdma_write_bw"))
    if doc:
        k = check_reasons(doc)
        res, reason, frames = k["write_messages"]
        ok(rc == 0 and res == "pass" and reason.startswith(
            "5 RC WRITE messages of 3000 bytes in 3 packets each (frames ")
           and len(frames) == 10,
           "write_bw JSON: messages with their first/last frames: %s" % reason)
        ok(doc["captures"][0]["score"] == doc["rubric"]["max_score"] == 10,
           "write_bw JSON: full score")
    else:
        ok(False, "write_bw --json parses", err)

    # ---- 6. parameters and the lab's command line ------------------------

    def rxe(name):
        return os.path.join(RXE, name + ".pcap")

    def check_of(rubric_name, capture, name, extra):
        rc, doc, err = graded_json(rubric(rubric_name), capture, extra=extra)
        if doc is None:
            return None, err, rc, None
        return check_reasons(doc).get(name), err, rc, doc

    # The done-when of issue 19: one rubric, the lab's own command line.
    for rname, check, cmd, good, bad in [
            ("rc_pingpong", "send_messages", "ibv_rc_pingpong -n 50 -s 4096",
             "rc_pingpong_50x4096", "rc_pingpong"),
            ("write_bw", "write_messages", "ib_write_bw -n 20 -s 8192",
             "write_bw_20x8192", "write_bw")]:
        res, err, rc, doc = check_of(rname, rxe(good), check, ["--command", cmd])
        ok(res is not None and res[0] == "pass" and rc == 0,
           "--command '%s': %s passes on the real %s capture (exit %d): %s"
           % (cmd, check, good, rc, res and res[1]), err)
        res, err, rc, _ = check_of(rname, rxe(bad), check, ["--command", cmd])
        ok(res is not None and res[0] == "fail" and rc == 1,
           "--command '%s': %s fails on %s (exit %d): %s" % (cmd, check, bad, rc, res and res[1]),
           err)
    # The same with --set, and the header names where each value came from.
    rc, out, err = grade(rubric("rc_pingpong"), rxe("rc_pingpong_50x4096"),
                         extra=["--set", "iterations=50", "--set", "size=4096", "--set", "port=18515"])
    ok(rc == 0 and "rubric %s: ibv_rc_pingpong -n 50 -s 4096" % rubric("rc_pingpong") in out
       and "parameters: iterations=50 (--set), size=4096 (--set), mtu=1024 (rubric), port=18515 (--set)" in out,
       "--set iterations=50 --set size=4096: passes, parameters in the header", out + err)
    rc, out, err = grade(rubric("rc_pingpong"), rxe("rc_pingpong_50x4096"),
                         extra=["--command", "ibv_rc_pingpong -d rxe1 -g 1 -n 50 -s 4096 10.0.0.1"])
    ok(rc == 0 and "command: ibv_rc_pingpong -d rxe1 -g 1 -n 50 -s 4096 10.0.0.1" in out
       and "iterations=50 (--command -n)" in out and "port=18515 (ibv_rc_pingpong default)" in out,
       "--command: the command and each parameter's origin in the header", out)
    # Every real rxe run graded with its own command line (from its manifest)
    # against the shipped rubric of its tool passes; impaired runs fail on
    # their retransmissions only.
    TOOL_RUBRIC = {"ibv_rc_pingpong": "rc_pingpong", "ibv_uc_pingpong": "uc_pingpong",
                   "ibv_ud_pingpong": "ud_pingpong", "ib_write_bw": "write_bw",
                   "ib_read_bw": "read_bw", "ib_send_bw": "send_bw", "ib_atomic_bw": "atomic_bw",
                   "ib_write_lat": "write_lat", "rping": "rping"}
    for man in sorted(glob.glob(os.path.join(RXE, "*.json"))):
        with open(man) as f:
            m = json.load(f)
        rname = TOOL_RUBRIC.get(m["tool"])
        args = m["client"]["args"]
        if not rname or " -R " in " %s " % args:
            rname = "rdma_cm" if rname == "write_bw" else None
        if not rname:
            continue
        cmd = m["tool"] + " " + args
        rc, doc, err = graded_json(rubric(rname), man[:-5] + ".pcap", extra=["--command", cmd])
        if doc is None:
            ok(False, "%s --command '%s': JSON" % (m["name"], cmd), err)
            continue
        bad_checks = sorted(k for k, v in check_reasons(doc).items() if v[0] != "pass")
        want = ["no_retransmissions"] if m.get("impairment") else []
        ok(bad_checks == want, "%s graded with its own command line '%s' by %s: failed %s"
           % (m["name"], cmd, rname, bad_checks), json.dumps(doc["captures"][0]["checks"])[:3000])

    # Errors: the unknown option named, the rubric's tool, --set, the lines.
    for extra, want in [
            (["--command", "ibv_rc_pingpong -n 50 -Z 3 --frobnicate"],
             "ibv_rc_pingpong has no option -Z, --frobnicate"),
            (["--command", "ib_write_bw -n 5"], "the rubric is for ibv_rc_pingpong, not ib_write_bw"),
            (["--command", "mytool -n 5"], "'mytool' is not a tool whose options qptrace knows"),
            (["--command", "ibv_rc_pingpong -n"], "-n needs a value"),
            (["--command", "ibv_rc_pingpong -n lots"], "-n 'lots' is not a whole number"),
            (["--command", "ibv_rc_pingpong 'unclosed"], "cannot read the command line"),
            (["--set", "iterationz=5"], "the rubric has no parameter 'iterationz' (its parameters: iterations, size, mtu, port)"),
            (["--set", "size=1+1"], "not a whole number or a word")]:
        rc, out, err = grade(rubric("rc_pingpong"), rxe("rc_pingpong"), extra=extra)
        ok(rc == 2 and want in err and not out, "%s: exit 2, '%s'" % (" ".join(extra), want),
           "exit %d\n%s%s" % (rc, out, err))
    # -m: the pingpongs take 256, 512, 1024, 2048 or 4096 only (rdma-core
    # libibverbs/examples/pingpong.c pp_mtu_to_enum(); anything else: usage,
    # exit 1): refused, naming the command, never blamed on the rubric.
    for tool, rname, m in (("ibv_rc_pingpong", "rc_pingpong", "0"),
                           ("ibv_rc_pingpong", "rc_pingpong", "4097"),
                           ("ibv_rc_pingpong", "rc_pingpong", "1000"),
                           ("ibv_uc_pingpong", "uc_pingpong", "0")):
        cmd = "%s -n 5 -m %s" % (tool, m)
        rc, out, err = grade(rubric(rname), rxe("rc_pingpong"), extra=["--command", cmd])
        want = "--command '%s': -m '%s' is not a path MTU %s takes (256, 512, 1024, 2048 or 4096)" \
            % (cmd, m, tool)
        ok(rc == 2 and want in err and "rubric" not in err and "division" not in err and not out,
           "--command '%s': exit 2, refused as %s refuses it" % (cmd, tool),
           "exit %d\n%s%s" % (rc, out, err))
    for m, shown in (("2048", "mtu=2048 (--command -m)"), ("0x800", "mtu=2048 (--command -m)")):
        rc, out, err = grade(rubric("rc_pingpong"), rxe("rc_pingpong"),
                             extra=["--command", "ibv_rc_pingpong -m %s" % m])
        ok(rc in (0, 1) and shown in out, "--command 'ibv_rc_pingpong -m %s': %s" % (m, shown),
           "exit %d\n%s%s" % (rc, out, err))
    # perftest -m 0: the port's active MTU (set_mtu()), so the rubric's own
    rc, out, err = grade(rubric("write_bw"), rxe("write_bw"),
                         extra=["--command", "ib_write_bw -m 0"])
    ok(rc in (0, 1) and "mtu=1024 (rubric)" in out and "division" not in err,
       "--command 'ib_write_bw -m 0': the port's MTU, the rubric's mtu kept",
       "exit %d\n%s%s" % (rc, out, err))
    PBAD = [
        ("unknown parameter", "[rubric]\nname=x\n[params]\nn=5\n[check a]\nkind=ops\nop=SEND\nmin_count=${m}*2\n",
         ":8: min_count: no parameter 'm' (known: n)"),
        ("division by zero", "[rubric]\nname=x\n[params]\nn=5\nz=0\n[check a]\nkind=ops\nop=SEND\nmin_count=${n}/${z}\n",
         ":9: min_count: '${n}/${z}': division by zero"),
        ("not whole", "[rubric]\nname=x\n[params]\nsize=3000\nmtu=1024\n[check a]\nkind=ops\nop=SEND\nmin_packets_per_message=${size}/${mtu}\n",
         ":9: min_packets_per_message: '${size}/${mtu}': 375/128 is not a whole number (round it with ceil() or floor())"),
        ("syntax", "[rubric]\nname=x\n[params]\nn=5\n[check a]\nkind=ops\nop=SEND\nmin_count=(${n}*2\n",
         ":8: min_count: '(${n}*2': ')' expected at 'the end'"),
        ("out of range", "[rubric]\nname=x\n[params]\nn=5\n[check a]\nkind=oob_tcp\nport=${n}*100000\n",
         ":7: port: '${n}*100000' is 500000, not a whole number from 1 to 65535"),
        ("overflow", "[rubric]\nname=x\n[params]\nn=5\n[check a]\nkind=ops\nop=SEND\nmin_count=9223372036854775807*${n}\n",
         ":8: min_count: '9223372036854775807*${n}': number out of range"),
        ("bad default", "[rubric]\nname=x\n[params]\nn=5 6\n[check a]\nkind=acks\n",
         ":4: n: '5 6' is not a whole number or a word"),
        ("word in a number", "[rubric]\nname=x\n[params]\nt=RC\n[check a]\nkind=ops\nop=SEND\nmin_count=${t}+1\n",
         ":8: min_count: '${t}+1': parameter 't' is 'RC', not a whole number"),
        ("unknown text parameter", "[rubric]\nname=x -n ${iters}\n[params]\nn=5\n[check a]\nkind=acks\n",
         ":2: name: no parameter 'iters' (known: n)"),
        ("bad missing", "[rubric]\nname=x\nmissing=ignore\n[check a]\nkind=acks\n",
         ":3: missing: 'ignore' is not fail or skip"),
        ("bad command", "[rubric]\nname=x\ncommand=ibv_rc_pingpong -q 3\n[params]\nn=5\n[check a]\nkind=acks\n",
         ":3: command: ibv_rc_pingpong has no option -q"),
    ]
    for what, text, want in PBAD:
        path = os.path.join(tmp, "pbad.ini")
        with open(path, "w") as f:
            f.write(text)
        rc, out, err = grade(path, rxe("rc_pingpong"))
        ok(rc == 2 and (path + want) in err, "parameter error (%s): %s" % (what, want),
           "exit %d\n%s%s" % (rc, out, err))
    # Expressions: ceil of the exact quotient, min/max, precedence, unary minus.
    path = os.path.join(tmp, "expr.ini")
    with open(path, "w") as f:
        f.write("[rubric]\nname=e ${ceil(size/mtu)} ${floor(size/mtu)} ${max(1, ceil(0/mtu))} "
                "${2+3*4} ${(2+3)*4} ${-3+10} ${17%5} ${min(size, mtu)}\n"
                "[params]\nsize=3000\nmtu=1024\n[check a]\nkind=acks\n")
    rc, out, err = grade(path, rxe("rc_pingpong"))
    ok(rc == 0 and "rubric %s: e 3 2 1 14 20 7 2 1024 " % path in out,
       "expressions: ceil, floor, max, precedence, unary minus, %, min", out + err)
    # when=: a check that the parameters make meaningless is left out.
    rc, out, err = grade(rubric("write_bw"), rxe("write_lat"), extra=["--command", "ib_write_bw -n 5 -s 64"])
    ok("(4 checks, 7 points)" in out
       and "not checked for these parameters: multi_packet (when ${size} > ${mtu}), path_mtu (when ${size} > ${mtu})" in out
       and rc == 0,
       "when=: -s 64 leaves multi_packet and path_mtu out, the 64-byte WRITEs pass", out + err)
    path = os.path.join(tmp, "cmp.ini")
    with open(path, "w") as f:
        f.write("[rubric]\nname=c ${3 > 2} ${2 >= 3} ${1 == 1} ${1 != 1} ${1 < 2} ${(1 <= 1) + 1}\n"
                "[check a]\nkind=acks\nwhen=1 < 0\n[check b]\nkind=acks\nwhen=2/3 > 1/2\n")
    rc, out, err = grade(path, rxe("rc_pingpong"))
    ok(rc == 0 and "c 1 0 1 0 1 2 (1 checks, 1 points)" in out and "not checked for these parameters: a (when 1 < 0)" in out,
       "comparisons give 1 or 0 (exact: 2/3 > 1/2); when=0 leaves the check out", out + err)
    # A command= in the rubric sets its parameters; --command overrides it.
    path = os.path.join(tmp, "cmd.ini")
    with open(path, "w") as f:
        f.write("[rubric]\nname=pp -n ${iterations}\ncommand=ibv_rc_pingpong -n 50 -s 4096\n"
                "[params]\niterations=5\nsize=1024\n"
                "[check m]\nkind=ops\nop=SEND\nmin_count=${iterations}*2\nsize=${size}\n")
    rc, out, err = grade(path, rxe("rc_pingpong_50x4096"))
    ok(rc == 0 and "iterations=50 (rubric command -n)" in out, "command= in the rubric", out + err)
    rc, out, err = grade(path, rxe("rc_pingpong"), extra=["--command", "ibv_rc_pingpong -n 5 -s 1024"])
    ok(rc == 0 and "iterations=5 (--command -n)" in out, "--command overrides command=", out + err)
    # A shipped rubric by name (this binary is the build directory's: the
    # source tree's rubrics/).
    rc, out, err = grade("rc_pingpong", rxe("rc_pingpong"))
    ok(rc == 0 and "rubric %s:" % rubric("rc_pingpong") in out, "--rubric rc_pingpong finds the shipped rubric",
       out + err)
    rc, out, err = grade("no_such_lab", cap("pingpong_rc"))
    ok(rc == 2 and "no shipped rubric of that name" in err and "rc_pingpong" in err,
       "--rubric NAME that does not exist: exit 2, the shipped names listed", err)

    # ---- 7. NOT-IN-CAPTURE ------------------------------------------------

    udp = os.path.join(tmp, "udp_only.pcap")
    tcpdump = shutil.which("tcpdump")
    if tcpdump:
        subprocess.run([tcpdump, "-r", rxe("rc_pingpong"), "-w", udp, "udp port 4791"],
                       capture_output=True, check=True)
    else:  # the same frames by hand: every frame that is not TCP
        with open(rxe("rc_pingpong"), "rb") as f:
            data = f.read()
        out_b, off = [data[:24]], 24
        while off + 16 <= len(data):
            incl = struct.unpack("<I", data[off + 8:off + 12])[0]
            frame = data[off + 16:off + 16 + incl]
            if not (len(frame) > 23 and frame[12:14] == b"\x08\x00" and frame[23] == 6):
                out_b.append(data[off:off + 16 + incl])
            off += 16 + incl
        with open(udp, "wb") as f:
            f.write(b"".join(out_b))
    skip_rubric = os.path.join(tmp, "rc_pingpong_skip.ini")
    with open(rubric("rc_pingpong")) as f:
        text = f.read()
    with open(skip_rubric, "w") as f:
        f.write(text.replace("tool=ibv_rc_pingpong\n", "tool=ibv_rc_pingpong\nmissing=skip\n"))
    cmdx = ["--command", "ibv_rc_pingpong -n 5 -s 1024"]
    rc, doc, err = graded_json(skip_rubric, udp, extra=cmdx)
    if doc:
        c = doc["captures"][0]
        k = {x["name"]: x for x in c["checks"]}
        ok(rc == 0 and k["oob_tcp"]["result"] == "not-in-capture" and not k["oob_tcp"]["scored"]
           and c["result"] == "pass" and c["score"] == 9 and c["max_score"] == 9,
           "UDP-4791-only capture, missing=skip: oob_tcp NOT-IN-CAPTURE, not scored, capture passes 9/9: %s"
           % k["oob_tcp"]["reason"], json.dumps(c)[:2000])
    else:
        ok(False, "missing=skip JSON", err)
    rc, out, err = grade(skip_rubric, udp, extra=cmdx)
    ok(rc == 0 and "  NOT-IN-CAPTURE  -/1  oob_tcp: no TCP frame at all" in out
       and "(not scored: missing=skip)" in out and "FAIL" not in out
       and "score 9/9, 5 of 5 checks passed, 1 not in the capture (not scored): PASS" in out,
       "missing=skip: text report", out + err)
    rc, doc, err = graded_json(rubric("rc_pingpong"), udp, extra=cmdx)
    if doc:
        c = doc["captures"][0]
        k = {x["name"]: x for x in c["checks"]}
        ok(rc == 1 and k["oob_tcp"]["result"] == "not-in-capture" and k["oob_tcp"]["scored"]
           and c["result"] == "fail" and c["score"] == 9 and c["max_score"] == 10,
           "UDP-4791-only capture, missing=fail (default): NOT-IN-CAPTURE scored as failed, 9/10",
           json.dumps(c)[:2000])
    else:
        ok(False, "missing=fail JSON", err)
    # The same capture with its TCP: a real FAIL stays a FAIL (wrong port).
    rc, doc, err = graded_json(rubric("rc_pingpong"), rxe("rc_pingpong"),
                               extra=["--command", "ibv_rc_pingpong -p 4000 -n 5 -s 1024"])
    res = check_reasons(doc)["oob_tcp"] if doc else ("?", err, [])
    ok(res[0] == "fail" and "no TCP frame on port 4000" in res[1],
       "TCP present on another port: FAIL, not NOT-IN-CAPTURE: %s" % res[1])
    # Cut before: the capture starts with a WRITE_MIDDLE, after the CM handshake.
    cut_cm = os.path.join(tmp, "cut_after_cm.pcap")
    with open(rxe("write_bw_rdma_cm"), "rb") as f:
        data = f.read()
    out_b, off, i = [data[:24]], 24, 0
    while off + 16 <= len(data):
        incl = struct.unpack("<I", data[off + 8:off + 12])[0]
        if i >= 43:
            out_b.append(data[off:off + 16 + incl])
        off += 16 + incl
        i += 1
    with open(cut_cm, "wb") as f:
        f.write(b"".join(out_b))
    rc, doc, err = graded_json(rubric("rdma_cm"), cut_cm)
    k = check_reasons(doc) if doc else {}
    ok(k.get("cm_handshake", ("?",))[0] == "not-in-capture"
       and "starts in the middle of the traffic (frame 1 is RC WRITE_MIDDLE)" in k["cm_handshake"][1]
       and k.get("paired_by_cm", ("?",))[0] == "not-in-capture",
       "capture cut before the CM handshake: cm_handshake and paired_by_cm NOT-IN-CAPTURE",
       json.dumps(k)[:2000])
    # Wrong link type: native InfiniBand in ERF records cannot carry TCP.
    rc, doc, err = graded_json(rubric("rc_pingpong"), os.path.join(CAPS, "wswiki_infiniband_erf.pcap"))
    res = check_reasons(doc)["oob_tcp"] if doc else ("?", err, [])
    ok(res[0] == "not-in-capture" and "cannot be applied to link type 197 (ERF)" in res[1],
       "ERF InfiniBand capture: oob_tcp NOT-IN-CAPTURE (wrong link type): %s" % res[1])
    # A capture of the CM run with no TCP: the CM replaced TCP, a FAIL.
    res = check_reasons(graded_json(rubric("write_bw"), rxe("write_bw_rdma_cm"))[1])["oob_tcp"]
    ok(res[0] == "fail" and "connected by RDMA CM instead (CM REQ frame 1)" in res[1],
       "no TCP but a CM handshake: oob_tcp FAIL: %s" % res[1])

    # ---- 8. class mode: gradebook and feedback ----------------------------

    # the folder walked recursively (lossy/, ulp/): every capture below it
    rxe_caps = sorted(os.path.join(d, f) for d, _, fs in os.walk(RXE) for f in fs
                      if f.endswith(".pcap"))
    book = os.path.join(tmp, "out", "gradebook.csv")
    fbdir = os.path.join(tmp, "out", "feedback")
    os.makedirs(os.path.dirname(book))
    rc, out, err = grade(rubric("rc_pingpong"), RXE,
                         extra=["--gradebook", book, "--feedback", fbdir,
                                "--student-pattern", r"^([a-z]+)_", "-q"])
    ok(rc == 1, "class mode on captures/rxe: exit 1 (some fail)", "exit %d\n%s" % (rc, err))
    try:
        with open(book, newline="") as f:
            rows = list(csv.reader(f, strict=True))
    except (OSError, csv.Error) as e:
        rows = []
        err += "\ncsv: %s" % e
    checks = ["transport", "send_messages", "acks", "paired", "no_retransmissions", "oob_tcp"]
    ok(rows and rows[0] == ["file", "student", "score", "maximum", "result"] + checks + ["notes"],
       "gradebook: header file, student, score, maximum, result, a column per check, notes",
       str(rows[:1]) + err)
    body = rows[1:]
    ok(len(body) == len(rxe_caps) and [r[0] for r in body] == rxe_caps
       and all(len(r) == len(rows[0]) for r in body),
       "gradebook: one row per capture (%d), every row as wide as the header" % len(rxe_caps),
       "\n".join(",".join(r) for r in rows[:5]))
    byfile = {os.path.basename(r[0]): r for r in body}
    pp = byfile.get("rc_pingpong.pcap", [])
    ok(pp[1:5] == ["rc", "10", "10", "PASS"] and pp[5:11] == ["2", "3", "2", "1", "1", "1"],
       "gradebook: rc_pingpong.pcap row (student 'rc' from the pattern, 10/10: TCP 18515, the "
       "tool's port and the rubric's default; points per check)",
       str(pp))
    ok(all(r[4] in ("PASS", "FAIL", "ERROR") and int(r[2]) <= int(r[3]) for r in body),
       "gradebook: results and scores well formed")
    fb = sorted(os.listdir(fbdir)) if os.path.isdir(fbdir) else []
    # named by student (the pattern's group, else the file name), unique
    ids = [r[1] or os.path.basename(r[0])[:-5] for r in body]
    want_fb = []
    for i in ids:
        n, k = i + ".txt", 2
        while n in want_fb:
            n, k = "%s-%d.txt" % (i, k), k + 1
        want_fb.append(n)
    ok(len(fb) == len(rxe_caps) and fb == sorted(want_fb),
       "feedback: one file per capture (%d), named by student, unique" % len(fb),
       str(fb[:8]) + " vs " + str(sorted(want_fb)[:8]))
    rcfb = want_fb[[r[0] for r in body].index(rxe("rc_pingpong"))] if body else ""
    if rcfb in fb:
        with open(os.path.join(fbdir, rcfb)) as f:
            text = f.read()
        rc1, out1, _ = grade(rubric("rc_pingpong"), rxe("rc_pingpong"))
        block = out1.split("\ntotals")[0]
        ok(text.startswith(block.rstrip("\n")),
           "feedback: the same words as the report (header and the capture's block) first",
           text + "\n---- vs ----\n" + block)
    # CSV quoting: a file name with a comma, a quote and a space.
    odd = os.path.join(tmp, "odd")
    os.mkdir(odd)
    shutil.copy(rxe("rc_pingpong"), os.path.join(odd, 'bob, "the" builder.pcap'))
    book2 = os.path.join(tmp, "odd.csv")
    grade(rubric("rc_pingpong"), odd, extra=["--gradebook", book2])
    with open(book2, newline="") as f:
        rows2 = list(csv.reader(f, strict=True))
    ok(len(rows2) == 2 and rows2[1][0] == os.path.join(odd, 'bob, "the" builder.pcap')
       and rows2[1][1] == 'bob, "the" builder',
       "gradebook: CSV quoting of commas and quotes", str(rows2))
    # CSV injection (OWASP): student ids from file names a spreadsheet would
    # run as formulas; every cell read back starts with no formula character.
    hostile = os.path.join(tmp, "hostile")
    os.mkdir(hostile)
    names = ["=1+2", "@SUM(1+1)", "+cmd|calc", "-2+3", "\tTAB", "=HYPERLINK(\"x\",\"y\")",
             "=1,2", "plain"]
    for n in names:
        shutil.copy(rxe("rc_pingpong"), os.path.join(hostile, n + ".pcap"))
    book3 = os.path.join(tmp, "hostile.csv")
    rc, out, err = grade(rubric("rc_pingpong"), *[os.path.join(hostile, n + ".pcap") for n in names],
                         extra=["--gradebook", book3])
    rows3 = []
    if os.path.exists(book3):
        with open(book3, newline="") as f:
            rows3 = list(csv.reader(f, strict=True))
    bad = [c for r in rows3 for c in r if c[:1] in ("=", "+", "-", "@", "\t", "\r")]
    ok(len(rows3) == len(names) + 1 and not bad,
       "gradebook: hostile student names (%d rows): no cell starts with = + - @ tab CR"
       % len(rows3), "bad cells %r\n%s" % (bad, err))
    students = sorted(r[1] for r in rows3[1:])
    ok(students == sorted(("'" + n) if n[0] in "=+-@\t" else n for n in names),
       "gradebook: each such id kept as text behind a '", str(students))
    ok(all(r[2].isdigit() and r[3].isdigit() for r in rows3[1:]),
       "gradebook: the numbers stay numbers", str(rows3[1:3]))
    # Failed writes: exit 2, one message.
    for extra, want in [
            (["--gradebook", os.path.join(tmp, "nodir", "x.csv")], "--gradebook"),
            (["--feedback", book2], "--feedback")]:
        rc, out, err = grade(rubric("rc_pingpong"), rxe("rc_pingpong"), extra=extra)
        lines = [l for l in err.splitlines() if l.strip()]
        ok(rc == 2 and len(lines) == 1 and want in lines[0],
           "%s that cannot be written: exit 2, one message: %s" % (want, lines), err)
    rc, out, err = grade(rubric("rc_pingpong"), rxe("rc_pingpong"),
                         extra=["--student-pattern", "no group"])
    ok(rc == 2 and "has no group" in err, "--student-pattern without a group: exit 2", err)
finally:
    shutil.rmtree(tmp, ignore_errors=True)

finish()
