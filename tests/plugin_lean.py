#!/usr/bin/env python3
"""Hidden items left out under tshark -V: nothing lost (issue 32).

    plugin_lean.py ROCE_SO WS_MAJOR_MINOR CAPTURES_DIR

The plugin does not add the items it would hide when tshark prints text
and nothing references a roce field (dissector/README.md, "Hidden items
not made where nothing would use them").  Over every capture of
captures/made and captures/public, merged (but LINKTYPE_INFINIBAND, which
4.0 cannot read), with the plugin (a private HOME; as root, tshark runs as
nobody, since Wireshark ignores personal plugins as root):
  - `tshark -V` prints byte for byte what `tshark -X qptrace:all -V` prints
    (an -X option makes the plugin add every item, as for a Lua script);
    likewise with `-2`;
  - the hidden fields are all there where something asks for them: the
    frames with a roce.bth.psn (`-T fields`) are as many as `-Y roce.bth.psn`
    selects under -V, as the roce.bth.psn fields in PDML and in JSON; -Y on
    the hidden roce.direction selects what it selects with every item made.
Prints "N passed, N failed".
"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile

import tap  # tests/tap.py
from tap import check


def linktype(path):
    with open(path, "rb") as f:
        h = f.read(24)
    if h[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
        return int.from_bytes(h[20:24], "little")
    if h[:4] in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        return int.from_bytes(h[20:24], "big")
    return None  # pcapng: mergecap reads it


def main():
    so, wsver, capdir = sys.argv[1:4]
    if not shutil.which("tshark") or not shutil.which("mergecap"):
        print("1..0 # SKIP tshark or mergecap not found")
        return 77
    root = os.geteuid() == 0
    prefix = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"] if root else []
    tmp = tempfile.mkdtemp(prefix="qpt-plugin-lean-")
    try:
        home = os.path.join(tmp, "home")
        pdir = os.path.join(home, f".local/lib/wireshark/plugins/{wsver}/epan")
        os.makedirs(pdir)
        shutil.copy(so, os.path.join(pdir, "roce.so"))
        caps = sorted(c for d in ("made", "public")
                      for c in glob.glob(os.path.join(capdir, d, "*.pcap*"))
                      if linktype(c) != 247)
        merged = os.path.join(tmp, "all.pcapng")
        subprocess.run(["mergecap", "-a", "-w", merged] + caps, check=True)
        if root:
            for d, dirs, files in os.walk(tmp):
                for x in [d] + [os.path.join(d, f) for f in dirs + files]:
                    os.chown(x, 65534, 65534)

        def tshark(*args):
            env = dict(os.environ, HOME=home)
            env.pop("WIRESHARK_PLUGIN_DIR", None)
            env.pop("WIRESHARK_CONFIG_DIR", None)
            p = subprocess.run(prefix + ["tshark", "-n", "-r", merged] + list(args), env=env,
                               cwd=tmp, capture_output=True, text=True)
            return p.returncode, p.stdout, p.stderr

        for extra in ([], ["-2"]):
            rc1, lean, e1 = tshark(*extra, "-V")
            rc2, full, e2 = tshark(*extra, "-X", "qptrace:all", "-V")
            tops = lean.count(" (qptrace), ")
            check(rc1 == 0 and rc2 == 0 and tops >= 1000 and lean == full,
                  f"tshark {' '.join(extra)} -V over {len(caps)} captures ({tops} roce trees): "
                  f"the same with every item made (-X) {e1[-200:]} {e2[-200:]}")
        rc, fields, err = tshark("-T", "fields", "-e", "roce.bth.psn")
        n = sum(1 for l in fields.splitlines() if l.strip())
        check(rc == 0 and n >= 1000, f"-T fields: {n} frames with a roce.bth.psn {err[-200:]}")
        rc, sel, err = tshark("-V", "-Y", "roce.bth.psn >= 0")
        check(rc == 0 and sel.count(" (qptrace), ") == n,
              f"-V -Y roce.bth.psn selects as many: {sel.count(' (qptrace), ')} of {n}")
        flt = "roce.direction == 0 || roce.direction == 1"
        rc, sel, err = tshark("-Y", flt)
        rc2, sel2, err2 = tshark("-X", "qptrace:all", "-Y", flt)
        got = len(sel.splitlines())
        check(rc == 0 and rc2 == 0 and got > 1000 and sel == sel2,
              f"-Y on the hidden roce.direction: {got} frames, as with every item made")
        rc, pdml, err = tshark("-T", "pdml")
        check(rc == 0 and pdml.count('name="roce.bth.psn"') == n,
              f"PDML has the hidden roce.bth.psn of every such frame: "
              f"{pdml.count('name=' + chr(34) + 'roce.bth.psn' + chr(34))} of {n}")
        rc, js, err = tshark("-T", "json")
        check(rc == 0 and js.count('"roce.bth.psn":') == n,
              f"JSON has the hidden roce.bth.psn of every such frame: "
              f"{js.count(chr(34) + 'roce.bth.psn' + chr(34) + ':')} of {n}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
