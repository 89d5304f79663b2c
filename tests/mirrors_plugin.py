#!/usr/bin/env python3
"""mirrors_plugin.py - the Wireshark plugin on mirrored and headers-only
captures: Wireshark decodes the tunnel (ERSPAN, GRE, VXLAN, MPLS) and hands
the inner frame to `roce`; the plugin must show the same inner analysis as
on the original capture (per frame: PSN, conversation, retransmission,
go-back-N, NAK) plus the `Delivered in` subtree (roce.delivery.tunnel).
On an `editcap -s 96` capture: roce.delivery.cut_by_capture, no
roce.error, the same analysis.

    mirrors_plugin.py PLUGIN.so QPTRACE ROOT

The plugin goes into the personal plugin folder of a temporary HOME (as
root, tshark runs as nobody: Wireshark ignores personal plugins as root).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import tap  # noqa: E402 (tests/tap.py)
import wrap  # noqa: E402
from tap import check  # noqa: E402

CAPTURES = ("captures/rxe/write_bw_drop.pcap", "captures/made/nak_gbn.pcap",
            "captures/made/cnp_ecn.pcap")
FIELDS = ["frame.number", "roce.bth.psn", "roce.stream", "roce.analysis.retransmission",
          "roce.analysis.gbn_episode", "roce.analysis.gbn_episode.number", "roce.aeth.kind",
          "roce.error"]


def main():
    plugin, qptrace, root = sys.argv[1:4]
    if not shutil.which("tshark"):
        print("SKIP: tshark not installed")
        return 77
    ver = re.search(r"(\d+)\.(\d+)\.", subprocess.run(["tshark", "--version"], capture_output=True,
                                                     text=True).stdout)
    home = tempfile.mkdtemp(prefix="qpt-mirplug-")
    pdir = os.path.join(home, ".local/lib/wireshark/plugins", f"{ver[1]}.{ver[2]}", "epan")
    os.makedirs(pdir)
    shutil.copy(plugin, pdir)
    prefix = []
    if os.geteuid() == 0:
        prefix = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
    try:
        def fields(cap, extra=()):
            if prefix:
                for d, dirs, files in os.walk(home):
                    for x in [d] + [os.path.join(d, f) for f in dirs + files]:
                        os.chown(x, 65534, 65534)
                        os.chmod(x, 0o755 if os.path.isdir(x) else 0o644)
            env = dict(os.environ, HOME=home)
            env.pop("WIRESHARK_PLUGIN_DIR", None)
            env.pop("WIRESHARK_CONFIG_DIR", None)
            args = ["tshark", "-n", "-r", cap, "-Y", "roce", "-T", "fields", "-E", "occurrence=f"]
            for f in FIELDS + list(extra):
                args += ["-e", f]
            r = subprocess.run(prefix + args, capture_output=True, text=True, env=env, cwd=home,
                               timeout=300)
            return [l.split("\t") for l in r.stdout.splitlines()]

        for rel in CAPTURES:
            src = os.path.join(home, os.path.basename(rel))  # readable by nobody
            shutil.copy(os.path.join(root, rel), src)
            orig = fields(src)
            for kind in wrap.KINDS:
                out = os.path.join(home, f"{kind}.pcap")
                subprocess.run([sys.executable, os.path.join(HERE, "wrap.py"), kind, src, out],
                               check=True)
                got = fields(out, ["roce.delivery.tunnel"])
                same = [g[:len(FIELDS)] for g in got] == orig
                tun = {g[len(FIELDS)] for g in got}
                want = "MPLS" if kind == "mpls" else ("VXLAN" if kind == "vxlan" else
                                                      "GRE" if kind == "gre-teb" else "GRE/ERSPAN")
                check(orig and same and tun == {want},
                      f"plugin: {rel} in {kind}: {len(got)} roce frames, the same PSNs, "
                      f"conversations and analysis as the original's {len(orig)}; tunnel {sorted(tun)}")
        src = os.path.join(home, "write_bw_drop.pcap")
        cut = os.path.join(home, "cut96.pcap")
        subprocess.run(["editcap", "-s", "96", src, cut], check=True, capture_output=True)
        orig = fields(src)
        got = fields(cut, ["roce.delivery.cut_by_capture"])
        ncut = sum(1 for g in got if g[len(FIELDS)] in ("1", "True"))
        errs = [g for g in got if g[FIELDS.index("roce.error")]]
        check([g[:len(FIELDS)] for g in got] == orig and ncut > 0 and not errs,
              f"plugin: write_bw_drop -s 96: the same analysis, {ncut} frames cut by the capture, "
              f"{len(errs)} decode errors")
    finally:
        shutil.rmtree(home, ignore_errors=True)
    print(f"1..{tap.n}")
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
