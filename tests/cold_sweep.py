#!/usr/bin/env python3
"""cold_sweep.py - idle halves and conversations made compact change no result.

The engine's sweep (analyzer/qpt_flow_cold.c) encodes every half no frame
touched since the sweep before, and the conversations all of whose halves
are so, and decodes them when a frame or a reader needs them again.
The encoding must lose nothing: QPTRACE_COLD_EVERY=N makes the sweep run
every N frames instead of every 8,192.  With N = 1 (a sweep before every
frame: every half is encoded and decoded again and again) the output must
be what the default gives, byte for byte.  The default sweeps no half of a
capture under 8,192 frames, so for most of these captures it is the engine
as it was without cold halves.  The results read cold conversations
without thawing them (qpt_conv_walk), so with N = 1 the summary's table,
JSON and findings read decoded cold conversations throughout.

1. Every capture under captures/: summary (text, --json, -v), events
   (--json), packets (--json) with -j 1, and summary --json with the
   default -j: stdout, stderr and exit status.  Under AddressSanitizer a
   sample (shard.asan_sample), and the output says so.
2. Every capture merged with itself (two capture points): summary --json,
   events.
3. With qpscen: made captures of many QPs (lossy, with CNPs; between two
   hosts; one packet per QP) with N = 1, 3 and 97, and -j 2.
4. QPTRACE_COLD_EVERY must be a number of frames: 0 and x are refused.

    cold_sweep.py QPTRACE ROOT [QPSCEN]
"""
import concurrent.futures
import glob
import os
import subprocess
import sys
import tempfile

import shard  # tests/shard.py: asan_sample
import tap
from tap import check


def run(qptrace, args, every=None):
    e = dict(os.environ)
    e.pop("QPTRACE_COLD_EVERY", None)
    if every is not None:
        e["QPTRACE_COLD_EVERY"] = str(every)
    r = subprocess.run([qptrace, *args], capture_output=True, timeout=600, env=e)
    return r.returncode, r.stdout, r.stderr


def same(qptrace, args, label, everies=(1,)):
    ref = run(qptrace, args)
    bad = []
    for n in everies:
        got = run(qptrace, args, n)
        if got != ref:
            which = [k for k, a, b in zip(("exit status", "stdout", "stderr"), ref, got) if a != b]
            bad.append(f"every {n}: {', '.join(which)} differ")
    return label, bad, ref


def compare_all(qptrace, runs, everies=(1,)):
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        for label, bad, ref in pool.map(lambda r: same(qptrace, *r, everies), runs):
            check(not bad, f"{label}: sweeps every {', '.join(map(str, everies))} frames "
                  "= the default" + (f" ({'; '.join(bad)})" if bad else ""))


COMMANDS = (["summary", "-j", "1"], ["summary", "--json", "-j", "1"],
            ["summary", "-v", "-j", "1"], ["events", "--json", "-j", "1"],
            ["packets", "--json", "-j", "1"], ["summary", "--json"])


def main():
    qptrace, root = os.path.abspath(sys.argv[1]), sys.argv[2]
    qpscen = os.path.abspath(sys.argv[3]) if len(sys.argv) > 3 else None
    os.chdir(root)
    tap.quiet = True
    caps = sorted(glob.glob("captures/**/*.pcap*", recursive=True))
    check(len(caps) > 100, f"{len(caps)} captures found")
    if tap.under_asan():
        sample = shard.asan_sample(caps)
        tap.sanitized_note(f"{len(sample)} of the {len(caps)} captures (a sample)")
        caps = sample

    # 1. every capture, alone
    compare_all(qptrace, [([*c, f], f"{' '.join(c)} {f}") for f in caps for c in COMMANDS])
    # 2. merged with itself: two capture points
    compare_all(qptrace, [([*c, f, f], f"{' '.join(c)} {f} twice")
                          for f in caps for c in (["summary", "--json", "-j", "1"],
                                                  ["events", "-j", "1"])])
    # 3. many QPs, made
    if qpscen:
        with tempfile.TemporaryDirectory() as d:
            made = []
            for name, args in (("lossy", ["--packets", "40000", "--qps", "400", "--loss", "0.01",
                                          "--cnp-rate", "0.005"]),
                               ("same-hosts", ["--packets", "30000", "--qps", "300", "--loss",
                                               "0.002", "--same-hosts"]),
                               ("one-way", ["--packets", "5000", "--qps", "5000", "--msg-size",
                                            "0", "--one-way"])):
                p = os.path.join(d, name + ".pcap")
                subprocess.run([qpscen, "bench", "-o", p, *args], check=True,
                               capture_output=True)
                made.append((name, p))
            compare_all(qptrace, [([*c, p], f"{' '.join(c)} qpscen {name}")
                                  for name, p in made
                                  for c in (["summary", "--json", "-j", "1"],
                                            ["events", "-j", "1"], ["summary", "-v", "-j", "2"])],
                        everies=(1, 3, 97))
    # 4. the variable is checked
    for bad in ("0", "x", ""):
        rc, out, err = run(qptrace, ["summary", caps[0]], bad)
        check(rc == 2 and b"QPTRACE_COLD_EVERY" in err,
              f"QPTRACE_COLD_EVERY={bad!r} refused with a message ({rc}, {err[:80]!r})")
    print(f"# {tap.n} checks")
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
