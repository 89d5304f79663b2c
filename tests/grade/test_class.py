#!/usr/bin/env python3
"""A class graded without losing a student (issue 33).

    test_class.py QPTRACE ROOT

1. A made class folder (top-level, gzip, zstd, pcapng, one folder per
   student, a TCP-only capture, a wrong lab, one student's copy of
   another's file, files that cannot be read, a text file): one gradebook
   row per submission with the outcome expected from the captures'
   manifests and from TShark, not from qptrace's own rules.
2. Each capture of captures/rxe whose manifest's command line is a shipped
   rubric's lab (its tool, and its [params] defaults) passes that rubric
   without --command; the variants pass with the manifest's command line.

The outcomes are derived independently: the tool and options from the
capture's manifest (captures/rxe/NAME.json), the TCP ports and RoCE
packets from TShark, the copies from hashlib, the files found from
os.walk.  Prints "N passed, N failed"; exits 1 when anything failed.
"""
import configparser
import csv
import hashlib
import html.parser
import json
import os
import shlex
import shutil
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
RXE = os.path.join(ROOT, "captures", "rxe")
PUBLIC = os.path.join(ROOT, "captures", "public")
if not os.path.isdir(PUBLIC):
    PUBLIC = "/work/shared/captures/public"

def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, timeout=300, **kw)


def grade(*args):
    p = run([QPTRACE, "grade"] + list(args))
    return p.returncode, p.stdout, p.stderr


def manifest(name):
    with open(os.path.join(RXE, name + ".json")) as f:
        return json.load(f)


def tshark(path, display_filter, field):
    p = run(["tshark", "-n", "-r", path, "-Y", display_filter, "-T", "fields", "-e", field])
    if p.returncode != 0:
        raise RuntimeError("tshark %s: %s" % (path, p.stderr))
    return [l for l in p.stdout.split("\n") if l]


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class Dom(html.parser.HTMLParser):
    """Cells by id and class, rows of the tables, links."""

    def __init__(self):
        super().__init__()
        self.ids, self.tables, self.links = {}, {}, []
        self.stack, self.table, self.row, self.cell = [], None, None, None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self.table = a.get("id")
            self.tables[self.table] = []
        elif tag == "tr" and self.table is not None:
            self.row = []
            self.tables[self.table].append(self.row)
        elif tag in ("td", "th") and self.row is not None:
            self.cell = [a.get("id"), a.get("class", ""), ""]
            self.row.append(self.cell)
        elif tag == "a" and "href" in a:
            self.links.append(a["href"])

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None:
            if self.cell[0]:
                self.ids[self.cell[0]] = self.cell[2].strip()
            self.cell = None
        elif tag == "table":
            self.table = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell[2] += data


def chromium_dom(path):
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        return None, "no chromium (tools/setup-deps installs Debian's package)"
    with tempfile.TemporaryDirectory() as prof:
        p = run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + prof,
                 "--dump-dom", "file://" + path])
    return (p.stdout if p.returncode == 0 and "<html" in p.stdout else None), p.stderr[-2000:]


def check_html(path, head, body, fbdir, doc):
    text, err = chromium_dom(path)
    ok(text is not None, "chromium --headless renders the class report", err)
    if text is None:
        return
    d = Dom()
    d.feed(text)
    col = {n: i for i, n in enumerate(head)}
    graded = [r for r in body if r[col["result"]] != "ERROR"]
    want = {"total-found": len(body), "total-graded": len(graded),
            "total-passed": sum(r[col["result"]] == "PASS" for r in body),
            "total-failed": sum(r[col["result"]] == "FAIL" for r in body),
            "total-unreadable": len(body) - len(graded), "total-copies": len(doc["copies"])}
    got = {k: int(d.ids.get(k, "-1")) for k in want}
    ok(got == want, "report totals as Chromium shows them = the gradebook's (%s)" % want, got)
    rows = [r for r in d.tables.get("gradebook", [])[1:]]
    shown = sorted((c[0][2], c[2][2], c[4][2]) for c in rows)
    csvrows = sorted((r[col["student"]], r[col["score"]], r[col["result"]]) for r in body)
    ok(shown == csvrows, "report gradebook: a row per submission, student, score and result "
       "as in the CSV (%d rows)" % len(csvrows), "%s\n%s" % (shown, csvrows))
    checks = head[col["result"] + 1:col["notes"]]
    rates = {r[0][2]: (int(r[2][2]), int(r[3][2]), r[4][2]) for r in d.tables.get("rates", [])[1:]}
    want_rates = {}
    for i, c in enumerate(checks):
        n = sum(1 for r in graded if r[col[c]] not in ("", "0"))
        want_rates[c] = (n, len(graded), "%d%%" % round(100.0 * n / len(graded)))
    ok(rates == want_rates, "report pass rate of each check = the gradebook's points > 0 "
       "over the graded rows", "%s\n%s" % (rates, want_rates))
    hist = [0] * 11
    for r in graded:
        hist[min(10, int(r[col["score"]]) * 10 // int(r[col["maximum"]]))] += 1
    shown_hist = [int(r[1][2]) for r in d.tables.get("scores", [])[1:]]
    ok(shown_hist == hist, "report score distribution (tenths of the maximum) = the gradebook's",
       "%s vs %s" % (shown_hist, hist))
    targets = sorted(os.path.normpath(os.path.join(os.path.dirname(path), l)) for l in d.links)
    ok(targets == sorted(os.path.join(fbdir, f) for f in os.listdir(fbdir)),
       "report links: one to each feedback file, each file there", targets)


# ---- 1. the made class folder --------------------------------------------

tmp = tempfile.mkdtemp(prefix="qpt-class-")
try:
    cls = os.path.join(tmp, "class")
    for d in ("alice", "bob/lab3", "frank", "ivan"):
        os.makedirs(os.path.join(cls, d))

    def rxe(n):
        return os.path.join(RXE, n + ".pcap")

    def put(rel, data):
        with open(os.path.join(cls, rel), "wb") as f:
            f.write(data)

    def read(path):
        with open(path, "rb") as f:
            return f.read()

    # carol: the lab itself (ibv_rc_pingpong -n 5 -s 1024), plain pcap
    shutil.copy(rxe("rc_pingpong"), os.path.join(cls, "carol.pcap"))
    # dave: the linlinw5 tutorial's run (-p 12345), gzip-compressed
    import gzip
    put("dave.pcap.gz", gzip.compress(read(os.path.join(PUBLIC, "linlinw5_pingpong_rc.pcap"))))
    # erin: the run with drops (-n 10), as pcapng (editcap)
    p = run(["editcap", "-F", "pcapng", rxe("rc_pingpong_drop"), os.path.join(cls, "erin.pcapng")])
    ok(p.returncode == 0, "editcap writes erin.pcapng", p.stderr)
    # alice (a folder of her own): the UC pingpong, the wrong lab
    shutil.copy(rxe("uc_pingpong"), os.path.join(cls, "alice", "submission.pcap"))
    # bob (nested): ib_write_bw, zstd-compressed
    p = run(["zstd", "-q", "-o", os.path.join(cls, "bob", "lab3", "capture.pcap.zst"),
             rxe("write_bw")])
    ok(p.returncode == 0, "zstd writes bob's capture", p.stderr)
    # frank: only the TCP of the lab (tcpdump's filter 'tcp')
    p = run(["tcpdump", "-r", rxe("rc_pingpong"), "-w", os.path.join(cls, "frank", "lab.pcap"),
             "tcp"])
    ok(p.returncode == 0, "tcpdump writes frank's TCP-only capture", p.stderr)
    # gina: carol's file, handed in again
    shutil.copy(os.path.join(cls, "carol.pcap"), os.path.join(cls, "gina.pcap"))
    # unreadable: text named .pcap, a link to nothing, a FIFO, a folder
    # nobody may list (root may list it anyway: then it holds nothing)
    put("hank.pcap", b"this is not a capture\n")
    os.symlink(os.path.join(tmp, "nowhere.pcap"), os.path.join(cls, "ivan", "lab.pcap"))
    os.mkfifo(os.path.join(cls, "judy.pcap"))
    put("notes.txt", b"not a submission\n")

    # what a walk finds (os.walk, not qptrace): every file but notes.txt
    found = sorted(os.path.relpath(os.path.join(d, f), cls)
                   for d, _, fs in os.walk(cls) for f in fs if f != "notes.txt")
    book = os.path.join(tmp, "book.csv")
    fbdir = os.path.join(tmp, "feedback")
    html = os.path.join(tmp, "report.html")
    rc, out, err = grade("--rubric", "rc_pingpong", "--gradebook", book, "--feedback", fbdir,
                         "--html", html, "--json", cls)
    ok(rc == 2, "class: exit 2 (files that cannot be read), got %d" % rc, err)
    try:
        doc = json.loads(out)
    except ValueError as e:
        doc = {"captures": [], "totals": {}, "copies": []}
        ok(False, "class --json parses", "%s\n%s" % (e, out[:3000]))
    with open(book, newline="") as f:
        rows = list(csv.reader(f, strict=True))
    head, body = rows[0], rows[1:]
    col = {n: i for i, n in enumerate(head)}
    byrel = {os.path.relpath(r[0], cls): r for r in body}
    ok(sorted(byrel) == found and len(body) == len(found),
       "gradebook: one row per submission found (%d), none missing" % len(found),
       "rows %s\nwant %s" % (sorted(byrel), found))
    students = {k: v[col["student"]] for k, v in byrel.items()}
    ok(students == {"alice/submission.pcap": "alice", "bob/lab3/capture.pcap.zst": "bob",
                    "carol.pcap": "carol", "dave.pcap.gz": "dave", "erin.pcapng": "erin",
                    "frank/lab.pcap": "frank", "gina.pcap": "gina", "hank.pcap": "hank",
                    "ivan/lab.pcap": "ivan", "judy.pcap": "judy"},
       "student ids: the folder of a one-folder-per-student layout, else the file name",
       students)
    result = {k: v[col["result"]] for k, v in byrel.items()}
    score = {k: v[col["score"]] for k, v in byrel.items()}

    # carol: the lab's own capture (manifest: ibv_rc_pingpong -n 5 -s 1024,
    # no -p: the tool's 18515) passes
    m = manifest("rc_pingpong")
    ok(m["tool"] == "ibv_rc_pingpong" and "-p" not in shlex.split(m["client"]["args"]),
       "carol's capture: the manifest's run has no -p (the tool's own port)")
    ok(result["carol.pcap"] == "PASS" and score["carol.pcap"] == "10",
       "carol (plain pcap of the lab): PASS 10/10", byrel["carol.pcap"])
    # dave: gzip read; the tutorial's TCP port, as TShark sees its SYN
    syn = tshark(os.path.join(PUBLIC, "linlinw5_pingpong_rc.pcap"),
                 "tcp.flags.syn == 1 && tcp.flags.ack == 0", "tcp.dstport")
    dave = [c for c in doc["captures"] if c["file"].endswith("dave.pcap.gz")]
    oob = [k for k in (dave[0]["checks"] if dave else []) if k["name"] == "oob_tcp"]
    ok(syn and oob and oob[0]["result"] == "fail" and
       ("TCP seen on port %s" % syn[0]) in oob[0]["reason"] and
       result["dave.pcap.gz"] == "FAIL" and score["dave.pcap.gz"] == "9",
       "dave (gzip): graded, 9/10, oob_tcp names the port TShark saw (%s)" % syn[:1],
       json.dumps(oob))
    # erin: pcapng read; the drops show as retransmissions (TShark: the same
    # PSN twice in one direction)
    psns = tshark(rxe("rc_pingpong_drop"), "infiniband.bth.opcode == 4",
                  "infiniband.bth.psn")
    resent = len(psns) - len(set(psns))
    erin = [c for c in doc["captures"] if c["file"].endswith("erin.pcapng")]
    nr = [k for k in (erin[0]["checks"] if erin else []) if k["name"] == "no_retransmissions"]
    ok(resent > 0 and nr and nr[0]["result"] == "fail" and result["erin.pcapng"] == "FAIL",
       "erin (pcapng of a run with drops, %d SEND PSNs seen twice by TShark): "
       "no_retransmissions fails" % resent, json.dumps(nr))
    # alice: the wrong lab, named
    ok(result["alice/submission.pcap"] == "FAIL" and
       "looks like ibv_uc_pingpong" in byrel["alice/submission.pcap"][col["notes"]],
       "alice (UC pingpong, in her folder): FAIL, the lab named (ibv_uc_pingpong, from "
       "the manifest's tool %s)" % manifest("uc_pingpong")["tool"],
       byrel["alice/submission.pcap"])
    ok("ibv_uc_pingpong" in manifest("uc_pingpong")["tool"], "alice's manifest tool is UC")
    # bob: zstd, nested two folders down, ib_write_bw named
    ok(result["bob/lab3/capture.pcap.zst"] == "FAIL" and
       "looks like ib_write_bw" in byrel["bob/lab3/capture.pcap.zst"][col["notes"]],
       "bob (zstd, bob/lab3/): FAIL, the lab named (%s)" % manifest("write_bw")["tool"],
       byrel["bob/lab3/capture.pcap.zst"])
    # frank: TCP only (TShark: no RoCE); no RoCE check passes
    roce = tshark(os.path.join(cls, "frank", "lab.pcap"), "udp.port == 4791", "frame.number")
    frank = [c for c in doc["captures"] if c["file"].endswith("frank/lab.pcap")]
    fchecks = frank[0]["checks"] if frank else []
    passing = [k["name"] for k in fchecks if k["result"] == "pass"]
    ok(not roce and frank and passing == ["oob_tcp"] and
       all(k["result"] == "not-checked" for k in fchecks if k["kind"] != "oob_tcp"),
       "frank (TCP only, TShark: 0 RoCE frames): every RoCE check NOT-CHECKED, only "
       "oob_tcp passes", json.dumps(fchecks, indent=1)[:2000])
    ok(frank and frank[0].get("fix_first", {}).get("check") is None and
       "udp port 4791" in frank[0].get("fix_first", {}).get("what", ""),
       "frank: one root cause, with what to do (capture udp port 4791)",
       json.dumps(frank[0].get("fix_first") if frank else None))
    ok(score["frank/lab.pcap"] == "1" and result["frank/lab.pcap"] == "FAIL",
       "frank: 1/10 (the TCP check only)", byrel["frank/lab.pcap"])
    # gina and carol: the same bytes (hashlib), named in both rows
    same = sha(os.path.join(cls, "gina.pcap")) == sha(os.path.join(cls, "carol.pcap"))
    ok(same and "copy" in byrel["gina.pcap"][col["notes"]] and
       "carol.pcap" in byrel["gina.pcap"][col["notes"]] and
       "gina.pcap" in byrel["carol.pcap"][col["notes"]],
       "copy: gina's file is carol's (same SHA-256), flagged in both rows",
       "%s\n%s" % (byrel["gina.pcap"], byrel["carol.pcap"]))
    copies = [sorted(os.path.relpath(f, cls) for f in c["files"]) for c in doc["copies"]]
    ok(copies == [["carol.pcap", "gina.pcap"]],
       "copies: that pair and no other (no student's different run flagged)", copies)
    # the ones that cannot be read: ERROR rows with the reason
    for rel, why in [("hank.pcap", "unknown file format"),
                     ("ivan/lab.pcap", "No such file"),
                     ("judy.pcap", "not a regular file")]:
        r = byrel.get(rel, [""] * len(head))
        ok(r[col["result"]] == "ERROR" and why in r[col["notes"]] and r[col["score"]] == "",
           "%s cannot be read: an ERROR row (%s)" % (rel, why), r)
    t = doc["totals"]
    ok(t.get("found") == len(found) and t.get("graded") == 7 and t.get("unreadable") == 3
       and t.get("not_captures") == 1 and t.get("copies") == 1,
       "totals: %d found, 7 graded, 3 unreadable, 1 other file, 1 copy" % len(found), t)
    rc, out, err = grade("--rubric", "rc_pingpong", "-q", cls)
    ok("found 10 submissions: 7 graded, 3 that could not be read; 1 other file not graded "
       "(not a capture): %s" % os.path.join(cls, "notes.txt") in out,
       "text totals: found, graded, unreadable, the other file named", out[-600:])
    # feedback: one file per student, named by student
    fb = sorted(os.listdir(fbdir))
    ok(fb == sorted(s + ".txt" for s in students.values()),
       "feedback: one file per student, named by the student id", fb)
    with open(os.path.join(fbdir, "alice.txt")) as f:
        alice = f.read()
    start = alice.find("START HERE")
    first_check = min(alice.find("  FAIL  "), alice.find("  PASS  "))
    ok(0 <= start < first_check and "look at frames" in alice,
       "feedback: the fix first (START HERE before the checks), with the frames to look at",
       alice)
    gloss = alice[alice.find("words used above:"):]
    ok("words used above:" in alice and all(("  %s: " % w) in gloss for w in ("QP", "UC", "RC"))
       and "  AETH: " not in gloss,
       "feedback: a glossary line per term used (QP, UC, RC), none for a term not used (AETH)",
       gloss)
    with open(os.path.join(fbdir, "gina.txt")) as f:
        ok("COPY" in f.read(), "feedback: gina's says it is a copy")
    # the class report, as headless Chromium renders it (its DOM after
    # parsing), against the gradebook CSV read by Python
    check_html(html, head, body, fbdir, doc)
    # the student id from a pattern on the path below the class folder
    rc, out, err = grade("--rubric", "rc_pingpong", "--json", "-q",
                         "--student-pattern", r"^(?:bob/)?([a-z0-9]+)", cls)
    try:
        ids = {os.path.relpath(c["file"], cls): c["student"] for c in json.loads(out)["captures"]}
    except ValueError:
        ids = {}
    ok(ids.get("bob/lab3/capture.pcap.zst") == "lab3" and ids.get("carol.pcap") == "carol",
       "--student-pattern matches the path below the class folder (bob/lab3/... -> lab3)", ids)
    # a student id that is markup is shown as text in the report
    odd = os.path.join(tmp, "odd")
    os.makedirs(os.path.join(odd, '<b title="x">eve & co'))
    shutil.copy(rxe("rc_pingpong"), os.path.join(odd, '<b title="x">eve & co', "lab.pcap"))
    page = os.path.join(tmp, "odd.html")
    grade("--rubric", "rc_pingpong", "-q", "--html", page, odd)
    text, err = chromium_dom(page)
    d = Dom()
    d.feed(text or "")
    cells = [r[0][2] for r in d.tables.get("gradebook", [])[1:]]
    ok(cells == ['<b title="x">eve & co'] and "<b title" not in (text or ""),
       "report: a student id with markup is shown as text, not as markup", cells)
    # two students' files of the same name get different feedback files
    two = os.path.join(tmp, "two")
    for s in ("s1", "s2"):
        os.makedirs(os.path.join(two, s))
        shutil.copy(rxe("rc_pingpong"), os.path.join(two, s, "lab3.pcap"))
    fb2 = os.path.join(tmp, "fb2")
    grade("--rubric", "rc_pingpong", "--feedback", fb2, "-q", two)
    ok(sorted(os.listdir(fb2)) == ["s1.txt", "s2.txt"],
       "the same file name in two students' folders: s1.txt and s2.txt",
       os.listdir(fb2))
finally:
    shutil.rmtree(tmp, ignore_errors=True)

# ---- 2. the rxe captures of a shipped rubric's lab ------------------------

OPTS = {"-n": "iterations", "-C": "iterations", "-s": "size", "-S": "size", "-A": "atomic"}


def run_of(m):
    """The lab parameters of a manifest's client command line."""
    a = shlex.split(m["client"]["args"])
    got = {"atomic": "FETCH_ADD", "rdma_cm": "-R" in a}
    for i, x in enumerate(a[:-1]):
        if x in OPTS:
            got[OPTS[x]] = a[i + 1].replace("CMP_AND_SWAP", "CMP_SWAP")
    return got


labs = []
for f in sorted(os.listdir(RUBRICS)):
    if not f.endswith(".ini"):
        continue
    cp = configparser.ConfigParser(interpolation=None, strict=False, comment_prefixes=("#",))
    cp.read(os.path.join(RUBRICS, f))
    if not cp.has_option("rubric", "tool"):
        continue
    params = dict(cp.items("params")) if cp.has_section("params") else {}
    labs.append((f[:-4], cp.get("rubric", "tool"), params,
                 "--rdma_cm" in cp.get("rubric", "name")))

nlab = nvar = 0
for f in sorted(os.listdir(RXE)):
    if not f.endswith(".json"):
        continue
    name = f[:-5]
    m = manifest(name)
    got = run_of(m)
    for rname, tool, params, rdma_cm in labs:
        if tool != m["tool"] or rdma_cm != got["rdma_cm"]:
            continue
        same = all(got.get(k, v) == v for k, v in params.items()
                   if k in ("iterations", "size", "atomic"))
        impaired = bool(m.get("impairment"))
        if same and not impaired:
            nlab += 1
            rc, out, err = grade("--rubric", rname, os.path.join(RXE, name + ".pcap"))
            ok(rc == 0 and "PASS" in out.split("totals")[-1],
               "rxe %s (%s %s) passes %s without --command" % (name, m["tool"],
                                                                m["client"]["args"], rname),
               out + err)
        elif not impaired:
            nvar += 1
            cmd = m["tool"] + " " + m["client"]["args"]
            rc, out, err = grade("--rubric", rname, "--command", cmd, "-q",
                                 os.path.join(RXE, name + ".pcap"))
            ok(rc == 0, "rxe %s passes %s with --command '%s'" % (name, rname, cmd), out + err)
ok(nlab >= 10, "%d rxe captures are a shipped rubric's lab (10 expected at least: every "
   "rubric with a tool= but read_lat has one)" % nlab)
ok(nvar >= 3, "%d rxe captures are variants of a lab (3 expected at least)" % nvar)

# ---- 3. --lint and --init-from -------------------------------------------

tmp = tempfile.mkdtemp(prefix="qpt-lint-")
try:
    for f in sorted(os.listdir(RUBRICS)):
        if f.endswith(".ini"):
            rc, out, err = grade("--lint", os.path.join(RUBRICS, f))
            ok(rc == 0 and out.rstrip().endswith("0 problems"),
               "--lint %s: 0 problems (exit %d)" % (f, rc), out + err)
    lint = os.path.join(tmp, "lint.ini")
    with open(lint, "w") as f:
        f.write("[rubric]\nname=lint me\n"
                "[check any_sends]\nkind=ops\nop=SEND\nmin_count=0\n"
                "[check ud_read]\nkind=ops\ntransport=UD\nop=READ\n"
                "[check after]\nkind=acks\nrequires=ud_read\n"
                "[check tiny]\nkind=ops\nop=WRITE\nsize=100\nmin_packets_per_message=3\n"
                "[check fine]\nkind=no_retransmissions\n")
    rc, out, err = grade("--lint", lint)
    ok(rc == 1 and (lint + ":3: check any_sends can never fail") in out
       and (lint + ":7: check ud_read can never pass") in out
       and (lint + ":11: check after can never pass: it requires ud_read") in out
       and (lint + ":14: check tiny can never pass") in out
       and "fine" not in out and "4 problems" in out,
       "--lint: a check that can never fail, three that can never pass, each with its line",
       out + err)
    # the claims hold on real traffic: any_sends passes on every rxe capture
    # with RoCE in it, ud_read on none
    caps = sorted(os.path.join(RXE, f) for f in os.listdir(RXE) if f.endswith(".pcap"))
    rc, out, err = grade("--rubric", lint, "--json", "-q", *caps)
    doc = json.loads(out)
    res = [{k["name"]: k["result"] for k in c["checks"]} for c in doc["captures"]]
    ok(res and all(r["any_sends"] == "pass" for r in res)
       and all(r["ud_read"] != "pass" for r in res),
       "--lint's claims hold on the %d rxe captures: any_sends always passes, ud_read never"
       % len(res), res[:3])
    bad = os.path.join(tmp, "bad.ini")
    with open(bad, "w") as f:
        f.write("[rubric]\nname=x\n[check a]\nkind=ops\nop=WRITE\nmin_count=${nope}\n")
    rc, out, err = grade("--lint", bad)
    ok(rc == 2 and (bad + ":6:") in err and "nope" in err,
       "--lint: an unknown parameter is an error with its line, exit 2", err)

    # --init-from: passes its reference, fails every other capture of
    # captures/rxe (the references: the runs without drops or RNR retries,
    # whose manifests say so; a rubric cannot ask for retransmissions)
    allcaps = sorted(os.path.join(d, f) for d, _, fs in os.walk(RXE) for f in fs
                     if f.endswith(".pcap"))
    refs = []
    for f in sorted(os.listdir(RXE)):
        if f.endswith(".json"):
            m = manifest(f[:-5])
            if not m.get("impairment") and "RNR" not in m["client"]["args"]:
                refs.append(os.path.join(RXE, f[:-5] + ".pcap"))
    bad_refs = []
    for ref in refs:
        p = run([QPTRACE, "grade", "--init-from", ref])
        path = os.path.join(tmp, "init.ini")
        with open(path, "w") as f:
            f.write(p.stdout)
        rc, out, err = grade("--rubric", path, "--json", "-q", *allcaps)
        try:
            got = [c["file"] for c in json.loads(out)["captures"] if c["result"] == "pass"]
        except ValueError:
            got = ["(no JSON: %s)" % err.strip()]
        if p.returncode != 0 or got != [ref]:
            bad_refs.append((os.path.basename(ref), got, p.stderr))
    ok(len(refs) >= 20 and not bad_refs,
       "--init-from each of %d rxe references: its rubric passes the reference and fails the "
       "other %d captures" % (len(refs), len(allcaps) - 1), bad_refs)
    # with --command: the numbers the command sets become parameters
    m = manifest("rc_pingpong_50x4096")
    p = run([QPTRACE, "grade", "--init-from", os.path.join(RXE, "rc_pingpong_50x4096.pcap"),
             "--command", m["tool"] + " " + m["client"]["args"]])
    path = os.path.join(tmp, "init50.ini")
    with open(path, "w") as f:
        f.write(p.stdout)
    ok("min_count=${iterations}*2" in p.stdout and "size=${size}" in p.stdout
       and "tool=ibv_rc_pingpong" in p.stdout,
       "--init-from --command: the rubric's counts and sizes are the command's parameters",
       p.stdout + p.stderr)
    for name in ("rc_pingpong", "rc_pingpong_2k"):
        mm = manifest(name)
        rc, out, err = grade("--rubric", path, "--command", mm["tool"] + " " + mm["client"]["args"],
                             os.path.join(RXE, name + ".pcap"))
        ok(rc == 0, "the rubric made from rc_pingpong_50x4096 grades %s (%s) with its --command"
           % (name, mm["client"]["args"]), out + err)
finally:
    shutil.rmtree(tmp, ignore_errors=True)

finish()
