#!/usr/bin/env python3
"""pcapng_drops.py - the capture's own drop counters (issue 18,
capture_incomplete): a pcapng file whose Interface Statistics Blocks at its
end count packets dropped by the interface (isb_ifdrop) and by the OS
(isb_osdrop).  Files written here, byte by byte from the pcapng layout
(draft-ietf-opsawg-pcapng: SHB, IDB, EPB, ISB with options 5 and 7), with
the RoCE frames of a made capture; the numbers checked are the ones
written:

- summary --json totals interface_drops / os_drops, a capture-wide
  capture_incomplete finding with them, the text's warning line;
- little and big endian sections; an interface's latest ISB counts (they
  are cumulative), two interfaces add up;
- an ISB without drop options, or none: no keys, no finding;
- 300 interfaces (once only 256 were counted); two sections of different
  byte order (once the first's was used for the whole tail) and sections
  that add up; an ISB naming an interface its section does not describe
  (one that does not exist, or the first section's after a new SHB): not
  counted, and said once, naming the file;
- a file cut inside its last block: no crash, no counts from it.

    pcapng_drops.py QPTRACE ROOT
"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

import tap  # tests/tap.py
from tap import check


def pcap_frames(path):
    """(ts_sec, ts_usec, bytes) of a classic little-endian pcap file."""
    with open(path, "rb") as f:
        data = f.read()
    assert struct.unpack("<I", data[:4])[0] == 0xA1B2C3D4, "a little-endian usec pcap"
    out, at = [], 24
    while at + 16 <= len(data):
        sec, usec, cap, _ = struct.unpack("<IIII", data[at:at + 16])
        out.append((sec, usec, data[at + 16:at + 16 + cap]))
        at += 16 + cap
    return out


def block(e, btype, body):
    body += b"\0" * (-len(body) % 4)
    total = 12 + len(body)
    return struct.pack(e + "II", btype, total) + body + struct.pack(e + "I", total)


def option(e, code, value):
    return struct.pack(e + "HH", code, len(value)) + value + b"\0" * (-len(value) % 4)


def isb(e, iface, drops):
    body = struct.pack(e + "III", iface, 0, 0)
    for code, v in drops:
        body += option(e, code, struct.pack(e + "Q", v))
    body += option(e, 1, b"test") if not drops else b""  # a comment only
    return block(e, 5, body + struct.pack(e + "HH", 0, 0))


def pcapng(e, frames, tail, ifaces=1):
    shb = block(e, 0x0A0D0D0A, struct.pack(e + "IHHq", 0x1A2B3C4D, 1, 0, -1))
    idb = b"".join(block(e, 1, struct.pack(e + "HHI", 1, 0, 65535)) for _ in range(ifaces))
    epbs = b""
    for i, (sec, usec, data) in enumerate(frames):
        ts = sec * 1000000 + usec
        epbs += block(e, 6, struct.pack(e + "IIIII", i % ifaces, ts >> 32, ts & 0xffffffff,
                                        len(data), len(data)) + data)
    return shb + idb + epbs + tail


def summary(qptrace, path, json_out=True):
    p = subprocess.run([qptrace, "summary"] + (["--json"] if json_out else []) + [path],
                       capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def main():
    qptrace, root = sys.argv[1], sys.argv[2]
    frames = pcap_frames(os.path.join(root, "captures", "made", "clean_send.pcap"))
    tmp = tempfile.mkdtemp(prefix="qpt-pcapng-")
    cases = [
        # name, endian, ISBs, interfaces, want (ifdrop, osdrop) or None
        ("le", "<", [(0, [(5, 7), (7, 3)])], 1, (7, 3)),
        ("be", ">", [(0, [(5, 7), (7, 3)])], 1, (7, 3)),
        ("latest", "<", [(0, [(5, 2)]), (0, [(5, 9), (7, 1)])], 1, (9, 1)),
        ("two_ifaces", "<", [(0, [(5, 4)]), (1, [(5, 5), (7, 6)])], 2, (9, 6)),
        ("no_drop_options", "<", [(0, [])], 1, None),
        ("no_isb", "<", [], 1, None),
        ("zero", "<", [(0, [(5, 0), (7, 0)])], 1, (0, 0)),
    ]
    for name, e, isbs, ifaces, want in cases:
        path = os.path.join(tmp, name + ".pcapng")
        with open(path, "wb") as f:
            f.write(pcapng(e, frames, b"".join(isb(e, i, d) for i, d in isbs), ifaces))
        # Wireshark's own reader sees the blocks as written (the writer is right)
        if shutil.which("capinfos") and isbs:
            ci = subprocess.run(["capinfos", "-I", path], capture_output=True, text=True).stdout
            stats = sum(int(m) for m in re.findall(r"Number of stat entries = (\d+)", ci))
            check(stats == len(isbs), f"{name}: capinfos reads {stats} ISBs (written {len(isbs)})")
        rc, out, err = summary(qptrace, path)
        try:
            doc = json.loads(out)
        except ValueError:
            check(False, f"{name}: summary --json exits {rc}: {err.strip()[-200:]}")
            continue
        t = doc["totals"]
        check(t["frames"] == len(frames), f"{name}: {t['frames']} frames read (written {len(frames)})")
        inc = [f for f in doc["findings"] if f["kind"] == "capture_incomplete" and f["conv"] is None
               and "interface_drops" in f["numbers"]]
        if want is None:
            check("interface_drops" not in t and not inc,
                  f"{name}: no drop counters, no finding (totals {t.get('interface_drops')})")
            continue
        check((t.get("interface_drops"), t.get("os_drops")) == want,
              f"{name}: totals interface_drops/os_drops {(t.get('interface_drops'), t.get('os_drops'))} "
              f"= written {want}")
        if sum(want):
            check(len(inc) == 1 and inc[0]["numbers"]["interface_drops"] == want[0]
                  and inc[0]["numbers"]["os_drops"] == want[1],
                  f"{name}: one capture-wide capture_incomplete with the counts")
            rc, text, _ = summary(qptrace, path, json_out=False)
            check(f"warning: the capture dropped {sum(want)} packets" in text,
                  f"{name}: the text says the capture dropped {sum(want)} packets")
        else:
            check(not inc, f"{name}: counters of 0: no finding")
    # Sections, many interfaces, an ISB of an interface that does not exist.
    # name, sections [(endian, interfaces, frames?, ISBs)], want (ifdrop,
    # osdrop), the interface an ISB names in vain (or None)
    many = [(i, [(5, i + 1), (7, 1)]) for i in range(300)]
    section_cases = [
        ("300_ifaces", [("<", 300, True, many)], (300 * 301 // 2, 300), None),
        ("two_byte_orders", [("<", 1, True, [(0, [(5, 3), (7, 1)])]),
                             (">", 1, False, [(0, [(5, 4), (7, 2)])])], (7, 3), None),
        ("be_then_le", [(">", 1, True, [(0, [(5, 3)])]),
                        ("<", 2, False, [(0, [(5, 4)]), (1, [(5, 5)])])], (12, 0), None),
        ("missing_iface", [("<", 1, True, [(0, [(5, 2)]), (5, [(5, 100)]), (7, [(5, 100)])])],
         (2, 0), 5),
        # the second section describes one interface: its ISB for interface
        # 1 names the first section's, which it does not have
        ("sections_reset_ifaces", [("<", 2, True, [(0, [(5, 1)]), (1, [(5, 2)])]),
                                   ("<", 1, True, [(0, [(5, 4)]), (1, [(5, 100)])])], (7, 0), 1),
    ]
    for name, sections, want, vain in section_cases:
        path = os.path.join(tmp, name + ".pcapng")
        data, nframes = b"", 0
        for e, nif, with_frames, isbs in sections:
            data += pcapng(e, frames if with_frames else [],
                           b"".join(isb(e, i, d) for i, d in isbs), nif)
            nframes += len(frames) if with_frames else 0
        with open(path, "wb") as f:
            f.write(data)
        # (capinfos 4.0 gives a later section's blocks to the first
        # section's interfaces of the same number: one section only)
        if shutil.which("capinfos") and len(sections) == 1:
            ci = subprocess.run(["capinfos", "-I", path], capture_output=True, text=True).stdout
            stats = sum(int(m) for m in re.findall(r"Number of stat entries = (\d+)", ci))
            # of the interfaces the sections describe (Wireshark ignores the others)
            nisb = sum(1 for x in sections for i, _ in x[3] if i < x[1])
            check(stats == nisb, f"{name}: capinfos reads {stats} ISBs (written {nisb} of "
                  "described interfaces)")
        rc, out, err = summary(qptrace, path)
        try:
            t = json.loads(out)["totals"]
        except ValueError:
            check(False, f"{name}: summary --json exits {rc}: {err.strip()[-200:]}")
            continue
        got = (t.get("interface_drops"), t.get("os_drops"))
        check(got == want, f"{name}: totals interface_drops/os_drops {got} = written {want}")
        said = [l for l in err.splitlines() if "interface statistics block" in l]
        if vain is None:
            check(not said, f"{name}: nothing said of missing interfaces: {said}")
        else:
            check(len(said) == 1 and path in said[0] and f"interface {vain}," in said[0],
                  f"{name}: said once that interface {vain} does not exist: {said}")
    # cut inside the last block (the ISB): no crash, nothing counted from it
    path = os.path.join(tmp, "cut.pcapng")
    whole = pcapng("<", frames, isb("<", 0, [(5, 7)]))
    with open(path, "wb") as f:
        f.write(whole[:-6])
    rc, out, err = summary(qptrace, path)
    check(rc in (0, 1, 2) and "interface_drops" not in out,
          f"cut ISB: exit {rc} (no crash), no counts: {err.strip()[-120:]}")
    for f in os.listdir(tmp):
        os.unlink(os.path.join(tmp, f))
    os.rmdir(tmp)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
