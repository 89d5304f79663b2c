#!/usr/bin/env python3
"""End-to-end tests of the qptrace Wireshark plugin (roce.so) against tshark.

    test_plugin.py --plugin build/dissector/roce.so --qptrace build/analyzer/qptrace \
                   --captures captures [extra.pcap ...]

The plugin is copied into the personal plugin folder of a temporary HOME.
Wireshark ignores personal plugins (and WIRESHARK_PLUGIN_DIR) when it runs
as root, so as root tshark runs as `nobody` through setpriv, with that HOME;
nothing is ever installed into the system plugin folder.

Checks, for every capture in captures/public/*.pcap and captures/made/*.pcap
(globbed at run time) plus a source-port-69 capture written here:
  * every frame `qptrace packets --json` decodes is dissected as `roce`, with
    the same field values (BTH, RETH, AETH, DETH, ImmDt, IETH, AtomicETH,
    AtomicAckETH, CM, ICRC, LRH);
  * no _ws.malformed on frames the CLI calls well-formed;
  * roce.analysis.* flags sit on exactly the frames `qptrace events --json`
    names, in the same conversation (roce.stream);
  * `tshark -z roce,qp` equals `qptrace summary --json`, every cell of
    every row, on every capture under captures/ (with the one-meaning
    check's tshark run), and summary's text table says the same; the
    stat is registered (`tshark -z help`; the GUI table via
    register_stat_tap_table_ui);
  * `tshark -2` gives the same analysis as one pass;
  * superset: the same tshark without the plugin shows nothing the plugin
    loses, on every capture under captures/ (infiniband frames, their BTH
    destqp/psn/opcode, every layer, the upper layers of captures/rxe/ulp),
    -G heuristic-decodes, no dissector bug over random SENDs (-2 too);
  * the colouring rules: profile RoCE installed, filters compile, frames
    coloured by the first rule that matches (tshark -C RoCE --color).
--part decode runs the checks up to the colouring rules (fields, verdicts,
stats, findings of each capture) and the one-meaning check, --part corpus
the others over the whole corpus (compact tree, colouring rules,
superset, two passes of random SENDs, upper layers); meson runs the two as two tests
(wireshark-plugin, wireshark-plugin-corpus) so that they share the cores.
Without --part, both.
Prints "N passed, N failed" and exits 1 on any failure.
"""
import argparse
import glob
import hashlib
import json
import os
import re
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

PASS = 0
FAIL = 0
SKIP = 0
BARE = None  # the same tshark without the plugin (an Env), set by main()


def ok(name):
    global PASS
    PASS += 1
    print(f"ok   {name}")


def fail(name, why):
    global FAIL
    FAIL += 1
    print(f"FAIL {name}: {why}")


def skip(name, why):
    global SKIP
    SKIP += 1
    print(f"skip {name}: {why}")


class Env:
    """A temporary HOME with the plugin, and the way to run tshark in it."""

    def __init__(self, plugin, ws_version):
        self.home = tempfile.mkdtemp(prefix="roce-plugin-test-")
        os.chmod(self.home, 0o755)
        # the personal plugin folder of the major.minor the plugin was built for
        pdir = os.path.join(self.home, f".local/lib/wireshark/plugins/{ws_version}/epan")
        os.makedirs(pdir)
        if plugin:  # None: the same tshark without the plugin (superset checks)
            shutil.copy(plugin, os.path.join(pdir, "roce.so"))
        self.caps = os.path.join(self.home, "captures")
        os.makedirs(self.caps)
        self.root = os.geteuid() == 0
        self.prefix = []
        if self.root:
            self.prefix = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]

    def fix_owner(self):
        if not self.root:
            return
        for d, dirs, files in os.walk(self.home):
            for n in [d] + [os.path.join(d, f) for f in dirs + files]:
                os.chown(n, 65534, 65534)
                os.chmod(n, 0o755 if os.path.isdir(n) else 0o644)

    def add_capture(self, path, name=None):
        dst = os.path.join(self.caps, name or os.path.basename(path))
        shutil.copy(path, dst)
        return dst

    def tshark(self, args):
        env = dict(os.environ, HOME=self.home)
        env.pop("WIRESHARK_PLUGIN_DIR", None)
        env.pop("WIRESHARK_CONFIG_DIR", None)
        p = subprocess.run(self.prefix + ["tshark"] + args, cwd=self.home, env=env,
                           capture_output=True, text=True)
        return p.returncode, p.stdout, p.stderr

    def cleanup(self):
        shutil.rmtree(self.home, ignore_errors=True)


# ---- field comparison --------------------------------------------------------

CM_IDS = {"ClassPortInfo": 0x01, "REQ": 0x10, "MRA": 0x11, "REJ": 0x12, "REP": 0x13,
          "RTU": 0x14, "DREQ": 0x15, "DREP": 0x16, "SIDR_REQ": 0x17, "SIDR_REP": 0x18,
          "LAP": 0x19, "APR": 0x1a}

# (tshark field, function of the CLI JSON record giving the expected value or None)
def g(*path, conv=None):
    def f(rec):
        x = rec
        for k in path:
            if not isinstance(x, dict) or k not in x:
                return None
            x = x[k]
        if conv:
            x = conv(x)
        if isinstance(x, bool):
            x = int(x)
        return x
    return f


def icrc_status(rec):
    if "icrc" not in rec:
        return None
    if "ok" not in rec["icrc"]:
        return 2
    return 1 if rec["icrc"]["ok"] else 0


COMPARE = [
    ("roce.bth.opcode", g("bth", "opcode")),
    ("roce.bth.dqpn", g("bth", "dqpn")),
    ("roce.bth.psn", g("bth", "psn")),
    ("roce.bth.ackreq", g("bth", "ackreq")),
    ("roce.bth.pkey", g("bth", "pkey")),
    ("roce.bth.se", g("bth", "se")),
    ("roce.bth.padcnt", g("bth", "pad")),
    ("roce.bth.fecn", g("bth", "fecn")),
    ("roce.bth.becn", g("bth", "becn")),
    ("roce.reth.va", g("reth", "va")),
    ("roce.reth.rkey", g("reth", "rkey")),
    ("roce.reth.dmalen", g("reth", "dmalen")),
    ("roce.aeth.syndrome", g("aeth", "syndrome")),
    ("roce.aeth.msn", g("aeth", "msn")),
    ("roce.deth.qkey", g("deth", "qkey")),
    ("roce.deth.sqpn", g("deth", "sqpn")),
    ("roce.immdt", g("immdt")),
    ("roce.ieth", g("ieth")),
    ("roce.atomiceth.va", g("atomiceth", "va")),
    ("roce.atomiceth.rkey", g("atomiceth", "rkey")),
    ("roce.atomiceth.swap", g("atomiceth", "swap")),
    ("roce.atomiceth.compare", g("atomiceth", "compare")),
    ("roce.atomicacketh.orig", g("atomicacketh", "orig")),
    ("roce.xrceth.srq", g("xrceth", "srq")),
    ("roce.rdeth.eecnxt", g("rdeth", "eecnxt")),
    ("roce.mad.mgmt_class", g("mad", "mgmt_class")),
    ("roce.mad.method", g("mad", "method")),
    ("roce.mad.attr_id", g("mad", "attr_id")),
    ("roce.mad.tid", g("mad", "tid")),
    ("roce.cm.msg", g("cm", "msg", conv=lambda n: CM_IDS.get(n))),
    ("roce.cm.local_comm_id", g("cm", "local_comm_id")),
    ("roce.cm.local_qpn", g("cm", "local_qpn")),
    ("roce.cm.starting_psn", g("cm", "starting_psn")),
    ("roce.icrc", g("icrc", "value")),
    ("roce.icrc.status", icrc_status),
    ("roce.vcrc", g("vcrc", "value")),
    ("roce.lrh.dlid", g("lrh", "dlid")),
    ("roce.lrh.slid", g("lrh", "slid")),
    ("roce.lrh.pktlen", g("lrh", "pktlen")),
    ("roce.grh.paylen", g("grh", "paylen")),
    ("roce.grh.nxthdr", g("grh", "nxthdr")),
    ("roce.payload_len", g("payload_len")),
]

# ---- the engine's tables (analyzer/qpt_verdict.h) ------------------------------

PI_GROUP = {"SEQUENCE": 0x02000000, "CHECKSUM": 0x01000000, "MALFORMED": 0x07000000,
            "RESPONSE_CODE": 0x03000000, "PROTOCOL": 0x09000000}
PI_SEVERITY = {"CHAT": 0x00200000, "NOTE": 0x00400000, "WARN": 0x00600000,
               "ERROR": 0x00800000}
# The decoder's findings: their expert infos sit on the ICRC/error items
# (roce.icrc.bad, roce.malformed, roce.truncated), not repeated.
DECODE_GROUPS = ("CHECKSUM", "MALFORMED")


def c_args(body):
    """The arguments of one X(...) row: C strings (adjacent literals joined),
    NULL as None, identifiers as str."""
    out = []
    for m in re.finditer(r'\s*((?:"(?:[^"\\]|\\.)*"\s*)+|[A-Za-z_0-9]+)\s*(?:,|$)', body):
        tok = m.group(1).strip()
        if tok.startswith('"'):
            out.append("".join(re.findall(r'"((?:[^"\\]|\\.)*)"', tok)))
        else:
            out.append(None if tok == "NULL" else tok)
    return out


def macro_rows(src, name):
    src = src.replace("\\\n", " ")
    m = re.search(r"#define " + name + r"\(X\)(.*?)\n", src)
    if not m:
        raise SystemExit(f"{name} not found in qpt_verdict.h")
    body = re.sub(r"/\*.*?\*/", "", m.group(1))
    rows, depth, start, in_str = [], 0, None, False
    for i, ch in enumerate(body):
        if ch == '"' and body[i - 1] != "\\":
            in_str = not in_str
        if in_str:
            continue
        if ch == "(":
            depth += 1
            if depth == 1:
                start = i + 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                rows.append(c_args(body[start:i]))
    return rows


def load_tables(path):
    """qpt_verdicts[] rows (key, label, expert, group, severity, info, value)
    and qpt_counters[] rows (field, key, label, column), as the C does."""
    with open(path) as f:
        src = f.read()
    verdicts = [dict(id=r[0], key=r[1], label=r[2], expert=r[3], group=r[4],
                     severity=r[5], info=r[6], value=r[7], count_key=r[8], code=r[9],
                     in_plugin=r[13] != "false")
                for r in macro_rows(src, "QPT_VERDICTS")]
    # a -z roce,qp column is titled with the row label's words (summary --long)
    counters = [dict(field=r[0], key=r[1], label=r[2],
                     column=r[2].rstrip(":") if r[3] == "true" else None)
                for r in macro_rows(src, "QPT_DIR_COUNTERS")]
    if len(verdicts) < 10 or len(counters) < 10:
        raise SystemExit(f"{path}: could not read the verdict/counter tables")
    return verdicts, counters


VERDICTS = []   # filled in main()
COUNTERS = []
EVENT_FIELDS = {}
VALUE_FIELDS = {}  # key -> the field of the value a verdict carries
ANALYSIS_FIELDS = []
DETAIL_FIELDS = [
    "roce.analysis.retransmitted_frame", "roce.analysis.duplicate_of",
    "roce.analysis.psn_gap.first", "roce.analysis.gbn_trigger",
    "roce.analysis.gbn_trigger_frame", "roce.analysis.acks_frame",
    "roce.analysis.ack_rtt", "roce.analysis.read_response_to", "roce.message.length",
    "roce.message.packets", "roce.message.first_frame"]


def value_field(v):
    """The field of the value a verdict carries, named as events --json
    names it (missing PSNs: "missing", a REJ reason: "reason"; a go-back-N
    episode's number: "number"), None for a flag: as TCP's analysis, the
    verdict's own name is its expert info's."""
    suffix = {"COUNT": v["count_key"], "EPISODE": "number",
              "CODE": "reason" if v["code"] == "REASON" else None}.get(v["value"])
    return f"roce.analysis.{v['key']}.{suffix}" if suffix else None


def set_tables(path):
    global VERDICTS, COUNTERS, EVENT_FIELDS, VALUE_FIELDS, ANALYSIS_FIELDS
    VERDICTS, COUNTERS = load_tables(path)
    EVENT_FIELDS = {v["key"]: "roce.analysis." + v["key"] for v in VERDICTS}
    VALUE_FIELDS = {v["key"]: value_field(v) for v in VERDICTS if value_field(v)}
    ANALYSIS_FIELDS = (["roce.stream", "roce.direction"] + list(EVENT_FIELDS.values()) +
                       list(VALUE_FIELDS.values()) + DETAIL_FIELDS)


def required_fields():
    return (
    [c[0] for c in COMPARE] + ANALYSIS_FIELDS +
    ["roce.lrh.vl", "roce.lrh.lnh", "roce.grh.sgid", "roce.grh.dgid", "roce.bth.m",
     "roce.bth.tver", "roce.aeth.kind", "roce.aeth.credits", "roce.aeth.rnr_timer",
     "roce.aeth.nak_code", "roce.icrc.bad", "roce.mad.base_version",
     "roce.cm.remote_comm_id", "roce.cm.service_id", "roce.cm.path_mtu",
     "roce.analysis.acked_by"])


def parse_num(s):
    s = s.strip()
    if s == "":
        return None
    if s in ("True", "False"):
        return int(s == "True")
    try:
        return int(s, 0)
    except ValueError:
        try:
            return float(s)
        except ValueError:
            return s


def tshark_fields(env, cap, fields, extra=()):
    args = list(extra) + ["-r", cap, "-T", "fields", "-E", "occurrence=f",
                          "-E", "separator=\t", "-e", "frame.number",
                          "-e", "frame.protocols", "-e", "_ws.malformed", "-e", "roce"]
    for f in fields:
        args += ["-e", f]
    rc, out, err = env.tshark(args)
    if rc != 0:
        return None, err.strip().splitlines()[-1] if err.strip() else f"rc {rc}"
    rows = {}
    for line in out.splitlines():
        parts = line.split("\t")
        parts += [""] * (4 + len(fields) - len(parts))
        n = int(parts[0])
        # roce is a post-dissector: frame.protocols (made before it runs)
        # does not list it; its protocol item says it is there
        protos = parts[1].split(":") + (["roce"] if parts[3] else [])
        rows[n] = {"protocols": protos, "malformed": parts[2] != ""}
        for f, v in zip(fields, parts[4:]):
            rows[n][f] = v
    return rows, None


def run_qptrace(qptrace, args):
    p = subprocess.run([qptrace] + args, capture_output=True, text=True)
    return p.returncode, p.stdout


# ---- per capture ---------------------------------------------------------------

def check_capture(env, qptrace, cap, label, stats=True):
    rc, out = run_qptrace(qptrace, ["packets", "--json", cap])
    if rc != 0 and not out:
        skip(label, "qptrace cannot read it")
        return
    cli = {}
    for line in out.splitlines():
        r = json.loads(line)
        if r.get("transport") == "MAC-control":
            continue  # PFC/PAUSE: Wireshark's macc decodes them (check_pfc)
        cli[r["frame"]] = r
    fields = [c[0] for c in COMPARE] + ANALYSIS_FIELDS
    rows, err = tshark_fields(env, cap, fields)
    if rows is None:
        skip(label, f"tshark cannot read it ({err})")
        return

    # 1. every CLI frame is roce, with the same values
    bad = []
    for n, rec in sorted(cli.items()):
        row = rows.get(n)
        if row is None or "roce" not in row["protocols"]:
            bad.append(f"frame {n} not dissected as roce ({row and ':'.join(row['protocols'])})")
            continue
        for field, get in COMPARE:
            exp = get(rec)
            got = parse_num(row[field])
            if exp != got:
                bad.append(f"frame {n} {field}: tshark {got!r}, qptrace {exp!r}")
    if bad:
        fail(f"{label}: fields", f"{len(bad)} mismatches; first: " + "; ".join(bad[:4]))
    else:
        ok(f"{label}: {len(cli)} frames dissected as roce with equal fields")

    # 2. no _ws.malformed on well-formed frames, but for the built-in
    # dissectors' own (the same tshark without the plugin has them too)
    bad = [n for n, rec in cli.items() if "malformed" not in rec and rows[n]["malformed"]]
    theirs = set()
    if bad and BARE:
        rc, out, err = BARE.tshark(["-r", cap, "-Y", "_ws.malformed", "-T", "fields", "-e", "frame.number"])
        theirs = {int(x) for x in out.split()}
        bad = [n for n in bad if n not in theirs]
    if bad:
        fail(f"{label}: malformed", f"_ws.malformed on well-formed frames {sorted(bad)[:10]}")
    else:
        ok(f"{label}: no _ws.malformed on well-formed frames" +
           (f" (but {len(theirs)} the built-in dissectors mark without the plugin too)" if theirs else ""))

    # 3. analysis flags on exactly the frames qptrace events names (two
    # passes: a verdict the engine revised once a later packet came is on
    # its frame there; one pass printed that frame before, see 4.)
    rows1 = rows
    rows, err = two_pass_first(env, cap, ANALYSIS_FIELDS)
    if rows is None:
        fail(f"{label}: -2", err)
        return
    rc, out = run_qptrace(qptrace, ["events", "--json", cap])
    # kinds the table marks as not the plugin's (ip_fragment: Wireshark
    # reassembles the fragments; the plugin sees the whole RoCE packet)
    want = {v["key"]: {} for v in VERDICTS if v["in_plugin"]}
    for line in out.splitlines():
        ev = json.loads(line)
        if ev["kind"] in want:
            want[ev["kind"]][ev["frame"]] = ev["conv"]
    bad = []
    nflags = 0
    for kind, field in EVENT_FIELDS.items():
        have = {n for n, r in rows.items() if r[field] not in ("", "0")}
        exp = set(want.get(kind, {}))  # none for kinds not the plugin's
        nflags += len(exp)
        if have != exp:
            bad.append(f"{kind}: tshark {sorted(have - exp)[:6]} extra, {sorted(exp - have)[:6]} missing")
        decode = any(v["key"] == kind and v["group"] in DECODE_GROUPS for v in VERDICTS)
        for n, conv in want.get(kind, {}).items():
            if decode:
                break  # emitted before the packet is placed in a conversation
            if n in rows and parse_num(rows[n]["roce.stream"]) != (conv if conv >= 0 else None):
                bad.append(f"{kind} frame {n}: roce.stream {rows[n]['roce.stream']!r}, events conv {conv}")
    if bad:
        fail(f"{label}: analysis", "; ".join(bad[:4]))
    else:
        ok(f"{label}: analysis flags match qptrace events ({nflags} events)")

    # 4. one pass gives the same analysis as two, but on frames whose verdict
    # a later packet revised: one pass printed them before, without it
    bad, revised = [], []
    for n in rows:
        diff = {f: (rows1.get(n, {}).get(f, ""), rows[n][f]) for f in ANALYSIS_FIELDS
                if rows1.get(n, {}).get(f) != rows[n][f]}
        if not diff:
            continue
        if all(one == "" for one, _ in diff.values()):
            revised.append(n)
        else:
            bad.append((n, diff))
    if bad:
        n, diff = bad[0]
        fail(f"{label}: -2", f"{len(bad)} frames differ; frame {n}: {diff}")
    else:
        ok(f"{label}: one pass gives the analysis of tshark -2" +
           (f", but on {len(revised)} frame(s) a later packet revised {revised[:5]}" if revised else ""))

    # 5. -z roce,qp equals qptrace summary (stats False: check_one_meaning
    # compares it, on every capture)
    if stats:
        check_stats(env, qptrace, cap, label)


def linktype(cap):
    with open(cap, "rb") as f:
        h = f.read(24)
    if len(h) < 24:
        return None
    magic = struct.unpack("<I", h[:4])[0]
    if magic in (0xa1b2c3d4, 0xa1b23c4d):
        return struct.unpack("<I", h[20:24])[0]
    if magic in (0xd4c3b2a1, 0x4d3cb2a1):
        return struct.unpack(">I", h[20:24])[0]
    return None  # pcapng: not needed here


def qp_columns():
    """The -z roce,qp columns: the counter table's columns (a->b/b->a)
    between the conversation's and the aggregates'; time lost and RTT
    p50/p99 the conversation's, as summary's table."""
    return (["conv", "transport", "ULP", "A (addr QP)", "B (addr QP)"] +
            [c["column"] for c in COUNTERS if c["column"]] +
            ["messages", "NAKs", "time lost", "RTT p50/p99"])


def parse_qp(out):
    """-z roce,qp text: the header's titles (columns are two spaces apart)
    and one {title: cell} per conversation."""
    lines = out.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("conv  "):
            break
    else:
        return None, {}
    starts = [m.start() for m in re.finditer(r"(?:^|(?<=  ))\S", line)]
    titles = [line[a:b].strip() for a, b in zip(starts, starts[1:] + [None])]
    rows = {}
    for row in lines[i + 1:]:
        if not re.match(r"\d+ ", row) or "conversation(s)" in row:
            break
        cells = [row[a:b].strip() for a, b in zip(starts, starts[1:] + [None])]
        rows[int(cells[0])] = dict(zip(titles, cells))
    return titles, rows


# a row of qptrace summary's table: conv, transport, packets, bytes,
# throughput, re-sent, episodes, time lost, CNPs, RTT p50/p99, endpoints
SUMMARY_ROW = re.compile(r"^\s*(\d+) (\S+)\s+(\d+)\s+(\d+)\s+(-|\S+ \S*bit/s)\s+(\d+(?: \([\d.]+ %\))?)"
                         r"\s+(\d+)\s+(-|\S+ [µm]?s)\s+(\d+)\s+(-|\S+ [µm]?s/\S+ [µm]?s)  \S.* <-> ")
SUMMARY_COLS = ("transport", "packets", "bytes", "throughput", "re-sent", "episodes", "time lost",
                "CNPs", "RTT p50/p99")


def summary_table(qptrace, cap):
    """{conv: {column: cell}} of qptrace summary's text table (every row)."""
    rc, out = run_qptrace(qptrace, ["summary", "--top", "1000000", cap])
    return {int(m.group(1)): dict(zip(SUMMARY_COLS, m.groups()[1:]))
            for m in map(SUMMARY_ROW.match, out.splitlines()) if m}


def fmt_us(us):
    """A duration in µs as summary words it: three significant digits, the
    unit (µs, ms, s) chosen after rounding."""
    def sig3(v, unit):
        return f"{v:.0f} {unit}" if v >= 99.95 else f"{v:.1f} {unit}" if v >= 9.995 else f"{v:.2f} {unit}"
    a = abs(us)
    return sig3(a, "µs") if a < 999.5 else sig3(a / 1e3, "ms") if a < 999.5e3 else sig3(a / 1e6, "s")


def cell_agrees(cell, us):
    """A duration cell of summary's ("2.99 µs", "1.03 ms", "-") is us
    (from --json, to the nanosecond; None: none) in three significant digits: written
    as summary writes its own value, and within half its last digit (and
    --json's rounding) of us.  (Formatting --json's value again may round
    otherwise: 2.985 of --json can be 2.98499 or 2.98501 before.)"""
    if cell == "-" or us is None:  # none
        return cell == "-" and us is None
    m = re.fullmatch(r"(\d+(?:\.(\d+))?) (µs|ms|s)", cell)
    if not m:
        return False
    scale = {"µs": 1, "ms": 1e3, "s": 1e6}[m.group(3)]
    v = float(m.group(1)) * scale
    return fmt_us(v) == cell and abs(v - us) <= 0.5 * 10 ** -len(m.group(2) or "") * scale + 0.0011


def summary_rows(qptrace, cap, s=None):
    """What -z roce,qp should say, from qptrace summary --json, every cell:
    the counters a->b/b->a; the conversation's time lost (the sum of its
    directions' time_lost_us) and RTT p50/p99 (of the direction with most
    ACK RTT samples, the first on a tie) as summary's table words them,
    checked against --json (cell_agrees).  Also the cells of summary's text
    table that disagree with --json (those two, and the sums of the
    a->b/b->a counts under its columns' names): [(conv, column, table
    cell, from --json)]."""
    if s is None:
        rc, out = run_qptrace(qptrace, ["summary", "--json", cap])
        s = json.loads(out)
    table = summary_table(qptrace, cap)
    by_column = {c["column"]: c["key"] for c in COUNTERS if c["column"]}
    # summary's table column: the a->b/b->a counter it sums
    sums = {"packets": "packets", "bytes": "payload_bytes", "episodes": "gbn_episodes",
            "CNPs": "cnps", "re-sent": "retransmitted_packets"}
    rows, disagree = {}, []
    for c in s["conversations"]:
        r = {"conv": str(c["id"]), "transport": c["transport"], "ULP": c.get("ulp") or "-"}
        for title, e in (("A (addr QP)", c["endpoints"][0]), ("B (addr QP)", c["endpoints"][1])):
            r[title] = f"{e['addr']} " + ("?" if e.get("qpn") is None else f"0x{e['qpn']:06x}")
        ds = c["directions"]
        t = table.get(c["id"])
        best = None
        for d in ds:
            if d.get("ack_rtt_us") and (best is None or d["ack_rtt_us"]["n"] > best["n"]):
                best = d["ack_rtt_us"]
        lost = sum(d["time_lost_us"] for d in ds)
        for title in qp_columns()[5:]:
            if title == "RTT p50/p99":
                r[title] = (t or {}).get(title)
                cells = (r[title] or "").split("/")
                if not (cells == ["-"] and not best or best and len(cells) == 2 and
                        cell_agrees(cells[0], best["p50"]) and cell_agrees(cells[1], best["p99"])):
                    disagree.append((c["id"], title, r[title], best and (best["p50"], best["p99"])))
            elif title == "time lost":
                r[title] = (t or {}).get(title)
                if not cell_agrees(r[title] or "", lost or None):  # none lost: "-"
                    disagree.append((c["id"], title, r[title], lost))
            else:
                r[title] = "/".join(str(d[by_column[title]] if title in by_column else
                                        sum(d["messages"].values()) if title == "messages" else
                                        sum(d["naks"].values())) for d in ds)
        if t is None:
            disagree.append((c["id"], "row", None, "not in summary's table"))
        else:
            want = {"transport": r["transport"]}
            want.update({k: str(sum(d[key] for d in ds)) for k, key in sums.items()})
            t = dict(t, **{"re-sent": t["re-sent"].split()[0]})  # "8 (35 %)": the count
            disagree += [(c["id"], k, t[k], v) for k, v in want.items() if t[k] != v]
        rows[c["id"]] = r
    return rows, disagree


def check_stats(env, qptrace, cap, label, out=None):
    """-z roce,qp (out: its text, when a run printed it already) equals
    qptrace summary --json, every cell of every row; summary's text table
    says the same (summary_rows)."""
    if out is None:
        rc, out, err = env.tshark(["-q", "-z", "roce,qp", "-r", cap])
        if rc != 0:
            fail(f"{label}: -z roce,qp", err.strip()[-200:])
            return
    titles, got = parse_qp(out)
    if titles != qp_columns():
        fail(f"{label}: -z roce,qp columns", f"{titles}, expected {qp_columns()}")
        return
    rc, js = run_qptrace(qptrace, ["summary", "--json", cap])
    summ = json.loads(js)
    exp, disagree = summary_rows(qptrace, cap, summ)
    note = ""
    if linktype(cap) == 197:
        # ERF: Wireshark times packets with the ERF record's own 64-bit
        # timestamp, libpcap (qptrace) with the pcap header's microseconds,
        # so times differ in the sub-microsecond digits.  Compare the rest.
        for rows in (got, exp):
            for r in rows.values():
                r["RTT p50/p99"] = r["time lost"] = "(ERF)"
        note = ", times not compared: ERF timestamps"
    frags = summ.get("totals", {}).get("fragmented_roce_packets", 0)
    if frags:
        # RoCEv2 packets in IPv4 fragments: qptrace names the fragments,
        # Wireshark reassembles them and the plugin analyses the packet: the
        # rows only tshark has are those conversations.
        extra = sorted(k for k in got if k not in exp)
        for k in extra:
            del got[k]
        note += f", {len(extra)} more with tshark from {frags} IPv4-fragmented packet(s) it reassembled"
    if disagree:
        fail(f"{label}: summary's table and --json", f"{len(disagree)} cells differ (conv, column, "
             f"table, --json): {disagree[:3]}")
    if got != exp:
        diff = []
        for k in sorted(set(got) | set(exp)):
            g_, e_ = got.get(k) or {}, exp.get(k) or {}
            cols = [t for t in qp_columns() if g_.get(t) != e_.get(t)]
            if cols:
                diff.append(f"conv {k}: " + ", ".join(f"{t} tshark {g_.get(t)!r} qptrace {e_.get(t)!r}"
                                                     for t in cols[:3]))
        fail(f"{label}: -z roce,qp", f"{len(diff)} rows differ; " + "; ".join(diff[:3]))
    else:
        ok(f"{label}: -z roce,qp equals qptrace summary --json, {len(qp_columns())} cells of each of "
           f"{len(exp)} conversations{note}")


def check_stats_filtered(env, qptrace, cap, label):
    """-z roce,qp,FILTER lists the conversations with a packet the filter
    matches, with the same whole-file numbers as without it; a bad filter
    is an error."""
    rc, out = run_qptrace(qptrace, ["summary", "--json", cap])
    exp = summary_rows(qptrace, cap, json.loads(out))[0]
    convs = json.loads(out)["conversations"]
    addrs = sorted({e["addr"] for c in convs for e in c["endpoints"]})
    cases = [(f"roce.stream=={c['id']}", {c["id"]}) for c in convs[1:3]]
    cases += [(f"ip.addr=={a}", {c["id"] for c in convs
                                 if any(e["addr"] == a for e in c["endpoints"])})
              for a in addrs[-2:]]
    cases.append(("roce.bth.opcode == 255", set()))  # matches no packet
    for flt, want in cases:
        rc, out, err = env.tshark(["-q", "-z", f"roce,qp,{flt}", "-r", cap])
        titles, got = parse_qp(out)
        if rc != 0 or f"Filter: {flt}" not in out:
            fail(f"{label}: -z roce,qp,{flt}", f"rc {rc}: {err.strip()[-200:]}")
        elif got != {k: exp[k] for k in want}:
            fail(f"{label}: -z roce,qp,{flt}",
                 f"conversations {sorted(got)}, expected {sorted(want)} (or numbers differ)")
        else:
            ok(f"{label}: -z roce,qp,{flt} lists conversations {sorted(want)}")
    rc, out, err = env.tshark(["-q", "-z", "roce,qp,ip.addr==", "-r", cap])
    if rc != 0 and "roce,qp" in err and "invalid" in err:
        ok(f"{label}: -z roce,qp with a bad filter is an error ({err.strip().splitlines()[-1]})")
    else:
        fail(f"{label}: -z roce,qp,ip.addr==", f"rc {rc}, stderr {err.strip()[-200:]!r}")


# ---- every verdict kind of the engine's table, on the made captures ---------------

def check_expert_names(gfields):
    """As TCP's analysis (tcp.analysis.retransmission): each verdict's
    filter name is its expert info's own (tshark -G fields: an FT_NONE
    field titled with the expert's text: what expert_register_field_array
    makes), a value it carries a numeric field of another name; the
    decoder's kinds (bad ICRC, malformed) plain fields, their expert infos
    those of the header items (roce.icrc.bad, roce.vcrc.bad, roce.malformed,
    roce.truncated); no expert info named ".expert"."""
    f = {}
    for line in gfields.splitlines():
        t = line.split("\t")
        if t[0] == "F" and len(t) >= 4:
            f[t[2]] = (t[1], t[3])
    bad = []
    for v in VERDICTS:
        name = EVENT_FIELDS[v["key"]]
        if v["group"] in DECODE_GROUPS:
            want = (v["label"], "FT_BOOLEAN")
        else:
            want = (v["expert"], "FT_NONE")
        if f.get(name) != want:
            bad.append(f"{name}: {f.get(name)}, expected {want}")
        vf = VALUE_FIELDS.get(v["key"])
        if vf and (f.get(vf) or ("", ""))[1] not in ("FT_UINT16", "FT_UINT32"):
            bad.append(f"{vf}: {f.get(vf)}, expected a number")
    for name, title in (("roce.icrc.bad", "Bad ICRC"), ("roce.vcrc.bad", "Bad VCRC"),
                        ("roce.malformed", None), ("roce.truncated", None)):
        if f.get(name, ("", ""))[1] != "FT_NONE" or (title and f[name][0] != title):
            bad.append(f"{name}: {f.get(name)}, expected the expert info")
    dotted = sorted(n for n in f if n.startswith("roce.") and n.endswith(".expert"))
    if dotted:
        bad.append(f"expert infos named .expert: {dotted[:4]}")
    if bad:
        fail("expert infos named after their fields", "; ".join(bad[:4]))
    else:
        ok(f"expert infos named after their fields: {sum(v['group'] not in DECODE_GROUPS for v in VERDICTS)} "
           f"verdicts' filters are their expert infos, {len(VALUE_FIELDS)} values fields of their own "
           f"({', '.join(sorted(VALUE_FIELDS.values()))})")


def check_filter_forms(env, qptrace, made):
    """The forms users type: `-Y roce.analysis.<kind>` (the expert info),
    `==` on a value field, `-Y roce.icrc.bad`, each selecting as many
    frames as qptrace events --json names (tshark -2, one -z io,stat pass
    per capture); `-T fields -e roce.analysis.<kind>` (an expert info)
    prints 1 on those frames, as before (check_verdicts compares the
    frames)."""
    want = {"nak_gbn": ("retransmission", "psn_gap", "nak", "gbn_episode"),
            "cm_full": ("cm_reject",), "bad_icrc": ("bad_icrc",)}
    for cap, label in made:
        name = os.path.basename(cap)[5:-5]
        if name not in want:
            continue
        rc, out = run_qptrace(qptrace, ["events", "--json", cap])
        evs = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
        filters, counts = [], []
        for k in want[name]:
            mine = [e for e in evs if e["kind"] == k]
            filters.append(EVENT_FIELDS[k] if k != "bad_icrc" else "roce.icrc.bad")
            counts.append(len({e["frame"] for e in mine}))
            if k in ("psn_gap", "cm_reject"):
                key = VALUE_FIELDS[k].rsplit(".", 1)[1]
                val = mine[0][key] if mine else -1
                filters.append(f"{VALUE_FIELDS[k]} == {val}")
                counts.append(len({e["frame"] for e in mine if e[key] == val}))
            elif k == "gbn_episode":
                filters.append(f"{VALUE_FIELDS[k]} == 1")
                counts.append(len({(e["conv"], e["dir"]) for e in mine}))
        got, err = io_stat_frames(env, cap, filters)
        rows, err2 = tshark_fields(env, cap, [filters[0]], extra=["-2"])
        printed = {r[filters[0]] for r in (rows or {}).values()} - {""}
        if got != counts or not all(counts) or printed != {"1"}:
            fail(f"{label}: filter forms", f"{list(zip(filters, got or [None] * len(filters)))}, "
                 f"expected {counts}; -T fields -e {filters[0]} printed {sorted(printed)} "
                 f"{err}{err2 or ''}")
        else:
            ok(f"{label}: " + ", ".join(f"-Y '{f}' {n}" for f, n in zip(filters, got)) +
               f" frames as events; -T fields -e {filters[0]} prints 1")


def check_qp_titles(qptrace, made):
    """Each a->b/b->a column of -z roce,qp is titled as summary --long
    names that row (its label, without the colon)."""
    labels = set()
    for cap, label in made:
        if os.path.basename(cap)[5:-5] in ("naks", "ecn_no_cnp", "bad_icrc"):
            rc, out = run_qptrace(qptrace, ["summary", "--long", "-v", cap])
            labels |= {m.group(1) for m in re.finditer(r"^  (\S[^:\n]*):  ", out, re.M)}
    cols = [c["column"] for c in COUNTERS if c["column"]]
    missing = [c for c in cols if c not in labels]
    if missing or not cols:
        fail("-z roce,qp titles", f"{missing} not rows of summary --long ({sorted(labels)[:8]})")
    else:
        ok(f"-z roce,qp: its {len(cols)} a->b/b->a columns titled as summary --long's rows")


EXPERT_FIELDS = ["_ws.expert.message", "_ws.expert.group", "_ws.expert.severity"]


def field_run(env, cap, fields, extra):
    """`tshark -2 -T fields` of cap: every occurrence of the frame's expert
    infos and of fields per frame, with extra arguments (a -z statistic):
    (rows {frame: {field: "a|b", "experts": [(message, group, severity)]}},
    the lines that are not frame rows: the statistic's text), or None and
    the error."""
    args = ["-2", "-r", cap, "-T", "fields", "-E", "occurrence=a", "-E", "aggregator=|",
            "-E", "separator=\t", "-e", "frame.number"]
    for f in EXPERT_FIELDS + fields:
        args += ["-e", f]
    rc, out, err = env.tshark(args + extra)
    if rc != 0:
        return None, err.strip().splitlines()[-1] if err.strip() else f"rc {rc}"
    rows, text = {}, []
    for line in out.splitlines():
        parts = line.split("\t")
        if text or len(parts) < 2 or not parts[0].isdigit():
            text.append(line)  # the statistic's, after the frames
            continue
        parts += [""] * (1 + len(EXPERT_FIELDS) + len(fields) - len(parts))
        r = dict(zip(EXPERT_FIELDS + fields, parts[1:]))
        r["experts"] = list(zip(*(r[f].split("|") for f in EXPERT_FIELDS))) if r[EXPERT_FIELDS[0]] else []
        rows[int(parts[0])] = r
    return rows, text


SECOND_PASS = {}  # (HOME, the capture's bytes' SHA-1) -> second_pass()'s answer
# what check_one_meaning reads besides ANALYSIS_FIELDS
MEANING_FIELDS = ["roce.analysis.flags", "roce", "roce.bth.opcode", "roce.bth.psn"]


def second_pass(env, cap):
    """The one `tshark -2` run of a capture that every check of the second
    pass shares (check_capture's, check_verdicts', check_gbn_trigger's,
    check_one_meaning's, and the -z expert of check_verdicts and
    check_findings): every occurrence of the expert infos, of
    ANALYSIS_FIELDS and of MEANING_FIELDS per frame, with -z roce,qp and
    -z expert in the same run (a tshark start-up is 0.4 s: this run was
    two, for the captures under public/ and made/).  The capture is known
    by its bytes: check_capture reads a copy in the test's HOME,
    check_one_meaning the file under captures/.  (rows, the lines of -z
    expert, the text of -z roce,qp), or (None, the error, None)."""
    with open(cap, "rb") as f:
        key = (env.home, hashlib.sha1(f.read()).hexdigest())
    if key not in SECOND_PASS:
        fields = ANALYSIS_FIELDS + [f for f in MEANING_FIELDS if f not in ANALYSIS_FIELDS]
        rows, text = field_run(env, cap, fields, ["-z", "roce,qp", "-z", "expert"])
        if rows is None:
            SECOND_PASS[key] = (None, text, None)
        else:
            # -z roce,qp's table: from its "=====" line to the next one
            at = next((i for i, line in enumerate(text) if line.startswith("=====") and
                       i + 1 < len(text) and text[i + 1].startswith("RoCE QP")), None)
            end = next((i for i in range(at + 1, len(text)) if text[i].startswith("=====")),
                       len(text) - 1) if at is not None else None
            qp = "\n".join(text[at:end + 1]) + "\n" if at is not None else ""
            rest = text if at is None else text[:at] + text[end + 1:]
            SECOND_PASS[key] = (rows, rest, qp)
    return SECOND_PASS[key]


def two_pass(env, cap):
    """second_pass()'s rows and -z expert lines: (rows, lines), or (None,
    the error)."""
    rows, text, _ = second_pass(env, cap)
    return rows, text


def two_pass_first(env, cap, fields):
    """two_pass()'s rows with the first occurrence of fields only (what
    `-E occurrence=f` prints): (rows, None) or (None, the error)."""
    rows, text = two_pass(env, cap)
    if rows is None:
        return None, text
    return {n: {f: r[f].split("|")[0] for f in fields} for n, r in rows.items()}, None


def expert_rows(env, cap):
    """-z expert: {(group word, summary): frequency} of the RoCE rows (of
    the run two_pass() makes)."""
    rows, text = two_pass(env, cap)
    out = {}
    for line in (text if rows is not None else []):
        m = re.match(r"^\s+(\d+)\s+(\S+)\s+RoCE\s+(.*?)\s*$", line)
        if m:
            out[(m.group(2), m.group(3))] = out.get((m.group(2), m.group(3)), 0) + int(m.group(1))
    return out


def check_verdicts(env, qptrace, made, have_fields):
    """For every kind of qpt_verdicts[] that `qptrace events --json` reports
    in some made capture: roce.analysis.<key> is on exactly those frames,
    with the event's count/code as value, and its expert info (the table's
    constant text, group and severity; for the decoder's groups, an expert
    info of that group) is on each; `-z expert` has one row for the kind,
    as many as the frames.  A kind the plugin lacks fails."""
    by_key = {v["key"]: v for v in VERDICTS}
    occurs = {k: 0 for k in by_key}
    texts = {v["expert"] for v in VERDICTS}
    for cap, label in made:
        rc, out = run_qptrace(qptrace, ["events", "--json", cap])
        want = {}
        for line in out.splitlines():
            ev = json.loads(line)
            if any(v["key"] == ev["kind"] and not v["in_plugin"] for v in VERDICTS):
                continue  # not the plugin's (see load_tables)
            want.setdefault(ev["kind"], {})[ev["frame"]] = ev
        if not want:
            continue
        rows, _ = two_pass(env, cap)
        episodes = {}  # go-back-N: first resent frame -> its 1-based number in its direction
        if "gbn_episode" in want:
            rc, out = run_qptrace(qptrace, ["summary", "--json", cap])
            for c in json.loads(out)["conversations"]:
                for d in c["directions"]:
                    for i, e in enumerate(d.get("episodes") or []):
                        episodes[e["first_resent_frame"]] = i + 1
        if rows is None:
            fail(f"{label}: verdicts", "tshark failed")
            continue
        zexp = expert_rows(env, cap)
        bad = []
        for key, evs in sorted(want.items()):
            v = by_key.get(key)
            if v is None:
                bad.append(f"{key}: not in qpt_verdict.h")
                continue
            occurs[key] += len(evs)
            field = EVENT_FIELDS[key]
            if field not in have_fields:
                bad.append(f"{key}: the plugin has no field {field}")
                continue
            have = {n for n, r in rows.items() if r[field] not in ("", "0")}
            if have != set(evs):
                bad.append(f"{field}: tshark {sorted(have - set(evs))[:6]} extra, "
                           f"{sorted(set(evs) - have)[:6]} missing")
            vfield = VALUE_FIELDS.get(key)
            if vfield and vfield not in have_fields:
                bad.append(f"{key}: the plugin has no field {vfield}")
                continue
            for n, ev in evs.items():
                r = rows.get(n, {"experts": [], field: ""})
                exp_val = (ev.get(v["count_key"]) if v["value"] == "COUNT" else
                           ev.get("reason") if v["value"] == "CODE" else
                           episodes.get(n) if v["value"] == "EPISODE" else None)
                if vfield and parse_num(r.get(vfield, "").split("|")[0]) != exp_val:
                    bad.append(f"{vfield} frame {n}: {r.get(vfield)!r}, events/summary {exp_val}")
                groups = [int(g, 0) for m, g, sv in r["experts"]]
                if v["group"] in DECODE_GROUPS:
                    if PI_GROUP[v["group"]] not in groups:
                        bad.append(f"{key} frame {n}: no {v['group']} expert info")
                elif (v["expert"], PI_GROUP[v["group"]], PI_SEVERITY[v["severity"]]) not in \
                        [(m, int(g, 0), int(sv, 0)) for m, g, sv in r["experts"]]:
                    bad.append(f"{key} frame {n}: expert infos {r['experts']}, "
                               f"expected {v['expert']!r} {v['group']}/{v['severity']}")
            if v["group"] not in DECODE_GROUPS:
                freq = [f for (grp, text), f in zexp.items() if text == v["expert"]]
                if freq != [len(evs)]:
                    bad.append(f"-z expert {v['expert']!r}: rows {freq}, expected one of {len(evs)}")
        per_packet = [t for (grp, t) in zexp if grp in ("Sequence", "Response") and t not in texts]
        if per_packet:
            bad.append(f"-z expert rows not from the verdict table: {per_packet[:3]}")
        if bad:
            fail(f"{label}: verdicts", "; ".join(bad[:4]))
        else:
            ok(f"{label}: {len(want)} verdict kinds on the frames qptrace events names, "
               "with their expert infos (one -z expert row each)")
    never = [k for k, n in occurs.items() if n == 0]
    if never:
        skip("verdict kinds in no made capture", ", ".join(never))
    for k in ("timeout_resend", "read_retry", "coalesced_ack", "gbn_episode"):
        if not occurs.get(k):
            fail(f"verdict {k}", "no made capture has it: not checked")
    seen = [k for k, n in occurs.items() if n]
    ok(f"verdict kinds checked on the made captures: {len(seen)} of {len(occurs)}")


PFC_CAPTURES = ("made/pfc_stall.pcap", "made/pfc_mismatch.pcap", "made/pause_8023x.pcap")


def check_pfc(env, qptrace, made):
    """The PFC/PAUSE analysis (roce-pfc.c) on the lossless-network made
    captures, against `qptrace packets --json` (whose MAC control decode
    tests/tshark_diff.py checks against Wireshark's macc) and the manifests:
    roce.pfc on exactly the PAUSE/PFC frames qptrace decodes whole;
    roce.pfc.paused / resumed the priorities with a time > 0 / = 0 (every
    priority for a PAUSE); roce.pfc.pause_us = quanta x 512 bit times at the
    preference roce.link_speed (the manifest's speed); the expert info
    roce.pfc.pause_roce on each XOFF of a priority the manifest lists as a
    RoCE priority (RoCE data precedes every pause there), on no other."""
    for cap, label in made:
        if label not in PFC_CAPTURES:
            continue
        man = json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                          "captures", label[:-5] + ".json")))["pfc"]
        bps = man["link_speed_bps"]
        rc, out = run_qptrace(qptrace, ["packets", "--json", cap])
        want = {}
        for line in out.splitlines():
            r = json.loads(line)
            m = r.get("macc")
            if r.get("transport") != "MAC-control" or r.get("malformed") or not m:
                continue
            if m["opcode"] == 1:
                q = [m["quanta"]] * 8
                en = 0xff
            elif m["opcode"] == 0x101:
                q, en = m["quanta"], m["cev"] & 0xff
            else:
                continue
            xoff = sum(1 << p for p in range(8) if en >> p & 1 and q[p])
            xon = sum(1 << p for p in range(8) if en >> p & 1 and not q[p])
            prios = [p for p in range(8) if (xoff | xon) >> p & 1]
            want[r["frame"]] = (xoff, xon, prios, [round(q[p] * 512 / bps * 1e6, 3) for p in prios],
                                any(xoff >> p & 1 for p in man["roce_priorities"]))
        rc, out, err = env.tshark(["-o", f"roce.link_speed:{bps}", "-r", cap, "-Y", "roce.pfc",
                                   "-T", "fields", "-E", "occurrence=a", "-E", "aggregator=,",
                                   "-e", "frame.number", "-e", "roce.pfc.paused",
                                   "-e", "roce.pfc.resumed", "-e", "roce.pfc.priority",
                                   "-e", "roce.pfc.pause_us", "-e", "_ws.expert.message"])
        got = {}
        for line in out.splitlines():
            f = line.split("\t") + [""] * 6
            got[int(f[0])] = (int(f[1], 0), int(f[2], 0), [int(x) for x in f[3].split(",") if x],
                              [round(float(x), 3) for x in f[4].split(",") if x],
                              "Pause (XOFF) of a priority that carries RoCE data" in f[5])
        if rc != 0 or not want:
            fail(f"{label}: roce.pfc", err.strip()[-200:] or "no PFC/PAUSE frame in qptrace's decode")
        elif got != want:
            bad = sorted(n for n in set(got) | set(want) if got.get(n) != want.get(n))
            fail(f"{label}: roce.pfc", f"frames {bad[:5]}: roce {[got.get(n) for n in bad[:2]]} "
                 f"!= qptrace/manifest {[want.get(n) for n in bad[:2]]}")
        else:
            ok(f"{label}: roce.pfc on {len(got)} PFC/PAUSE frames as qptrace decodes them, pause "
               f"times at {bps / 1e9:g} Gbit/s, {sum(w[4] for w in want.values())} pause_roce expert infos")


FINDING_CAPTURES = ("pfc_mismatch", "pfc_stall", "pause_8023x", "mtu_mismatch", "ecn_no_cnp",
                    "cnp_priority_bad", "capture_incomplete", "lossless_ok", "naks", "nak_gbn",
                    "cm_full", "bad_icrc", "dup_capture", "time_backwards", "timeout_resend",
                    "rnr_multi")


def check_findings(env, qptrace, made):
    """The diagnosis on its frames (roce-findings.c): in two passes every
    frame a finding of `qptrace summary --json` names has a roce.finding of
    that kind, and no other frame has one; without -2 there is none (the
    findings need the whole capture); -z expert has one row per kind with
    the kind's constant title, as many as the frames named."""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "analyzer",
                           "qpt_findings.h")) as f:
        titles = {r[1]: r[3] for r in macro_rows(f.read(), "QPT_FINDINGS")}
    if len(titles) < 10:
        fail("findings table", "could not read QPT_FINDINGS in analyzer/qpt_findings.h")
        return
    for cap, label in made:
        if label[5:-5] not in FINDING_CAPTURES:
            continue
        rc, out = run_qptrace(qptrace, ["summary", "--json", cap])
        want, per_kind = set(), {}
        for f in json.loads(out)["findings"]:
            want |= {(n, f["kind"]) for n in f["frames"]}
            per_kind[f["kind"]] = per_kind.get(f["kind"], 0) + len(set(f["frames"]))
        rc, out, err = env.tshark(["-2", "-r", cap, "-Y", "roce.finding", "-T", "fields",
                                   "-E", "occurrence=a", "-E", "aggregator=,",
                                   "-e", "frame.number", "-e", "roce.finding.kind"])
        got = set()
        for line in out.splitlines():
            n, kinds = (line.split("\t") + [""])[:2]
            got |= {(int(n), k) for k in kinds.split(",") if k}
        rc1, out1, _ = env.tshark(["-r", cap, "-Y", "roce.finding"])
        if rc != 0:
            fail(f"{label}: roce.finding", err.strip()[-200:])
        elif got != want:
            fail(f"{label}: roce.finding", f"plugin-only {sorted(got - want)[:4]}, "
                 f"qptrace-only {sorted(want - got)[:4]}")
        elif out1.strip():
            fail(f"{label}: roce.finding in one pass", out1.strip().splitlines()[0])
        else:
            ok(f"{label}: roce.finding on the {len(got)} (frame, kind) pairs qptrace names, none in one pass")
        rows = expert_rows(env, cap)
        for k, cnt in sorted(per_kind.items()):
            if not cnt:
                continue
            hits = [v for (grp, summ), v in rows.items() if summ == titles.get(k)]
            if hits == [cnt]:
                ok(f"{label}: -z expert: one row for finding {k} ({cnt})")
            else:
                fail(f"{label}: -z expert row of finding {k}", f"{hits} (want [{cnt}])")


TRIGGER_KINDS = ("gbn_episode", "timeout_resend", "rnr_retry")
TRIGGER_TEXT = re.compile(r"\b(?:gbn_episode|timeout_resend) \(trigger frame (\d+)\)|"
                          r"\brnr_retry \(RNR NAK frame (\d+)\)")
SEVERITY_PI = {"chat": PI_SEVERITY["CHAT"], "note": PI_SEVERITY["NOTE"],
               "warning": PI_SEVERITY["WARN"], "error": PI_SEVERITY["ERROR"]}


def finding_titles():
    """{expert text: finding kind} of analyzer/qpt_findings.h."""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "analyzer",
                           "qpt_findings.h")) as f:
        return {r[3]: r[1] for r in macro_rows(f.read(), "QPT_FINDINGS")}


def check_one_meaning(env, qptrace, caps):
    """One meaning per number (issue 34), on every capture under captures/,
    frame by frame, in two passes:
      * roce.analysis.ack_rtt on exactly the frames `qptrace packets --json`
        gives an ack_rtt_us, with that value; and per conversation and
        requester direction those values are the samples of `qptrace
        summary --json` ack_rtt_us (n, min, mean, max: the engine's own
        histogram, counted where it decides a sample);
      * roce.analysis.flags on exactly the frames `qptrace events --json`
        names (the plugin's kinds);
      * each finding's expert info on the frames summary --json names, with
        the severity summary gives that finding (not the kind's).
    ERF files: Wireshark times them with the ERF record's own timestamp,
    qptrace with libpcap's microseconds; their RTT values are not compared."""
    kind_of = finding_titles()
    # second_pass(): roce.stream, roce.direction, roce.analysis.ack_rtt,
    # roce.analysis.flags, roce.analysis.gbn_trigger_frame, roce and the BTH
    totals = {"captures": 0, "rtt": 0, "flags": 0, "findings": 0, "triggers": 0}
    hostile = []
    for cap, label in caps:
        rc, out = run_qptrace(qptrace, ["packets", "--json", cap])
        recs = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        if not recs:
            continue  # nothing qptrace decodes (empty, not a capture, ...)
        rows, _, qp_text = second_pass(env, cap)
        if rows is None:
            skip(f"{label}: one meaning", "tshark cannot read it")
            continue
        # the same packets given to the engine by both: else (headers that
        # lie about lengths, ERF records: captures/hostile) Wireshark cuts or
        # drops packets otherwise than libpcap does, and the plugin's
        # engine is fed other packets (tests/hostile.py checks qptrace there)
        fed = {n: (parse_num(r["roce.bth.opcode"].split("|")[0]), parse_num(r["roce.bth.psn"].split("|")[0]))
               for n, r in rows.items() if r["roce"]}
        for r in recs:
            if r.get("transport") == "MAC-control":
                fed.pop(r["frame"], None)  # PFC/PAUSE: roce.pfc, no IBA packet
        cli_fed = {r["frame"]: (r["bth"]["opcode"], r["bth"]["psn"]) if "bth" in r else (None, None)
                   for r in recs if r.get("transport") != "MAC-control"}
        rc, out = run_qptrace(qptrace, ["summary", "--json", cap])
        summ = json.loads(out)
        if fed != cli_fed:
            first = min(n for n in set(fed) | set(cli_fed) if fed.get(n) != cli_fed.get(n))
            if label.startswith("hostile" + os.sep):
                hostile.append(f"{os.path.basename(label)} (frame {first})")
            elif summ["totals"].get("fragmented_roce_packets"):
                # as for -z roce,qp: qptrace names the IP fragments,
                # Wireshark reassembles them and the plugin analyses the packet
                skip(f"{label}: one meaning", f"frame {first}: an IPv4-fragmented RoCEv2 packet "
                     "Wireshark reassembles (qptrace names the fragments)")
                check_stats(env, qptrace, cap, label, qp_text)  # the rows both have
            else:
                fail(f"{label}: one meaning", f"frame {first}: tshark BTH {fed.get(first)}, "
                     f"qptrace {cli_fed.get(first)}")
            continue
        totals["captures"] += 1
        check_stats(env, qptrace, cap, label, qp_text)  # -z roce,qp, every cell
        erf = linktype(cap) == 197
        bad = []
        # RTT, frame by frame
        cli_rtt = {r["frame"]: r["ack_rtt_us"] for r in recs if "ack_rtt_us" in r}
        got_rtt = {n: float(r["roce.analysis.ack_rtt"]) * 1e6 for n, r in rows.items()
                   if r["roce.analysis.ack_rtt"]}
        if set(got_rtt) != set(cli_rtt):
            bad.append(f"ack_rtt frames: plugin-only {sorted(set(got_rtt) - set(cli_rtt))[:5]}, "
                       f"packets-only {sorted(set(cli_rtt) - set(got_rtt))[:5]}")
        elif not erf:
            off = [(n, got_rtt[n], cli_rtt[n]) for n in sorted(got_rtt)
                   if abs(got_rtt[n] - cli_rtt[n]) > 0.0006]
            if off:
                bad.append(f"ack_rtt values (frame, plugin us, packets us) {off[:3]}")
        # ... and they are summary's samples: the RTT of an ACK of direction
        # d is a sample of the requester's direction 1 - d
        samples = {}
        for n, us in got_rtt.items():
            r = rows[n]
            key = (parse_num(r["roce.stream"]), 1 - parse_num(r["roce.direction"]))
            samples.setdefault(key, []).append(us)
        want = {(c["id"], i): d["ack_rtt_us"] for c in summ["conversations"]
                for i, d in enumerate(c["directions"]) if d.get("ack_rtt_us")}
        if set(samples) != set(want):
            bad.append(f"directions with RTT samples: plugin {sorted(samples)[:4]}, "
                       f"summary {sorted(want)[:4]}")
        else:
            for key, v in sorted(samples.items()):
                w = want[key]
                if len(v) != w["n"]:
                    bad.append(f"conv {key[0]} dir {key[1]}: {len(v)} ack_rtt, summary n {w['n']}")
                elif not erf and (abs(min(v) - w["min"]) > 0.0006 or abs(max(v) - w["max"]) > 0.0006
                                  or abs(sum(v) / len(v) - w["mean"]) > 0.0006):
                    bad.append(f"conv {key[0]} dir {key[1]}: min/mean/max {min(v):.3f}/"
                               f"{sum(v) / len(v):.3f}/{max(v):.3f}, summary {w}")
        totals["rtt"] += len(got_rtt)
        # the catch-all flag on the frames events names
        rc, out = run_qptrace(qptrace, ["events", "--json", cap])
        plugin_kinds = {v["key"] for v in VERDICTS if v["in_plugin"]}
        evs = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        ev_frames = {e["frame"] for e in evs if e["kind"] in plugin_kinds}
        # the trigger frame: events, packets -v and the plugin name the same
        trig_ev = {}
        for e in evs:
            if e["kind"] in TRIGGER_KINDS and e.get("original_frame"):
                trig_ev.setdefault(e["frame"], set()).add(e["original_frame"])
        rc, out = run_qptrace(qptrace, ["packets", "-v", cap])
        trig_v, frame = {}, None
        for line in out.splitlines():
            if line[:1].isdigit():
                frame = int(line.split()[0])
            elif line.startswith("# frame "):  # a verdict decided after its line
                frame = int(line.split()[2].rstrip(","))
            elif line.startswith("  analysis:"):
                for m in TRIGGER_TEXT.finditer(line):
                    trig_v.setdefault(frame, set()).add(int(m.group(1) or m.group(2)))
        trig_plugin = {n: parse_num(r["roce.analysis.gbn_trigger_frame"].split("|")[0])
                       for n, r in rows.items() if r["roce.analysis.gbn_trigger_frame"]}
        if trig_v != trig_ev:
            bad.append(f"packets -v trigger frames {sorted(trig_v.items())[:3]}, "
                       f"events {sorted(trig_ev.items())[:3]}")
        wrong = [n for n in set(trig_ev) | set(trig_plugin) if trig_plugin.get(n) not in trig_ev.get(n, ())]
        if wrong:
            bad.append("gbn_trigger_frame (frame, plugin, events) " +
                       str([(n, trig_plugin.get(n), trig_ev.get(n)) for n in sorted(wrong)[:3]]))
        totals["triggers"] += len(trig_ev)
        flagged = {n for n, r in rows.items() if r["roce.analysis.flags"]}
        if flagged != ev_frames:
            bad.append(f"roce.analysis.flags: plugin-only {sorted(flagged - ev_frames)[:5]}, "
                       f"events-only {sorted(ev_frames - flagged)[:5]}")
        totals["flags"] += len(flagged)
        # the findings' severities
        want_f = {(n, f["kind"], SEVERITY_PI[f["severity"]]) for f in summ["findings"]
                  for n in f["frames"]}
        got_f = {(n, kind_of[m], int(sv, 0)) for n, r in rows.items() for m, g, sv in r["experts"]
                 if m in kind_of}
        if got_f != want_f:
            bad.append(f"finding (frame, kind, severity): plugin-only {sorted(got_f - want_f)[:3]}, "
                       f"summary-only {sorted(want_f - got_f)[:3]}")
        totals["findings"] += len(want_f)
        if bad:
            fail(f"{label}: one meaning", "; ".join(bad[:3]))
    ok(f"one meaning on {totals['captures']} captures: {totals['rtt']} ack_rtt samples as packets "
       f"--json and summary's histograms, {totals['flags']} frames with roce.analysis.flags as events, "
       f"{totals['findings']} finding expert infos with summary's severity, the trigger frames of "
       f"{totals['triggers']} frames as events and packets -v name them")
    if hostile:
        skip("one meaning on captures/hostile", f"{len(hostile)} whose lying headers Wireshark "
             "reads otherwise (another BTH at the frame named): " + ", ".join(hostile))


def check_gbn_trigger(env, qptrace, made, values):
    """roce.analysis.gbn_trigger on each episode's first resent frame names
    the trigger of qptrace summary --json (episodes[].trigger); its value
    names are the plugin's VALS (tshark -G values)."""
    names = values.get("roce.analysis.gbn_trigger", {})
    need = {"made/read_retry.pcap", "made/timeout_resend.pcap", "made/nak_gbn.pcap"}
    for cap, label in made:
        rc, out = run_qptrace(qptrace, ["summary", "--json", cap])
        eps = [e for c in json.loads(out)["conversations"] for d in c["directions"]
               for e in (d.get("episodes") or [])]
        if not eps:
            continue
        need.discard(label)
        rows, err = two_pass_first(env, cap, ["roce.analysis.gbn_trigger"])
        if rows is None:
            fail(f"{label}: gbn_trigger", err)
            continue
        got = [names.get(parse_num(rows.get(e["first_resent_frame"], {}).get(
            "roce.analysis.gbn_trigger", "")), "(none)") for e in eps]
        exp = [e["trigger"] for e in eps]
        if got != exp:
            fail(f"{label}: gbn_trigger", f"tshark {got}, qptrace {exp}")
        else:
            ok(f"{label}: roce.analysis.gbn_trigger {sorted(set(got))} as qptrace summary")
    for label in sorted(need):
        fail(f"{label}: gbn_trigger", "no go-back-N episode there (or capture missing)")


def sharkd_taps(env, caps, taps):
    """sharkd's answers to a "tap" request on each of caps (one sharkd
    session loads them in turn): what Wireshark's Conversations / Endpoints
    dialogs show, with the row filters Wireshark builds for them
    (get_conversation_filter / get_endpoint_filter, which the dialogs' Apply
    as Filter uses).  {cap: ({tap: answer} or None, why)}; None when sharkd
    is missing."""
    if not shutil.which("sharkd"):
        return None
    reqs = []
    for i, cap in enumerate(caps):
        reqs.append({"jsonrpc": "2.0", "id": 2 * i + 1, "method": "load", "params": {"file": cap}})
        reqs.append({"jsonrpc": "2.0", "id": 2 * i + 2, "method": "tap",
                     "params": {f"tap{j}": t for j, t in enumerate(taps)}})
    envv = dict(os.environ, HOME=env.home)
    envv.pop("WIRESHARK_PLUGIN_DIR", None)
    p = subprocess.run(env.prefix + ["sharkd", "-"], cwd=env.home, env=envv,
                       input="".join(json.dumps(r) + "\n" for r in reqs),
                       capture_output=True, text=True)
    answers = {}
    for line in p.stdout.splitlines():
        if line.startswith("{"):
            try:
                d = json.loads(line)
            except ValueError:
                continue
            if isinstance(d.get("id"), int):
                answers[d["id"]] = d
    out = {}
    for i, cap in enumerate(caps):
        load, tap = answers.get(2 * i + 1), answers.get(2 * i + 2)
        if load and "error" in load:
            out[cap] = (None, "cannot open: " + load["error"].get("message", ""))
        elif tap and "result" in tap:
            out[cap] = ({t["tap"]: t for t in tap["result"]["taps"]}, "")
        else:
            out[cap] = (None, str(tap.get("error")) if tap else
                        f"no answer (sharkd rc {p.returncode}: {p.stderr.strip()[-200:]})")
    return out


def io_stat_frames(env, cap, filters):
    """The number of frames each display filter selects in cap (tshark -2,
    one -z io,stat pass for all of them)."""
    rc, out, err = env.tshark(["-2", "-q", "-r", cap, "-z", "io,stat,0," + ",".join(filters)])
    if rc != 0:
        return None, err.strip()[-200:]
    rows = [l for l in out.splitlines() if "<>" in l]
    if len(rows) != 1:
        return None, f"io,stat: {len(rows)} interval rows"
    cells = [c.strip() for c in rows[0].split("|")[2:-1]]
    frames = [int(c) for c in cells[0::2] if c.isdigit()]
    if len(frames) != len(filters):
        return None, f"io,stat: {len(frames)} columns for {len(filters)} filters"
    return frames, ""


def endpoint_qp(e):
    """An endpoint of summary --json in summary's text words."""
    return f"{e['addr']} QP " + ("?" if e.get("qpn") is None else f"0x{e['qpn']:06x}")


CONV_TEXT_ROW = re.compile(r"^(\S.*? QP (?:0x[0-9a-f]{6}|\?)) +<-> (\S.*? QP (?:0x[0-9a-f]{6}|\?)) +\d")


def check_conv_text(env, qptrace, caps):
    """tshark's text tables (-z conv,roce): the rows name both ends with
    their QPNs as qptrace summary does (TShark prints no ports for RoCE);
    with -2 every row is a conversation of summary, with its endpoints;
    in one pass each conversation is one row as well (the endpoints as
    known at its first frame: a requester's QPN comes with the first ACK,
    "QP ?" until then)."""
    for cap, label in caps:
        rc, out = run_qptrace(qptrace, ["summary", "--json", cap])
        want = sorted(tuple(sorted(endpoint_qp(e) for e in c["endpoints"]))
                      for c in json.loads(out)["conversations"]
                      if sum(d["packets"] for d in c["directions"]))
        for extra, what in ((["-2"], "two passes"), ([], "one pass")):
            rc, out, err = env.tshark(extra + ["-q", "-z", "conv,roce", "-r", cap])
            rows = [m.groups() for m in map(CONV_TEXT_ROW.match, out.splitlines()) if m]
            got = sorted(tuple(sorted(r)) for r in rows)
            if extra:
                good = got == want
            else:  # as many rows, each a conversation, a "QP ?" standing for its QPN
                def end_ok(e, w):
                    return e == w or (e.endswith(" QP ?") and e[:-5] == w.split(" QP ")[0])

                left = list(want)
                for r in got:
                    w = next((w for w in left if any(end_ok(r[0], w[i]) and end_ok(r[1], w[1 - i])
                                                     for i in (0, 1))), None)
                    if w is None:
                        break
                    left.remove(w)
                good = not left and len(got) == len(want)
            if rc != 0 or not good:
                fail(f"{label}: -z conv,roce ({what})", f"rows {got[:3]}, summary {want[:3]} "
                     f"({len(got)} rows, {len(want)} conversations) {err.strip()[-200:]}")
            else:
                ok(f"{label}: -z conv,roce ({what}): {len(got)} rows, one per conversation, "
                   f"each end with its QPN as qptrace summary")


CONV_FILTER = re.compile(r"^roce\.stream==(\d+) && (?:(ip|ipv6)\.addr==(\S+)|!string\(roce\.stream\)==\"([^\"]*)\")"
                         r" && roce\.stream==\1 && (?:\2\.addr==(\S+)|!string\(roce\.stream\)==\"([^\"]*)\")$")


def check_conv_table(env, qptrace, caps, probe):
    """Statistics > Conversations > RoCE (tshark -z conv,roce): one row per
    conversation of qptrace summary (its endpoints' addresses, the packets
    of each direction), and the row's filter, as Wireshark builds it from
    the plugin's get_filter_type, is roce.stream == that conversation's id
    (with the address tests); applied, it selects the row's packets.  The
    endpoint table's filters too, on probe."""
    n_rows = bad = 0
    answers = sharkd_taps(env, [c for c, _ in caps], ["conv:RoCE"])
    if answers is None:
        skip("Conversations > RoCE", "sharkd not installed")
        return
    for cap, label in caps:
        taps, why = answers[cap]
        if taps is None:
            if why.startswith("cannot open"):
                skip(f"{label}: Conversations > RoCE", f"Wireshark {why}")
                continue
            fail(f"{label}: Conversations > RoCE", why)
            bad += 1
            continue
        rc, out = run_qptrace(qptrace, ["summary", "--json", cap])
        summ = json.loads(out)
        want = {c["id"]: c for c in summ["conversations"]
                if sum(d["packets"] for d in c["directions"])}
        # IPv4-fragmented RoCEv2: Wireshark reassembles, the plugin analyses
        # the packet (a conversation qptrace, which names the fragments,
        # does not have): as for -z roce,qp
        frags = summ.get("totals", {}).get("fragmented_roce_packets", 0)
        got = {}
        for row in taps["conv:RoCE"].get("convs", []):
            m = CONV_FILTER.match(row.get("filter", ""))
            if not m:
                fail(f"{label}: Conversations > RoCE filter", repr(row.get("filter")))
                bad += 1
                continue
            cid = int(m.group(1))
            addrs = [m.group(3) or m.group(4), m.group(5) or m.group(6)]
            if [row["saddr"], row["daddr"]] != addrs or cid in got:
                fail(f"{label}: Conversations > RoCE row", f"{row}")
                bad += 1
            got[cid] = row
        for cid in sorted(set(got) | set(want)):
            r, c = got.get(cid), want.get(cid)
            if r and not c and frags:
                continue
            if not r or not c:
                fail(f"{label}: Conversations > RoCE", f"conversation {cid}: row {r}, qptrace {bool(c)}")
                bad += 1
                continue
            eps = [endpoint_qp(e) for e in c["endpoints"]]
            pk = [d["packets"] for d in c["directions"]]
            i = eps.index(r["saddr"]) if r["saddr"] in eps and eps[0] != eps[1] else 0
            if ({r["saddr"], r["daddr"]} != set(eps) or
                    [r["txf"], r["rxf"]] != [pk[i], pk[1 - i]]):
                fail(f"{label}: Conversations > RoCE conversation {cid}",
                     f"row {r['saddr']}->{r['daddr']} {r['txf']}/{r['rxf']}, qptrace {eps} {pk}")
                bad += 1
            n_rows += 1
    if not bad:
        ok(f"Conversations > RoCE: {n_rows} rows on {len(caps)} captures are qptrace summary's "
           "conversations, each row's filter is roce.stream==<its id>")

    # the filters, applied (tshark -2: the ids are those of the whole file)
    taps, why = sharkd_taps(env, [probe], ["conv:RoCE", "endpt:RoCE"])[probe]
    if taps is None:
        fail("Conversations > RoCE filters", why)
        return
    rows = [(r["filter"], r["txf"] + r["rxf"]) for r in taps["conv:RoCE"]["convs"]]
    rows += [(h["filter"], h["txf"] + h["rxf"]) for h in taps["endpt:RoCE"]["hosts"]]
    frames, why = io_stat_frames(env, probe, [f for f, _ in rows])
    if frames is None:
        fail("Conversations/Endpoints > RoCE filters", why)
        return
    wrong = [f"{f!r}: {got} frames, row {n}" for (f, n), got in zip(rows, frames) if got != n]
    # and a row's frames are those of its stream: the stream alone selects as many
    streams = [f"roce.stream=={m}" for m in sorted({int(x) for f, _ in rows[:8]
                                                     for x in re.findall(r"roce\.stream==(\d+)", f)})]
    alone, why = io_stat_frames(env, probe, streams)
    conv_n = {int(re.match(r"roce\.stream==(\d+)", f).group(1)): n for f, n in rows
              if re.match(r"roce\.stream==\d+ &&", f)}
    if alone is None:
        wrong.append(why)
    else:
        wrong += [f"{st}: {n} frames, row {conv_n.get(int(st.split('==')[1]))}"
                  for st, n in zip(streams, alone) if conv_n.get(int(st.split("==")[1])) != n]
    if not rows or wrong:
        fail("Conversations/Endpoints > RoCE filters", "; ".join(wrong[:3]) or "no rows")
    else:
        ok(f"Conversations/Endpoints > RoCE: each of the {len(rows)} row filters of "
           f"{os.path.basename(probe)} selects the row's number of frames, as many as its stream alone")


def check_stat_registered(env, plugin):
    """-z roce,qp is registered (TShark), and so is the stat_tap_table that
    gives Wireshark its Statistics → RoCE QP Conversations menu entry."""
    rc, out, err = env.tshark(["-z", "help"])
    if any(l.strip() == "roce,qp" for l in (out + err).splitlines()):
        ok("tshark -z help lists roce,qp")
    else:
        fail("tshark -z help", f"roce,qp not listed (rc {rc})")
    # The GUI menu entry cannot be seen without a display; check that the
    # plugin makes the table registration Wireshark builds it from.
    nm = shutil.which("nm")
    if not nm:
        skip("GUI statistics table", "nm not found")
        return
    p = subprocess.run([nm, "-D", "--undefined-only", plugin], capture_output=True, text=True)
    syms = {l.split()[-1] for l in p.stdout.splitlines() if l.split()}
    if "register_stat_tap_table_ui" in syms:
        ok("roce.so registers a stat_tap_table (Wireshark Statistics menu entry)")
    else:
        fail("GUI statistics table", "roce.so does not call register_stat_tap_table_ui")


# ---- a capture written here: RoCEv2 from UDP source port 69 -------------------------

def ip_checksum(h):
    s = sum(struct.unpack("!10H", h))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def rocev2_frame(src, dst, sport, bth, payload=b"", ident=1):
    """Ethernet/IPv4/UDP/BTH... with a valid ICRC (IBA annex A17.3.3)."""
    pad = (-len(payload)) % 4
    bth = bytearray(bth)
    bth[1] = (bth[1] & 0xcf) | (pad << 4)
    iba = bytes(bth) + payload + b"\0" * pad
    udp_len = 8 + len(iba) + 4
    tot = 20 + udp_len
    iph = struct.pack("!BBHHHBBH4s4s", 0x45, 0x02, tot, ident, 0x4000, 64, 17, 0,
                      bytes(src), bytes(dst))
    iph = iph[:10] + struct.pack("!H", ip_checksum(iph)) + iph[12:]
    udph = struct.pack("!HHHH", sport, 4791, udp_len, 0)
    # ICRC: 8 bytes of ones, IP header with TOS, TTL, checksum masked,
    # UDP header with checksum masked, BTH with its byte 4 (FECN/BECN/resv) masked.
    m_ip = bytearray(iph)
    m_ip[1] = 0xff
    m_ip[8] = 0xff
    m_ip[10:12] = b"\xff\xff"
    m_udp = bytearray(udph)
    m_udp[6:8] = b"\xff\xff"
    m_iba = bytearray(iba)
    m_iba[4] = 0xff
    crc = zlib.crc32(b"\xff" * 8 + bytes(m_ip) + bytes(m_udp) + bytes(m_iba)) & 0xffffffff
    eth = b"\x02\0\0\0\0\x02" + b"\x02\0\0\0\0\x01" + b"\x08\x00"
    return eth + iph + udph + iba + struct.pack("<I", crc)


def bth(opcode, dqpn, psn, ackreq=False):
    return struct.pack("!BBHII", opcode, 0, 0xffff, dqpn & 0xffffff,
                       (0x80000000 if ackreq else 0) | (psn & 0xffffff))


def write_pcap(path, frames):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            f.write(struct.pack("<IIII", 1700000000, 10 * i, len(fr), len(fr)))
            f.write(fr)


def make_srcport69(path):
    a, b = [10, 0, 0, 1], [10, 0, 0, 2]
    aeth = lambda msn: struct.pack("!I", (0x1f << 24) | msn)
    frames = [
        # The very first frame already comes from port 69: nothing seen before.
        rocev2_frame(b, a, 69, bth(17, 0x11, 99) + aeth(0), ident=1),
        rocev2_frame(a, b, 49152, bth(4, 0x12, 100, True), b"hello roce!!" * 2, ident=2),
        rocev2_frame(b, a, 69, bth(17, 0x11, 100) + aeth(1), ident=3),
        rocev2_frame(a, b, 49152, bth(4, 0x12, 101, True), b"x" * 13, ident=4),
        rocev2_frame(b, a, 53, bth(17, 0x11, 101) + aeth(2), ident=5),   # DNS port
        rocev2_frame(b, a, 161, bth(17, 0x11, 101) + aeth(2), ident=6),  # SNMP port
    ]
    write_pcap(path, frames)
    return len(frames)


def check_srcport(env, qptrace, cap, nframes):
    rows, err = tshark_fields(env, cap, ["roce.bth.opcode", "roce.icrc.status", "udp.srcport"])
    if rows is None:
        fail("srcport69: tshark", err)
        return
    bad = [f"frame {n}: {':'.join(r['protocols'])} icrc={r['roce.icrc.status']}"
           for n, r in rows.items()
           if "roce" not in r["protocols"] or r["roce.icrc.status"] != "1"
           or any(p in r["protocols"] for p in ("tftp", "dns", "snmp"))]
    if len(rows) != nframes or bad:
        fail("srcport69: source ports 69/53/161 decode as roce", "; ".join(bad) or f"{len(rows)} frames")
    else:
        ok("srcport69: source ports 69/53/161 to 4791 decode as roce, ICRC good")
    rows2, err = tshark_fields(env, cap, ["roce.bth.opcode"], extra=["-2"])
    if rows2 is None or any("roce" not in r["protocols"] for r in rows2.values()):
        fail("srcport69 -2", err or "not roce on the second pass")
    else:
        ok("srcport69: also with tshark -2")


# ---- superset: with the plugin, nothing the built-in dissector shows is lost -----------

IB_FIELDS = ["infiniband.bth.destqp", "infiniband.bth.psn", "infiniband.bth.opcode"]
# upper layers the built-in dissector finds (heuristics on infiniband.payload
# and infiniband.mad.cm.private, IBQP conversations): frame.protocols names
ULP_PROTOCOLS = ["nvme-rdma", "iser", "rpcordma", "smb_direct", "sdp", "lnet", "ipoib"]


def all_captures(root):
    """Every capture under captures/ (all folders)."""
    out = []
    for d, dirs, files in os.walk(root):
        for f in files:
            if f.endswith((".pcap", ".pcapng", ".erf")):
                out.append(os.path.join(d, f))
    return sorted(out)


def layer_rows(env, cap, extra=()):
    """frame number -> (layers, (destqp, psn, opcode) values) for every frame."""
    args = list(extra) + ["-r", cap, "-T", "fields", "-E", "occurrence=a",
                          "-E", "separator=\t", "-e", "frame.number", "-e", "frame.protocols"]
    for f in IB_FIELDS:
        args += ["-e", f]
    rc, out, err = env.tshark(args)
    if not out.strip():
        return None
    rows = {}
    for line in out.splitlines():
        parts = line.split("\t")
        parts += [""] * (2 + len(IB_FIELDS) - len(parts))
        try:
            n = int(parts[0])
        except ValueError:
            continue
        rows[n] = (parts[1].split(":"), tuple(parts[2:2 + len(IB_FIELDS)]))
    return rows


def check_superset(env, bare, root):
    """On every capture: the frames the built-in dissector calls infiniband,
    their BTH destqp/psn/opcode and every layer it finds (upper layers
    included) are all there with the plugin."""
    ncap = nib = 0
    ulp = {u: 0 for u in ULP_PROTOCOLS}
    extra = 0
    for path in all_captures(root):
        label = os.path.relpath(path, root)
        cap = env.add_capture(path, "superset_" + label.replace("/", "_"))
        env.fix_owner()
        b = layer_rows(bare, cap)
        if b is None:
            continue
        w = layer_rows(env, cap) or {}
        ncap += 1
        bad = []
        for n, (layers, vals) in sorted(b.items()):
            got = w.get(n)
            if got is None:
                bad.append(f"frame {n} missing")
                continue
            if "infiniband" in layers:
                nib += 1
                if got[1] != vals:
                    bad.append(f"frame {n} destqp/psn/opcode {got[1]} with, {vals} without")
            lost = [l for l in layers if l not in got[0]]
            if lost and not ("infiniband" not in layers and "infiniband" in got[0]):
                bad.append(f"frame {n} loses {lost}")
            for u in ULP_PROTOCOLS:
                if u in layers:
                    ulp[u] += 1
        for n, (layers, vals) in w.items():
            if "infiniband" in layers and "infiniband" not in b.get(n, ([], ()))[0]:
                extra += 1
            for u in ULP_PROTOCOLS:
                if u in layers and u not in b.get(n, ([], ()))[0]:
                    bad.append(f"frame {n} {u} only with the plugin")
        if bad:
            fail(f"superset {label}", f"{len(bad)} differences; first: " + "; ".join(bad[:4]))
    ok(f"superset: {ncap} captures read, {nib} infiniband frames (destqp/psn/opcode) "
       f"and every layer also there with the plugin; upper-layer frames "
       + ", ".join(f"{u} {c}" for u, c in ulp.items() if c)
       + f" the same with and without; {extra} more frames infiniband with the plugin "
       "(UDP source port guard)")
    if ncap == 0:
        fail("superset", "no capture read")


def check_ulp_captures(env, bare, root, qptrace):
    """The upper-layer captures (captures/rxe/ulp): each display filter
    matches the same frames with and without the plugin, and some; -z
    roce,qp (its ULP column: the service ID's upper layer) equals qptrace
    summary (its "ulp")."""
    caps = sorted(glob.glob(os.path.join(root, "rxe", "ulp", "*.pcap")))
    if not caps:
        skip("upper-layer captures", "none in captures/rxe/ulp")
        return
    for path in caps:
        label = os.path.relpath(path, root)
        cap = env.add_capture(path, "ulp_" + os.path.basename(path))
        env.fix_owner()
        seen = []
        for flt in ("nvme-rdma", "iser", "rpcordma", "smb_direct"):
            res = []
            for e in (bare, env):
                rc, out, err = e.tshark(["-r", cap, "-Y", flt, "-T", "fields", "-e", "frame.number"])
                res.append(out.split() if rc == 0 else None)
            if res[0] is None or res[1] is None:
                fail(f"{label}: -Y {flt}", "tshark failed")
            elif res[0] != res[1]:
                fail(f"{label}: -Y {flt}", f"{len(res[0])} frames without the plugin, {len(res[1])} with; "
                     f"first differing {sorted(set(res[0]) ^ set(res[1]), key=int)[:5]}")
            elif res[0]:
                seen.append(f"{flt} {len(res[0])}")
        if seen:
            ok(f"{label}: the same frames with and without the plugin: " + ", ".join(seen))
        else:
            fail(f"{label}", "no upper layer decoded (nvme-rdma, iser, rpcordma, smb_direct)")
        check_stats(env, qptrace, cap, label)
        ulps = {r["ULP"] for r in summary_rows(qptrace, cap)[0].values()} - {"-"}
        if ulps:
            ok(f"{label}: conversations named {sorted(ulps)} by their CM service ID")
        else:
            fail(f"{label}: ULP", "no conversation named by its CM service ID")


def check_heuristics(env, bare):
    rcs = []
    for e in (bare, env):
        rc, out, err = e.tshark(["-G", "heuristic-decodes"])
        rcs.append(set(out.splitlines()))
    lost = sorted(rcs[0] - rcs[1])
    if lost:
        fail("tshark -G heuristic-decodes", f"without the plugin only: {lost[:5]}")
    else:
        ok(f"tshark -G heuristic-decodes: the {len(rcs[0])} without the plugin are all there with it")


def make_random_sends(path, n=400, seed=15, multi=False):
    """RC and UD SENDs with random payloads (the payload heuristics' food):
    SEND Only (with and without immediate data, RC and UD); with multi, also
    whole First/Middle/Last messages, in order (their SEND Last trips a bug
    of Wireshark's own RPCoRDMA reassembly in two-pass mode, 4.0 to 4.6,
    with or without the plugin)."""
    import random
    rnd = random.Random(seed)
    a, b = [10, 0, 0, 1], [10, 0, 0, 2]
    frames = []
    psn = 1000
    for i in range(n):
        payload = bytes(rnd.getrandbits(8) for _ in range(rnd.choice((0, 1, 4, 8, 16, 28, 64, 100, 256, 1024))))
        kind = rnd.randrange(4)
        if kind == 1 and not multi:
            kind = 0
        if kind == 0:
            frames.append(rocev2_frame(a, b, 49152, bth(4, 0x12, psn, True), payload, ident=i + 1))
        elif kind == 1:  # a SEND First, Middles, a Last, in order, as a sender sends them
            for op in [0] + [1] * rnd.randrange(3):
                frames.append(rocev2_frame(a, b, 49152, bth(op, 0x12, psn),
                                           bytes(rnd.getrandbits(8) for _ in range(1024)), ident=i + 1))
                psn += 1
            frames.append(rocev2_frame(a, b, 49152, bth(2, 0x12, psn, True), payload, ident=i + 1))
        elif kind == 2:  # SEND Only with Immediate
            frames.append(rocev2_frame(a, b, 49152, bth(5, 0x12, psn) + struct.pack("!I", i), payload, ident=i + 1))
        else:  # UD SEND Only: DETH
            frames.append(rocev2_frame(a, b, 49152, bth(0x64, 0x13, psn) + struct.pack("!II", 0x11111111, 0x14),
                                       payload, ident=i + 1))
        psn += 1
    write_pcap(path, frames)
    return len(frames)


def dissector_bugs(e, cap, extra):
    rc, out, err = e.tshark(extra + ["-r", cap, "-V"])
    return rc, out.count("Dissector bug") + err.count("Dissector bug")


def check_two_pass_random(env, bare, cap, cap_multi):
    """SENDs with random payloads: no dissector bug with the plugin, one
    pass or two; with multi-packet messages, none the built-in dissectors
    do not report without the plugin too."""
    for extra in ([], ["-2"]):
        what = f"tshark {' '.join(extra) or '(one pass)'} -V over random single-packet SENDs"
        rc, bugs = dissector_bugs(env, cap, extra)
        _, theirs = dissector_bugs(bare, cap, extra)
        if rc != 0 or bugs:
            fail(what, f"{bugs} dissector bug reports with the plugin, {theirs} without (rc {rc})")
        else:
            ok(f"{what}: no dissector bug with the plugin ({theirs} without)")
        what = f"tshark {' '.join(extra) or '(one pass)'} -V over random SEND messages (First/Middle/Last too)"
        rc, bugs = dissector_bugs(env, cap_multi, extra)
        _, theirs = dissector_bugs(bare, cap_multi, extra)
        if rc != 0 or bugs > theirs:
            fail(what, f"{bugs} dissector bug reports with the plugin, {theirs} without (rc {rc})")
        else:
            ok(f"{what}: {bugs} dissector bug reports with the plugin, {theirs} without "
               "(the built-in RPCoRDMA's own)" if theirs else f"{what}: no dissector bug")


# ---- the compact tree: what the built-in tree shows is not printed twice -------

# roce header field -> the built-in dissector's field with the same value
# (tests/tshark_diff.py's mapping; the built-in puts AtomicETH's VA and
# R_Key in its RETH fields).
BUILTIN_TWIN = {
    "roce.lrh.vl": "infiniband.lrh.vl", "roce.lrh.lver": "infiniband.lrh.lver",
    "roce.lrh.sl": "infiniband.lrh.sl", "roce.lrh.lnh": "infiniband.lrh.lnh",
    "roce.lrh.dlid": "infiniband.lrh.dlid", "roce.lrh.pktlen": "infiniband.lrh.pktlen",
    "roce.lrh.slid": "infiniband.lrh.slid",
    "roce.grh.ipver": "infiniband.grh.ipver", "roce.grh.tclass": "infiniband.grh.tclass",
    "roce.grh.flowlabel": "infiniband.grh.flowlabel", "roce.grh.paylen": "infiniband.grh.paylen",
    "roce.grh.nxthdr": "infiniband.grh.nxthdr", "roce.grh.hoplmt": "infiniband.grh.hoplmt",
    "roce.grh.sgid": "infiniband.grh.sgid", "roce.grh.dgid": "infiniband.grh.dgid",
    "roce.bth.opcode": "infiniband.bth.opcode", "roce.bth.se": "infiniband.bth.se",
    "roce.bth.m": "infiniband.bth.m", "roce.bth.padcnt": "infiniband.bth.padcnt",
    "roce.bth.tver": "infiniband.bth.tver", "roce.bth.pkey": "infiniband.bth.p_key",
    "roce.bth.dqpn": "infiniband.bth.destqp", "roce.bth.ackreq": "infiniband.bth.a",
    "roce.bth.resv7": "infiniband.bth.reserved7", "roce.bth.psn": "infiniband.bth.psn",
    "roce.rdeth.eecnxt": "infiniband.rdeth.eecnxt",
    "roce.deth.qkey": "infiniband.deth.q_key", "roce.deth.sqpn": "infiniband.deth.srcqp",
    "roce.reth.va": "infiniband.reth.va", "roce.reth.rkey": "infiniband.reth.r_key",
    "roce.reth.dmalen": "infiniband.reth.dmalen",
    "roce.atomiceth.va": "infiniband.reth.va", "roce.atomiceth.rkey": "infiniband.reth.r_key",
    "roce.atomiceth.swap": "infiniband.atomiceth.swapdt",
    "roce.atomiceth.compare": "infiniband.atomiceth.cmpdt",
    "roce.aeth.syndrome": "infiniband.aeth.syndrome", "roce.aeth.msn": "infiniband.aeth.msn",
    "roce.aeth.kind": "infiniband.aeth.syndrome.opcode",
    "roce.aeth.credits": "infiniband.aeth.syndrome.credit_count",
    "roce.aeth.rnr_timer": "infiniband.aeth.syndrome.timer",
    "roce.aeth.nak_code": "infiniband.aeth.syndrome.error_code",
    "roce.atomicacketh.orig": "infiniband.atomicacketh.origremdt",
    "roce.immdt": "infiniband.immdt", "roce.ieth": "infiniband.ieth",
}
# built-in fields of type FT_BYTES (printed as hex digits without 0x)
BUILTIN_BYTES = ("infiniband.immdt", "infiniband.ieth")
# the roce tree's header items, as tshark -V prints them
HEADER_LINES = ("Local Route Header", "Global Route Header", "Base Transport Header",
                "RDETH", "DETH", "XRCETH", "FETH", "RETH", "AtomicETH", "AETH",
                "AtomicAckETH", "Immediate Data:", "Invalidate R_Key:", "[Payload Length:",
                "Payload:", "[Transport:", "[Direction:")


def roce_sections(text):
    """frame number -> the lines of its roce tree in tshark -V (the top
    line: "<transport> (qptrace), ...")."""
    frames, cur, sec = {}, None, None
    for line in text.splitlines():
        m = re.match(r"Frame (\d+):", line)
        if m:
            cur, sec = int(m.group(1)), None
            continue
        if cur is None or not line:
            continue
        if not line.startswith(" "):
            sec = None
            if re.match(r"(RoCEv2|RoCEv1|IB) \(qptrace\)", line):
                sec = frames.setdefault(cur, [])
        if sec is not None:
            sec.append(line)
    return frames


def check_compact(env, caps):
    """The roce tree is compact where the built-in tree shows the headers:
    on such a frame tshark -V prints no roce header item (their fields are
    there hidden: each has the value of its built-in twin, which is there),
    the top line says the ICRC is correct (a bad one is printed, with its
    expert info); on the others (CNP, XRC, RD, malformed, FECN/BECN) the
    roce header tree is printed.  Over
    every capture of captures/public and captures/made, merged (but those
    of LINKTYPE_INFINIBAND, which 4.0 cannot read; IB in ERF is there)."""
    caps = [(c, l) for c, l in caps if linktype(c) != 247]
    merged = os.path.join(env.caps, "gen_compact_all.pcapng")
    p = subprocess.run(["mergecap", "-a", "-w", merged] + [c for c, _ in caps],
                       capture_output=True, text=True)
    if p.returncode != 0:
        fail("compact tree", f"mergecap: {p.stderr.strip()[-200:]}")
        return
    env.fix_owner()
    rc, out, err = env.tshark(["-r", merged, "-V"])
    secs = roce_sections(out)
    twins = list(BUILTIN_TWIN.items())
    rows, err = tshark_fields(env, merged, [f for pair in twins for f in pair] +
                              ["roce.icrc.status", "roce.vcrc.status", "roce.bth.fecn",
                               "roce.bth.becn", "roce.error", "roce.bth"])
    if rows is None:
        fail("compact tree", err)
        return
    compact, full, bad = 0, 0, []
    for n, r in sorted(rows.items()):
        sec = secs.get(n)
        if not r.get("roce.bth") or sec is None:
            continue
        items = [l.strip() for l in sec[1:]]
        printed = [h for h in HEADER_LINES if any(i.startswith(h) for i in items)]
        is_compact = not any(i.startswith("Base Transport Header") for i in items)
        icrc_bad = r["roce.icrc.status"] == "0" or r["roce.vcrc.status"] == "0"
        if icrc_bad and not any(i.startswith(("Invariant CRC:", "Variant CRC:")) for i in items):
            bad.append(f"frame {n}: bad CRC not printed")
        if not is_compact:
            full += 1
            continue
        compact += 1
        if printed:
            bad.append(f"frame {n}: compact, but prints {printed}")
        if r["roce.error"] or parse_num(r["roce.bth.fecn"]) or parse_num(r["roce.bth.becn"]):
            bad.append(f"frame {n}: compact with a decode error or FECN/BECN")
        if r["roce.icrc.status"] == "1" and "ICRC correct" not in sec[0]:
            bad.append(f"frame {n}: top line does not say ICRC correct: {sec[0]}")
        for mine, theirs in twins:
            if r[mine] == "":
                continue
            want = int(r[theirs], 16) if theirs in BUILTIN_BYTES and r[theirs] else parse_num(r[theirs])
            if r[theirs] == "" or parse_num(r[mine]) != want:
                bad.append(f"frame {n}: {mine}={r[mine]!r} hidden, built-in {theirs}={r[theirs]!r}")
    what = f"compact roce tree over {len(caps)} captures ({compact} compact frames, {full} full)"
    if bad:
        fail(what, f"{len(bad)} problems: " + "; ".join(bad[:8]))
    elif compact < 1000 or full < 10:
        fail(what, "too few frames of either kind to say anything")
    else:
        ok(f"{what}: every hidden header field equals the built-in's, bad CRCs printed")


# ---- the colouring rules (dissector/roce.colorfilters) --------------------------------

COLOR_CAPTURES = ("bad_icrc", "naks", "nak_gbn", "rnr", "cnp_ecn", "timeout_resend",
                  "read_retry", "read_resp_lost", "ip_options", "clean_write")


def check_colorfilters(env, made, rules, installer):
    """dissector/install-colorfilters makes the profile RoCE; every rule's
    filter compiles; tshark -C RoCE --color colours each frame with the
    first RoCE rule its frame matches (each rule used somewhere), and the
    others keep Wireshark's default rules."""
    pdir = os.path.join(env.home, ".config", "wireshark", "profiles")
    p = subprocess.run([installer, pdir], capture_output=True, text=True)
    prof = os.path.join(pdir, "RoCE", "colorfilters")
    if p.returncode != 0 or not os.path.exists(prof):
        fail("install-colorfilters", (p.stderr or p.stdout).strip()[-200:])
        return
    env.fix_owner()
    ours = []
    with open(rules) as f:
        for line in f:
            m = re.match(r"@([^@]+)@([^@]+)@\[", line)
            if m:
                ours.append((m.group(1), m.group(2)))
    with open(prof) as f:
        names = [re.match(r"@([^@]+)@", l).group(1) for l in f if l.startswith("@")]
    if names[:len(ours)] != [n for n, _ in ours] or len(names) <= len(ours):
        fail("profile RoCE", f"rules {names[:len(ours) + 2]}: ours first, then Wireshark's defaults")
    else:
        ok(f"profile RoCE: the {len(ours)} RoCE rules, then {len(names) - len(ours)} default rules")
    caps = [(c, l) for c, l in made if os.path.basename(l)[:-5] in COLOR_CAPTURES]
    if not caps:
        fail("colouring rules", "none of the made captures they are tested on")
        return
    bad = []
    for name, flt in ours:
        rc, out, err = env.tshark(["-r", caps[0][0], "-Y", flt, "-c", "1"])
        if rc != 0:
            bad.append(f"{name}: {err.strip()[-120:]}")
    if bad:
        fail("colouring rules compile", "; ".join(bad))
        return
    ok(f"the {len(ours)} colouring rules' filters compile")
    used = {n: 0 for n, _ in ours}
    bad = []
    for cap, label in caps:
        want = {}
        for name, flt in ours:
            rc, out, err = env.tshark(["-r", cap, "-Y", flt, "-T", "fields", "-e", "frame.number"])
            for x in out.split():
                want.setdefault(int(x), name)  # the first rule that matches
        rc, out, err = env.tshark(["-C", "RoCE", "--color", "-r", cap, "-T", "fields",
                                   "-e", "frame.number", "-e", "frame.coloring_rule.name"])
        if rc != 0:
            bad.append(f"{label}: tshark -C RoCE: {err.strip()[-120:]}")
            continue
        for line in out.splitlines():
            n, _, got = line.partition("\t")
            n = int(n)
            exp = want.get(n)
            if exp:
                used[exp] += 1
                if got != exp:
                    bad.append(f"{label} frame {n}: {got!r}, expected {exp!r}")
            elif got in used:
                bad.append(f"{label} frame {n}: {got!r} but its filter does not match")
    unused = [n for n, c in used.items() if not c]
    if bad or unused:
        fail("tshark -C RoCE --color", "; ".join(bad[:4]) + (f" unused rules {unused}" if unused else ""))
    else:
        ok("tshark -C RoCE --color colours frames by the first RoCE rule that matches: " +
           ", ".join(f"{n} {c}" for n, c in used.items()))


# ---- main ---------------------------------------------------------------------------

def tshark_major_minor():
    """The major.minor of the tshark on PATH ("TShark (Wireshark) 4.4.19 ...")."""
    p = subprocess.run(["tshark", "--version"], capture_output=True, text=True)
    m = re.search(r"\b(\d+)\.(\d+)\.\d+", p.stdout.splitlines()[0] if p.stdout else "")
    return f"{m.group(1)}.{m.group(2)}" if m else None


def run_decode_part(env, a, caps, made, have, values, gen, nframes):
    """--part decode: each capture's fields, verdicts, stats and findings;
    one meaning over every capture."""
    check_srcport(env, a.qptrace, gen, nframes)
    check_capture(env, a.qptrace, gen, "gen_srcport69.pcap")

    # Decode As still reaches the built-in dissector.
    probe = next((c for c, l in caps if l.endswith("clean_write.pcap")), None)
    if probe:
        rows, err = tshark_fields(env, probe, [], extra=["-d", "udp.port==4791,infiniband"])
        if rows and all("infiniband" in r["protocols"] and "roce" in r["protocols"]
                        for r in rows.values()):
            ok("Decode As udp.port==4791,infiniband: the built-in dissector decodes, roce analyses")
        else:
            fail("Decode As infiniband", err or "not infiniband")

        # The built-in dissector re-registers UDP 4791 whenever one of its
        # preferences is applied; RoCE keeps the port.
        for o in ("infiniband.try_heuristic_first:FALSE", "infiniband.rroce.port:4792"):
            rows, err = tshark_fields(env, probe, [], extra=["-o", o])
            if rows and all("roce" in r["protocols"] for r in rows.values()):
                ok(f"-o {o}: still decoded as roce")
            else:
                fail(f"-o {o}", err or "not roce")

    for cap, label in caps:
        check_capture(env, a.qptrace, cap, label, stats=not label.startswith(("public/", "made/")))
    check_verdicts(env, a.qptrace, made, have)
    check_gbn_trigger(env, a.qptrace, made, values)
    check_filter_forms(env, a.qptrace, made)
    check_qp_titles(a.qptrace, made)
    check_pfc(env, a.qptrace, made)
    check_findings(env, a.qptrace, made)
    multi = next((c for c, l in caps if l.endswith("made/multi_qp.pcap")), None)
    if multi:
        check_stats_filtered(env, a.qptrace, multi, "made/multi_qp.pcap")
        check_conv_table(env, a.qptrace, caps, multi)
        check_conv_text(env, a.qptrace, [(c, l) for c, l in caps if l in (
            "made/multi_qp.pcap", "made/cm_full.pcap", "made/clean_write.pcap",
            "public/linlinw5_rping.pcap")])
    else:
        fail("-z roce,qp,FILTER", "made/multi_qp.pcap not among the captures")
    # (over every capture under captures/, but here: the two parts take
    # about the same time so)
    if a.captures:
        check_one_meaning(env, a.qptrace, [(c, os.path.relpath(c, a.captures))
                                           for c in all_captures(a.captures)])


def run_corpus_part(env, bare, a, caps, made):
    """--part corpus: the checks over the whole corpus."""
    check_compact(env, [(c, l) for c, l in caps if l.startswith(("public/", "made/"))])

    here = os.path.dirname(os.path.abspath(__file__))
    check_colorfilters(env, made, os.path.join(here, "..", "roce.colorfilters"),
                       os.path.join(here, "..", "install-colorfilters"))

    # superset: the same tshark without the plugin
    check_heuristics(env, bare)
    rs = os.path.join(env.caps, "gen_random_sends.pcap")
    make_random_sends(rs)
    rsm = os.path.join(env.caps, "gen_random_send_messages.pcap")
    make_random_sends(rsm, multi=True)
    env.fix_owner()
    check_two_pass_random(env, bare, rs, rsm)
    if a.captures:
        check_ulp_captures(env, bare, a.captures, a.qptrace)
        check_superset(env, bare, a.captures)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--qptrace", required=True)
    ap.add_argument("--captures", help="directory with public/ and made/")
    ap.add_argument("--ws-version", help="Wireshark major.minor the plugin was built for "
                    "(meson passes it; default: that of tshark --version)")
    ap.add_argument("--verdicts", help="analyzer/qpt_verdict.h (default: next to --captures)")
    ap.add_argument("--part", choices=("decode", "corpus"),
                    help="only these checks (default: both; see above)")
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
    if a.captures:  # tshark runs in the test's HOME: never a relative path
        a.captures = os.path.abspath(a.captures)
    decode = a.part in (None, "decode")
    corpus = a.part in (None, "corpus")
    verdicts = a.verdicts or (a.captures and os.path.join(a.captures, "..", "analyzer",
                                                          "qpt_verdict.h"))
    if not verdicts or not os.path.exists(verdicts):
        print("qpt_verdict.h not found (--verdicts)")
        return 1
    set_tables(verdicts)

    if not shutil.which("tshark"):
        print("tshark not found: skipping")
        return 77
    if os.geteuid() == 0 and not shutil.which("setpriv"):
        print("running as root without setpriv (util-linux): Wireshark would ignore the "
              "personal plugin folder; skipping")
        return 77
    tshark_ver = tshark_major_minor()
    ws_version = a.ws_version or tshark_ver
    if not ws_version:
        print("cannot tell the Wireshark version (tshark --version)")
        return 1
    print(f"plugin built for Wireshark {ws_version}, tshark is {tshark_ver}")
    if tshark_ver != ws_version:
        # The loader would refuse the plugin (or not look in its folder).
        fail("Wireshark version", f"plugin built for {ws_version}, tshark is {tshark_ver}")
        return finish()
    env = Env(a.plugin, ws_version)
    global BARE
    BARE = bare = Env(None, ws_version)
    bare.fix_owner()
    try:
        caps = []
        if a.captures:
            for sub in ("public", "made"):
                for p in sorted(glob.glob(os.path.join(a.captures, sub, "*.pcap"))):
                    caps.append((env.add_capture(p, f"{sub}_{os.path.basename(p)}"),
                                 f"{sub}/{os.path.basename(p)}"))
        for p in a.files:
            caps.append((env.add_capture(p), p))
        gen = os.path.join(env.caps, "gen_srcport69.pcap")
        nframes = make_srcport69(gen)
        env.fix_owner()

        rc, out, err = env.tshark(["-G", "plugins"])
        # "roce.so <TAB> version <TAB> type <TAB> path", from our folder
        want = f"plugins/{ws_version}/epan/roce.so"
        lines = [l for l in out.splitlines() if l.split("\t")[0].strip() == "roce.so"]
        if lines and all(l.rstrip().endswith(want) for l in lines) and len(lines) == 1:
            ok(f"tshark -G plugins lists roce.so from {want}")
        elif lines:
            fail("tshark -G plugins", f"roce.so listed, not (only) from {want}: {lines}")
            return finish()
        else:
            fail("tshark -G plugins", f"roce.so not listed (rc {rc}, {err.strip()[-200:]})")
            return finish()
        rc, out, err = env.tshark(["-G", "fields"])
        have = {line.split("\t")[2] for line in out.splitlines()
                if line.startswith("F\t") and line.count("\t") >= 2}
        missing = [f for f in required_fields() if f not in have]
        if missing:
            fail("tshark -G fields", f"missing {missing}")
        else:
            ok(f"tshark -G fields lists the {len(required_fields())} required roce.* fields")
        kinds = [k for k, f in EVENT_FIELDS.items() if f not in have]
        if kinds:
            fail("verdict fields", f"qpt_verdicts[] kinds without a roce.analysis field: {kinds}")
        else:
            ok(f"every qpt_verdicts[] kind has its field ({len(EVENT_FIELDS)})")
        check_expert_names(out)
        rc, out, err = env.tshark(["-G", "values"])
        values = {}
        for line in out.splitlines():
            t = line.split("\t")
            if len(t) == 4 and t[0] == "V" and t[1].startswith("roce."):
                values.setdefault(t[1], {})[int(t[2], 0)] = t[3]
        rc, out, err = env.tshark(["-G", "protocols"])
        if any(l.split("\t")[2:3] == ["roce"] for l in out.splitlines()):
            ok("protocol roce registered")
        else:
            fail("tshark -G protocols", "roce not listed")
        check_stat_registered(env, a.plugin)

        made = [(c, l) for c, l in caps if l.startswith("made/")]
        if decode:
            run_decode_part(env, a, caps, made, have, values, gen, nframes)

        if corpus:
            run_corpus_part(env, bare, a, caps, made)
    finally:
        env.cleanup()
        bare.cleanup()
    return finish()


def finish():
    print(f"{PASS} passed, {FAIL} failed" + (f", {SKIP} skipped" if SKIP else ""))
    return 1 if FAIL else 0


if __name__ == "__main__":
    sys.exit(main())
