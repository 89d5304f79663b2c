#!/usr/bin/env python3
"""shard.py - qptrace -j N gives what -j 1 gives, byte for byte.

-j N shares conversations out over N analysis threads by address pair
(analyzer/cli/shard.c); the output must not show it.  The reference is the
same binary with -j 1, which runs the one-thread loop untouched; nothing
here repeats the sharding rule.

1. Every capture under captures/ (and the hostile folder's other files):
   summary (text, --json, -l, -l -v), events (text, --json), packets (text,
   --json, -v) with -j 1, -j 2, -j 3, -j 8 and without -j (the default):
   stdout, stderr and exit status identical.  Under AddressSanitizer
   (tools/sanitize), where every run costs ~3 times as much, a sample of
   the captures (asan_sample: every hostile one, one of each kind, a fixed
   share of the rest), and the output says how many; QPT_SHARD_ALL=1 takes
   them all there too.  Parts 2 to 5 are the same under ASan.
2. Several capture points: a capture merged with itself (every packet a
   capture copy from a second tap), two different captures merged, --each,
   -c N, --from: identical.
3. A CM comm ID used by two address pairs (the engine keeps the first REQ
   of an ID whoever sent it): a made copy of cm_rc.pcap with other
   addresses merged with the original.  The one-thread result shows the
   collision (the copy's CM messages are of no known connection), and -j N
   must give it too.
4. -j N really shares out: QPTRACE_THREAD_TIMES lists N analysis threads,
   their frames add up to the frames read, more than one has frames.
5. Commands that do not take -j refuse it (plot, grade, monitor, verdicts);
   -j 0 and -j x are refused.

4b. With qpscen (tools/qpscen): a made capture over 64 address pairs
   spreads over 2, 3, 4 and 8 threads, each with a share of the frames.

    shard.py QPTRACE ROOT [QPSCEN]
"""
import concurrent.futures
import glob
import os
import re
import struct
import subprocess
import sys
import tempfile

import tap  # tests/tap.py
from tap import check


def run(qptrace, args, env=None):
    e = dict(os.environ)
    e.pop("QPTRACE_THREAD_TIMES", None)
    e.update(env or {})
    r = subprocess.run([qptrace, *args], capture_output=True, timeout=300, env=e)
    return r.returncode, r.stdout, r.stderr


COMMANDS = (["summary"], ["summary", "--json"], ["summary", "-l"], ["summary", "-l", "-v"],
            ["events"], ["events", "--json"], ["packets"], ["packets", "--json"],
            ["packets", "-v"])
JOBS = (["-j", "2"], ["-j", "3"], ["-j", "8"], [])


def same(qptrace, args, label, jobs=JOBS):
    """args with -j 1 against every other -j: identical; the differences."""
    ref = run(qptrace, [args[0], "-j", "1", *args[1:]])
    bad = []
    for j in jobs:
        got = run(qptrace, [args[0], *j, *args[1:]])
        if got != ref:
            which = [k for k, a, b in zip(("exit status", "stdout", "stderr"), ref, got) if a != b]
            bad.append(f"{' '.join(j) or 'default'}: {', '.join(which)} differ")
    return label, bad


def compare_all(qptrace, runs, jobs=JOBS):
    js = ", ".join(" ".join(j)[3:] or "default" for j in jobs)
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        for label, bad in pool.map(lambda r: same(qptrace, *r, jobs), runs):
            check(not bad, f"{label}: -j 1 = -j {js}" + (f" ({'; '.join(bad)})" if bad else ""))


def readdress(src, dst, delta):
    """A copy of classic pcap src with every IPv4 address's last byte moved by
    delta (IP header checksum redone; the ICRC then fails: use --no-crc)."""
    data = bytearray(open(src, "rb").read())
    magic = struct.unpack("<I", data[:4])[0]
    endian = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    link = struct.unpack(endian + "I", data[20:24])[0]
    assert link == 1, "Ethernet expected"
    off = 24
    while off + 16 <= len(data):
        incl = struct.unpack(endian + "I", data[off + 8:off + 12])[0]
        f = off + 16
        if incl >= 34 and data[f + 12:f + 14] == b"\x08\x00":
            ip = f + 14
            ihl = (data[ip] & 15) * 4
            for a in (ip + 15, ip + 19):
                data[a] = (data[a] + delta) & 0xFF
            data[ip + 10:ip + 12] = b"\0\0"
            s = sum(struct.unpack(f"!{ihl // 2}H", bytes(data[ip:ip + ihl])))
            while s >> 16:
                s = (s & 0xFFFF) + (s >> 16)
            data[ip + 10:ip + 12] = struct.pack("!H", ~s & 0xFFFF)
        off = f + incl
    open(dst, "wb").write(data)


SAMPLE_EVERY = 8


def capture_kind(path):
    """(folder, file format, link type) of a capture, from its first bytes
    (pcap: the header's link type; pcapng: the first IDB's)."""
    folder = path.split("/")[1]
    if path.endswith((".gz", ".zst", ".xz", ".bz2", ".lz4")):
        return folder, path.rsplit(".", 1)[1], None
    with open(path, "rb") as f:
        h = f.read(24)
        if len(h) < 24:
            return folder, "short", None
        if h[:4] == b"\x0a\x0d\x0d\x0a":
            e = "<" if h[8:12] == b"\x4d\x3c\x2b\x1a" else ">"
            f.seek(struct.unpack(e + "I", h[4:8])[0])
            idb = f.read(10)
            return folder, "pcapng" + e, struct.unpack(e + "H", idb[8:10])[0] if len(idb) == 10 else None
    fmt = {0xA1B2C3D4: "pcap<", 0xA1B23C4D: "pcap<ns", 0xD4C3B2A1: "pcap>",
           0x4D3CB2A1: "pcap>ns"}.get(struct.unpack("<I", h[:4])[0])
    if not fmt:
        return folder, "other", None
    return folder, fmt, struct.unpack(fmt[4] + "I", h[20:24])[0]


def asan_sample(caps):
    """Part 1's captures under AddressSanitizer, where each qptrace run
    costs ~3 times as much: every hostile capture (the error paths), the
    first capture of each kind (capture_kind), every SAMPLE_EVERY-th of the
    others, in order."""
    kinds, out, rest = set(), [], 0
    for p in caps:
        k = capture_kind(p)
        if p.startswith("captures/hostile/") or k not in kinds:
            out.append(p)
        else:
            rest += 1
            if rest % SAMPLE_EVERY == 0:
                out.append(p)
        kinds.add(k)
    return out


def main():
    qptrace, root = os.path.abspath(sys.argv[1]), sys.argv[2]
    qpscen = os.path.abspath(sys.argv[3]) if len(sys.argv) > 3 else None
    os.chdir(root)
    caps = sorted(set(glob.glob("captures/**/*.pcap*", recursive=True)) |
                  set(p for p in glob.glob("captures/hostile/*")
                      if not p.endswith((".md", ".json"))))
    check(len(caps) > 100, f"{len(caps)} captures found")

    # 1. every capture, every command (under ASan: a sample, said so)
    if tap.under_asan() and not os.environ.get("QPT_SHARD_ALL"):
        some = asan_sample(caps)
        tap.sanitized_note(f"part 1 on {len(some)} of {len(caps)} captures (every hostile one, "
                           f"the first of each folder, file format and link type, every "
                           f"{SAMPLE_EVERY}th of the rest; QPT_SHARD_ALL=1: all): "
                           f"{len(some) * len(COMMANDS) * (1 + len(JOBS))} qptrace runs of "
                           f"{len(caps) * len(COMMANDS) * (1 + len(JOBS))}")
        caps = some
    compare_all(qptrace, [([*c, "-q", f], f"{' '.join(c)} {f}") for f in caps
                          for c in COMMANDS])

    # 2. several capture points, --each, -c, --from
    made = sorted(glob.glob("captures/made/*.pcap"))
    rxe = sorted(glob.glob("captures/rxe/*.pcap"))
    multi = []
    for f in ["captures/made/dup_capture.pcap", "captures/made/nak_gbn.pcap",
              "captures/rxe/write_bw_drop.pcap", "captures/rxe/read_bw_rdma_cm.pcap",
              "captures/public/linlinw5_nccl_ring2_node0.pcap"]:
        for c in (["summary", "--json"], ["events"], ["summary", "-l"]):
            multi.append(([*c, "-q", f, f], f"{' '.join(c)} {f} + itself (two taps)"))
    for a, b in zip(made[::7], rxe[::5]):
        multi.append((["summary", "--json", "-q", a, b], f"summary --json {a} + {b}"))
        multi.append((["events", "--each", "-q", a, b], f"events --each {a} {b}"))
    # PFC pauses stall conversations whichever thread analysed them: the
    # pause windows end by time only when the link speed is known
    for f in sorted(glob.glob("captures/made/p*_*.pcap")):
        if "pfc" in f or "pause" in f:
            for c in (["summary", "--json"], ["summary", "-l"]):
                multi.append(([*c, "-q", "--link-speed", "100G", f],
                              f"{' '.join(c)} --link-speed 100G {f}"))
    for f in rxe[::4]:
        multi.append((["summary", "--json", "-q", "-c", "77", f], f"summary -c 77 {f}"))
        multi.append((["events", "-q", "--from", "+0.0005", f], f"events --from +0.0005 {f}"))
        # (without -q: packets' stderr line counts the frames read)
        multi.append((["packets", "-c", "33", f], f"packets -c 33 {f}"))
        multi.append((["events", "-c", "41", f], f"events -c 41 {f}"))
    compare_all(qptrace, multi)

    tmp = tempfile.mkdtemp(prefix="qpt-shard-")
    try:
        # 3. one CM comm ID, two address pairs
        orig = "captures/made/cm_rc.pcap"
        copy = os.path.join(tmp, "cm_rc_readdressed.pcap")
        readdress(orig, copy, 16)
        rc, out, _ = run(qptrace, ["summary", "--json", "-q", "--no-crc", "-j", "1", orig, copy])
        unknown = re.search(rb'"cm_unknown_comm_id":\s*(\d+)', out)
        check(rc == 0 and unknown and int(unknown.group(1)) > 0,
              "the one-thread engine shows the comm ID collision (CM messages of no known connection)")
        coll = []
        for c in COMMANDS:
            coll.append(([*c, "-q", "--no-crc", orig, copy], f"{' '.join(c)} cm_rc + readdressed copy"))
            coll.append(([*c, "-q", "--no-crc", copy, orig], f"{' '.join(c)} readdressed copy + cm_rc"))
        # (the two pairs share a thread for some N: every N to 8)
        compare_all(qptrace, coll, [["-j", str(j)] for j in range(2, 9)])
        spread = set()
        for j in range(2, 9):
            _, _, err = run(qptrace, ["summary", "-q", "--no-crc", "-j", str(j), orig, copy],
                            {"QPTRACE_THREAD_TIMES": "1"})
            spread.add(sum(1 for m in re.finditer(rb"analysis thread \d+: .*; (\d+) frames", err)
                           if int(m.group(1)) > 0) > 1)
        check(True in spread, "the two address pairs went to different threads for some -j")
    finally:
        for p in glob.glob(os.path.join(tmp, "*")):
            os.unlink(p)
        os.rmdir(tmp)

    # 4. the threads are there and share the frames
    f = "captures/public/linlinw5_nccl_ring2_node0.pcap"
    _, out, _ = run(qptrace, ["summary", "--json", "-q", "-j", "1", f])
    frames = int(re.search(rb'"frames":\s*(\d+)', out).group(1))
    _, _, err = run(qptrace, ["summary", "-q", "-j", "4", f], {"QPTRACE_THREAD_TIMES": "1"})
    got = [int(m.group(1)) for m in re.finditer(rb"analysis thread \d+: .*; (\d+) frames", err)]
    check(len(got) == 4, f"-j 4: 4 analysis threads ({len(got)})")
    check(sum(got) == frames, f"-j 4: their frames add up to the {frames} frames ({got})")
    check(sum(1 for x in got if x) > 1, f"-j 4: more than one thread analysed frames ({got})")
    _, _, err = run(qptrace, ["summary", "-q", "-j", "1", f], {"QPTRACE_THREAD_TIMES": "1"})
    check(b"analysis thread" not in err, "-j 1: no analysis thread (the one-thread loop)")
    _, _, err = run(qptrace, ["summary", "-q", "-j", "4", "--qp", "0x1", f],
                    {"QPTRACE_THREAD_TIMES": "1"})
    check(b"analysis thread" not in err, "-j 4 --qp: one thread (the selection asks the engine)")
    # packets -c N stops where it has shown N: reading ahead would meet the
    # cut that one thread never reaches
    cut = "captures/hostile/rping_cut_mid_record.pcap"
    ref = run(qptrace, ["packets", "-j", "1", "-c", "3", cut])
    got = run(qptrace, ["packets", "-j", "4", "-c", "3", cut])
    check(ref[0] == 0 and got == ref, f"packets -j 4 -c 3 {cut}: exit 0, as -j 1 ({got[0]})")

    # 4b. a capture over many address pairs (qpscen bench: 64 QPs between
    # 10.1.0.1 and 10.2.0.x) spreads over every thread, power of 2 or not
    if qpscen:
        tmp = tempfile.mkdtemp(prefix="qpt-shard-")
        big = os.path.join(tmp, "bench-20000p-64qp.pcap")
        try:
            subprocess.run([qpscen, "bench", "-o", big, "--packets", "20000", "--qps", "64"],
                           check=True, capture_output=True)
            for j in (2, 3, 4, 8):
                _, _, err = run(qptrace, ["summary", "-q", "-j", str(j), big],
                                {"QPTRACE_THREAD_TIMES": "1"})
                got = [int(m.group(1)) for m in
                       re.finditer(rb"analysis thread \d+: .*; (\d+) frames", err)]
                check(len(got) == j and min(got) > 20000 / j / 3,
                      f"qpscen bench, -j {j}: every thread has a share of the frames ({got})")
            compare_all(qptrace, [([*c, "-q", big], f"{' '.join(c)} qpscen bench 20,000 packets")
                                  for c in (["summary", "--json"], ["summary", "-l"],
                                            ["events", "--json"])])
        finally:
            if os.path.exists(big):
                os.unlink(big)
            os.rmdir(tmp)

    # 5. who takes -j
    for c in (["plot", "-o", os.devnull], ["grade"], ["monitor"], ["verdicts"]):
        rc, _, err = run(qptrace, [c[0], "-j", "2", *c[1:], f])
        check(rc == 2 and b"-j" in err, f"{c[0]} refuses -j ({err.decode(errors='replace').strip()[:80]})")
    for bad in ("0", "x", "100000"):
        rc, _, err = run(qptrace, ["summary", "-j", bad, f])
        check(rc == 2 and b"bad -j" in err, f"summary -j {bad} refused")

    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
