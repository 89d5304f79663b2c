#!/usr/bin/env python3
"""Tests for `qptrace grade` and the rubrics shipped in rubrics/.

    test_grade.py QPTRACE ROOT

QPTRACE is the qptrace binary, ROOT the repository root.  Captures are taken
from ROOT/captures/public, or /work/shared/captures/public when the repo has
none.  Python 3 standard library only.  Prints "N passed, N failed" and
exits 1 when anything failed.
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

if len(sys.argv) != 3:
    sys.exit(__doc__)
QPTRACE = os.path.abspath(sys.argv[1])
ROOT = os.path.abspath(sys.argv[2])
RUBRICS = os.path.join(ROOT, "rubrics")
CAPS = os.path.join(ROOT, "captures", "public")
if not os.path.isdir(CAPS):
    CAPS = "/work/shared/captures/public"

passed = 0
failed = 0


def ok(cond, what, detail=""):
    global passed, failed
    if cond:
        passed += 1
        print("ok   " + what)
    else:
        failed += 1
        print("FAIL " + what)
        if detail:
            for line in detail.rstrip("\n").split("\n")[:40]:
                print("     | " + line)


def cap(name):
    return os.path.join(CAPS, "linlinw5_" + name + ".pcap")


def rubric(name):
    return os.path.join(RUBRICS, name + ".ini")


def grade(rubric_path, *files, json_out=False):
    args = [QPTRACE, "grade", "--rubric", rubric_path]
    if json_out:
        args.append("--json")
    p = subprocess.run(args + list(files), capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def graded_json(rubric_path, *files):
    rc, out, err = grade(rubric_path, *files, json_out=True)
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
shipped = sorted(f[:-4] for f in os.listdir(RUBRICS) if f.endswith(".ini"))
ok(set(shipped) == set(r for r, _ in MATCH),
   "every shipped rubric has a matching capture in this test",
   "shipped: %s" % shipped)
for r, c in MATCH:
    rc, out, err = grade(rubric(r), cap(c))
    ok(rc == 0 and "FAIL" not in out and "score" in out,
       "%s passes on %s (exit %d)" % (r, c, rc), out + err)

# ---- 2. mismatched captures fail with the right reasons -------------------

# (rubric, capture, {check: [substrings its reason must contain]})
MISMATCH = [
    ("uc_pingpong", "pingpong_rc", {
        "transport": ["transport RC present, expected only UC"],
        "no_acks": ["ACKs present", "RC ACK"],
        "send_messages": ["0 UC SEND messages", "10 RC SEND"]}),
    ("uc_pingpong", "pingpong_ud", {
        "transport": ["transport UD present, expected only UC"]}),
    ("rc_pingpong", "pingpong_uc", {
        "transport": ["transport UC present, expected only RC"],
        "acks": ["no ACK", "expected ACKs"]}),
    ("ud_pingpong", "pingpong_rc", {
        "transport": ["transport RC present, expected only UD"],
        "deth": ["no UD packet with a DETH"],
        "no_acks": ["ACKs present"]}),
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
        ok(res == "fail" and all(s in reason for s in subs),
           "%s on %s: %s fails: %s" % (r, c, name, reason),
           "expected FAIL with %r" % subs)

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
           and doc["totals"] == {"captures": 4, "passed": 1, "failed": 2, "errors": 1},
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
finally:
    shutil.rmtree(tmp, ignore_errors=True)

print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
