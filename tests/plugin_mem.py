#!/usr/bin/env python3
"""The plugin's memory per frame in two-pass tshark (issue 17).

    plugin_mem.py ROCE_SO WS_MAJOR_MINOR QPSCEN

Makes two captures of one RC QP with `qpscen bench --qps 1` (WRITEs of
4096 bytes, MTU 1024: four data packets and an ACK per message, loss and
CNPs), of SMALL and LARGE packets, and runs `tshark -2 -n -q -Y infiniband`
on each without the plugin and with it (a private HOME; as root, tshark
runs as nobody, since Wireshark ignores personal plugins as root).  The
plugin's peak RSS over stock tshark, from the small capture to the large
one (so what loading the plugin costs once cancels out), divided by the
frames between them, must be at most MAX_B_PER_FRAME: what the plugin
keeps per frame (before it stored a record and two map entries for every
frame: about 240 bytes).  Also checks that the plugin analysed every frame
(`-z roce,qp` counts as many packets as the capture has records).  Prints "N passed, N failed".
"""
import os
import shutil
import subprocess
import sys
import tempfile

import tap  # tests/tap.py
from tap import check

tap.quiet = True  # only the failures, then "N passed, N failed"

SMALL, LARGE = 100_000, 400_000
MAX_B_PER_FRAME = 64.0


def count_frames(path):
    """Records in a pcap file, read here (not by tshark or the engine)."""
    n = 0
    with open(path, "rb") as f:
        f.seek(24)
        while True:
            rh = f.read(16)
            if len(rh) < 16:
                return n
            f.seek(int.from_bytes(rh[8:12], "little"), 1)
            n += 1


def main():
    so, wsver, qpscen = sys.argv[1:4]
    if not shutil.which("tshark"):
        print("1..0 # SKIP tshark not found")
        return 77
    root = os.geteuid() == 0
    prefix = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"] if root else []
    tmp = tempfile.mkdtemp(prefix="qpt-plugin-mem-")
    try:
        homes = {"stock": os.path.join(tmp, "stock"), "plugin": os.path.join(tmp, "plugin")}
        pdir = os.path.join(homes["plugin"], f".local/lib/wireshark/plugins/{wsver}/epan")
        os.makedirs(pdir)
        os.makedirs(homes["stock"])
        shutil.copy(so, os.path.join(pdir, "roce.so"))
        caps = {}
        for n in (SMALL, LARGE):
            caps[n] = os.path.join(tmp, f"{n}.pcap")
            subprocess.run([qpscen, "bench", "-o", caps[n], "--packets", str(n), "--qps", "1"],
                           check=True, stdout=subprocess.DEVNULL)
        if root:
            for d, dirs, files in os.walk(tmp):
                for x in [d] + [os.path.join(d, f) for f in dirs + files]:
                    os.chown(x, 65534, 65534)

        def run(who, cap, extra):
            env = dict(os.environ, HOME=homes[who])
            env.pop("WIRESHARK_PLUGIN_DIR", None)
            env.pop("WIRESHARK_CONFIG_DIR", None)
            p = subprocess.Popen(prefix + ["tshark", "-2", "-n", "-q", "-r", cap] + extra,
                                 env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 cwd=tmp)
            out, err = p.communicate()
            return p.returncode, out.decode(), err.decode()

        def peak(who, cap):
            env = dict(os.environ, HOME=homes[who])
            env.pop("WIRESHARK_PLUGIN_DIR", None)
            env.pop("WIRESHARK_CONFIG_DIR", None)
            c = tap.run_child(prefix + ["tshark", "-2", "-n", "-q", "-Y", "infiniband",
                                        "-r", cap], stdout=os.devnull, env=env, cwd=tmp)
            assert c.status == 0, c.err.decode()
            return c.rss_kib * 1024

        rc, out, err = run("plugin", caps[SMALL], ["-z", "roce,qp"])
        rows = [l.split() for l in out.splitlines() if l.startswith("0 ")]
        pk = rows[0][7].split("/") if rows and len(rows[0]) > 7 else []
        n = count_frames(caps[SMALL])
        check(rc == 0 and "1 conversation(s)" in out and len(pk) == 2 and
              sum(int(x) for x in pk) == n,
              f"the plugin analysed every frame: -z roce,qp shows one conversation of "
              f"{n} packets (the capture's records): {pk} {err}")
        rss = {(w, n): peak(w, caps[n]) for n in (SMALL, LARGE) for w in ("stock", "plugin")}
        over = {n: rss[("plugin", n)] - rss[("stock", n)] for n in (SMALL, LARGE)}
        per = (over[LARGE] - over[SMALL]) / (LARGE - SMALL)
        for n in (SMALL, LARGE):
            print(f"# {n} frames: stock {rss[('stock', n)] / 2**20:.1f} MiB, "
                  f"plugin {rss[('plugin', n)] / 2**20:.1f} MiB")
        check(per <= MAX_B_PER_FRAME,
              f"the plugin keeps {per:.0f} bytes per frame over stock tshark -2 "
              f"(at most {MAX_B_PER_FRAME:.0f})")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
