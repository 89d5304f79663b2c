#!/usr/bin/env python3
"""The multi-file, stdin and time-window paths give the same summary as the
equivalent single file.

usage: check_input.py QPTRACE CAPTURE...
For each capture: split it in two at the middle frame (two files), and
check `summary --json A B` (merged timeline) == `summary --json CAPTURE`;
split it by alternate frames when its timestamps are strictly increasing
(so the merge order is unambiguous) and check the same; `cat CAPTURE |
qptrace summary --json -` == the file; `--from/--to` around the whole
capture == the file; `--to` at the last frame of the first half shows
the conversations that have a frame by then, numbered and paired as in the
whole file, and counts the frames up to there (tests/rollup.py checks the
window's counts against events and packets); `--each A B` gives two summaries equal to A and B alone.
Split by alternate frames, `events --json A B` gives the whole file's
events, each naming the file and the frame in it that it happened at.
A pcapng copy with the frames spread over two interfaces (of the same link
type: libpcap cannot mix link types in one file) gives the same summary as
the pcap.  Decoding forced into the reading thread or into the analysing thread
(QPTRACE_DECODE_IN=reader|analyser; by default they share it by load)
gives the same summary and events as the default.
Prints `N passed, N failed`.
"""
import json
import os
import struct
import subprocess
import sys
import tempfile


def read_pcap(path):
    data = open(path, "rb").read()
    hdr, off, recs = data[:24], 24, []
    endian = "<" if data[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    while off + 16 <= len(data):
        sec, frac, cl, wl = struct.unpack(endian + "IIII", data[off:off + 16])
        recs.append((sec, frac, data[off:off + 16 + cl]))
        off += 16 + cl
    return hdr, recs


def write_pcap(path, hdr, recs):
    with open(path, "wb") as f:
        f.write(hdr)
        for r in recs:
            f.write(r[2])


def linktype_of(hdr):
    endian = "<" if hdr[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    return struct.unpack(endian + "I", hdr[20:24])[0] & 0xffff


def write_pcapng_two_interfaces(path, hdr, recs):
    """The records as pcapng: a section, two interfaces of the capture's link
    type with nanosecond timestamps (if_tsresol 9), frames alternately on
    each."""
    endian = "<" if hdr[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    nsec = hdr[:4] in (b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d")
    linktype = linktype_of(hdr)

    def block(btype, body):
        body += b"\0" * (-len(body) % 4)
        n = 12 + len(body)
        return struct.pack("<II", btype, n) + body + struct.pack("<I", n)

    out = [block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))]
    tsresol = struct.pack("<HHB3x", 9, 1, 9) + struct.pack("<HH", 0, 0)
    for _ in range(2):
        out.append(block(1, struct.pack("<HHI", linktype, 0, 262144) + tsresol))
    for i, (sec, frac, raw) in enumerate(recs):
        _, _, cl, wl = struct.unpack(endian + "IIII", raw[:16])
        ts = sec * 10**9 + (frac if nsec else frac * 1000)
        out.append(block(6, struct.pack("<IIIII", i % 2, ts >> 32, ts & 0xffffffff, cl, wl)
                         + raw[16:16 + cl]))
    with open(path, "wb") as f:
        f.write(b"".join(out))


def summary(qptrace, args, stdin=None, env=None):
    p = subprocess.run([qptrace, "summary", "--json", "-q"] + args, input=stdin,
                       capture_output=True, timeout=60,
                       env=dict(os.environ, **(env or {})))
    if p.returncode:
        raise RuntimeError(f"summary {args} exited {p.returncode}: {p.stderr.decode()}")
    out = [json.loads(l) for l in p.stdout.decode().splitlines() if l.strip()]
    for o in out:
        o.pop("file", None)
    return out


def events(qptrace, cap, env):
    p = subprocess.run([qptrace, "events", "-q", cap], capture_output=True, timeout=60,
                       env=dict(os.environ, **env))
    if p.returncode:
        raise RuntimeError(f"events {cap} exited {p.returncode}: {p.stderr.decode()}")
    return p.stdout


def events_json(qptrace, files):
    p = subprocess.run([qptrace, "events", "--json", "-q"] + files, capture_output=True,
                       timeout=60)
    if p.returncode:
        raise RuntimeError(f"events {files} exited {p.returncode}: {p.stderr.decode()}")
    return [json.loads(l) for l in p.stdout.decode().splitlines() if l.strip()]


def check(qptrace, cap, tmp):
    errs = []
    hdr, recs = read_pcap(cap)
    whole = summary(qptrace, [cap])
    half = len(recs) // 2
    a, b = os.path.join(tmp, "a.pcap"), os.path.join(tmp, "b.pcap")
    write_pcap(a, hdr, recs[:half])
    write_pcap(b, hdr, recs[half:])
    if summary(qptrace, [a, b]) != whole:
        errs.append("two halves merged differ from the whole file")
    # Two files are two capture points (README, "How the analysis
    # decides"): a frame that repeats byte for byte in the other file is a
    # capture copy by that rule, whichever file is given first, where the
    # whole file (one point) has a resend.  Given in order, the first
    # file's frames all come before the second's, so no sighting of the
    # first point is kept for the second to match; in reverse order both
    # points are known from the start.
    repeats = {r[2][16:] for r in recs[:half]} & {r[2][16:] for r in recs[half:]}
    if (recs[half][0], recs[half][1]) > (recs[half - 1][0], recs[half - 1][1]) \
            and not repeats and summary(qptrace, [b, a]) != whole:
        # (with a timestamp tie at the split, mergecap order is file order)
        errs.append("two halves given in reverse order differ from the whole file")
    each = summary(qptrace, ["--each", a, b])
    if each != summary(qptrace, [a]) + summary(qptrace, [b]):
        errs.append("--each differs from the files analysed alone")
    times = [(r[0], r[1]) for r in recs]
    if all(x < y for x, y in zip(times, times[1:])):
        write_pcap(a, hdr, recs[0::2])
        write_pcap(b, hdr, recs[1::2])
        if summary(qptrace, [a, b]) != whole:
            errs.append("alternate frames merged differ from the whole file")
        want = events_json(qptrace, [cap])
        got = events_json(qptrace, [a, b])
        where = [(e.pop("file", None), e.pop("file_frame", None)) for e in got]
        if got != want:
            errs.append("alternate frames merged: events differ from the whole file's")
        # merged frame n is frame (n + 1) / 2 of a when odd, n / 2 of b when even
        bad = [(e["frame"], w) for e, w in zip(got, where)
               if w != ((a, (e["frame"] + 1) // 2) if e["frame"] % 2 else (b, e["frame"] // 2))]
        if bad:
            errs.append(f"alternate frames merged: events name the wrong file/frame: {bad[:3]}")
    if summary(qptrace, ["-"], stdin=open(cap, "rb").read()) != whole:
        errs.append("stdin differs from the file")
    ng = os.path.join(tmp, "two_interfaces.pcapng")
    write_pcapng_two_interfaces(ng, hdr, recs)
    if linktype_of(hdr) == 101:
        # libpcap 1.10 compares a second raw-IP interface's link type (101)
        # with the DLT it mapped the first one to (12): it refuses the file.
        # qptrace must say so, and how to read it.
        p = subprocess.run([qptrace, "summary", "-q", ng], capture_output=True,
                           timeout=60)
        if p.returncode != 2 or b"one file per interface" not in p.stderr:
            errs.append("raw-IP pcapng with two interfaces: no clear message")
    elif summary(qptrace, [ng]) != whole:
        errs.append("pcapng with the frames on two interfaces differs from the pcap")
    for env in ({"QPTRACE_DECODE_IN": "reader"}, {"QPTRACE_DECODE_IN": "analyser"}):
        name = " ".join(f"{k}={v}" for k, v in env.items())
        if summary(qptrace, [cap], env=env) != whole:
            errs.append(f"{name}: summary differs from the default")
        if events(qptrace, cap, env) != events(qptrace, cap, {}):
            errs.append(f"{name}: events differ from the default")
    first, last = recs[0], recs[-1]
    digits = 9 if hdr[:4] in (b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d") else 6

    def ts(rec, add=0):  # exact decimal text of a record's time
        return f"{rec[0] + add}.{rec[1]:0{digits}d}"

    # Time windows hold for a clock that never steps back (time_backwards
    # is made to: no window is the whole of it).
    if any(x > y for x, y in zip(times, times[1:])):
        return errs
    def windowed(args):
        """The summary with a window, less its window member (the window's
        own counts: for a window around everything, the whole file's
        RoCE/IB packets)."""
        out = summary(qptrace, args)
        for o in out:
            w = o.pop("window", None)
            if w is None or w["packets"] != o["totals"]["iba_packets"]:
                errs.append(f"{args}: window {w} against {o['totals']['iba_packets']} packets")
        return out

    if windowed(["--from", ts(first, -1), "--to", ts(last, 1), cap]) != whole:
        errs.append("a window around the whole capture differs from the file")
    if windowed(["--from", "+0", cap]) != whole:
        errs.append("--from +0 differs from the file")
    # A window ending at the first half's last frame shows the conversations
    # with a frame up to there, numbered and paired as the whole file's
    # analysis has them, and counts the frames up to there.
    hl = recs[half - 1]
    got = summary(qptrace, ["--to", ts(hl), cap])
    t_hl = hl[0] + hl[1] / 10 ** digits
    same = lambda c: {k: c[k] for k in ("id", "transport", "paired_by", "endpoints")}
    upto = sum(1 for r in recs if r[0] + r[1] / 10 ** digits <= t_hl + 1e-9)
    for g, w in zip(got, whole):
        want_convs = [same(c) for c in w["conversations"]
                      if any(d["packets"] and d["first_time"] <= t_hl + 1e-9
                             for d in c["directions"])]
        if [same(c) for c in g["conversations"]] != want_convs or g["totals"]["frames"] != upto:
            errs.append("--to at the middle does not show the whole file's conversations "
                        f"seen by then, or counts other than its {upto} frames")
    return errs


def main():
    qptrace, caps = sys.argv[1], sys.argv[2:]
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for cap in caps:
            try:
                errs = check(qptrace, cap, tmp)
            except Exception as e:
                errs = [f"error: {e}"]
            if errs:
                failed += 1
                print(f"FAIL {cap}")
                for e in errs:
                    print("   ", e)
            else:
                passed += 1
                print(f"ok   {cap}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
