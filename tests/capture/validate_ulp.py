#!/usr/bin/env python3
"""Check the upper-layer RDMA captures (captures/rxe/ulp, tools/capture-ulp).

    validate_ulp.py [--qptrace QPTRACE] [--tshark TSHARK] DIR
    validate_ulp.py --self-test [--qptrace QPTRACE] DIR

For every NAME.json manifest in DIR (and its NAME.pcap):

  * the manifest says what ran: commands (every one exited 0), kernel,
    modules, packages, the service port and its RDMA-CM service ID
    (0x000000000106PPPP, TCP port space), the QPs the kernel listed while
    connected, and the I/O done (written, read back and compared: verified);
  * the capture is small (under 1 MiB);
  * TShark WITHOUT this project's plugin (HOME pointed at an empty directory,
    WIRESHARK_PLUGIN_DIR unset, and `--disable-protocol roce` should the
    plugin be installed system-wide) decodes the upper layer: the
    manifest's protocol filter (nvme-rdma, iser, rpcordma) and each of its
    "expect"."tshark" filters match at least the given number of frames,
    and a CM REQ names the service port (infiniband.cm.req.serviceid.dport);
  * qptrace reads the capture (summary --json, exit 0, nothing malformed,
    no bad ICRC), finds "expect"."conversations" RC conversations, each
    paired by CM, its CM service ID and RDMA-CM destination port being the
    manifest's service; the QPNs the kernel listed (rdma res show qp, the
    initiator's rxe1 QPs) are among the conversations' endpoints.

DIR/SKIPPED names what could not be captured and why; it is printed.
--self-test checks that the check can fail: on copies of DIR, each capture
swapped for another scenario's (wrong upper layer, wrong port, other QPNs)
and a manifest whose I/O was not verified must each be refused by name.
Exit 0 when everything holds, 1 otherwise, 77 (skip) without tshark.
"""
import argparse, glob, json, os, shutil, subprocess, sys, tempfile

MAX_BYTES = 1 << 20


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--qptrace", default="qptrace")
    ap.add_argument("--tshark", default=shutil.which("tshark"))
    ap.add_argument("--self-test", action="store_true")
    ap.add_argument("dir")
    a = ap.parse_args()
    if a.self_test:
        return self_test(a)
    if not a.tshark:
        print("SKIP: tshark not found")
        return 77
    manifests = sorted(glob.glob(os.path.join(a.dir, "*.json")))
    if not manifests:
        print(f"no manifests in {a.dir}")
        return 1
    home = tempfile.mkdtemp(prefix="validate-ulp-")
    env = {k: v for k, v in os.environ.items() if not k.startswith("WIRESHARK_")}
    env["HOME"] = home
    env["XDG_CONFIG_HOME"] = os.path.join(home, ".config")
    plugins = subprocess.run([a.tshark, "-G", "plugins"], env=env, capture_output=True, text=True).stdout
    extra = []
    if "roce.so" in plugins:
        extra = ["--disable-protocol", "roce"]
        print("note: roce.so is installed system-wide; tshark runs with --disable-protocol roce")
    protos = subprocess.run([a.tshark, "-G", "protocols"], env=env, capture_output=True, text=True).stdout

    def count(pcap, flt):
        r = subprocess.run([a.tshark, "-n", "-r", pcap, *extra, "-Y", flt, "-T", "fields", "-e", "frame.number"],
                           env=env, capture_output=True, text=True)
        if r.returncode != 0:
            return None, r.stderr.strip().splitlines()[-1:] or ["tshark failed"]
        return len([l for l in r.stdout.splitlines() if l.strip()]), None

    failures = 0
    for mf in manifests:
        name = os.path.basename(mf)[:-5]
        errs, notes = [], []
        m = json.load(open(mf))
        pcap = os.path.join(a.dir, name + ".pcap")
        if not os.path.exists(pcap):
            print(f"FAIL {name}: no {name}.pcap")
            failures += 1
            continue
        size = os.path.getsize(pcap)
        if size > MAX_BYTES:
            errs.append(f"capture is {size} bytes (over {MAX_BYTES})")
        # ---- the manifest
        port = m.get("service", {}).get("port")
        sid = m.get("service", {}).get("service_id")
        if not isinstance(port, int) or sid != "0x%016x" % (0x0000000001060000 | port):
            errs.append(f"service {m.get('service')}: port and RDMA-CM service ID (TCP port space) disagree")
        for k in ("kernel", "kernel_version", "commands", "modules_loaded", "packages", "qps", "protocol",
                  "tshark_filter", "expect"):
            if not m.get(k):
                errs.append(f"manifest has no {k}")
        bad = [c["command"] for c in m.get("commands", [])
               if c.get("exit_status") not in (0, None) and "discovery" not in c["command"]]
        if bad:
            errs.append(f"commands that did not exit 0: {bad}")
        if m.get("failed"):
            errs.append(f"the run says it failed: {m['failed']}")
        io = m.get("io", {})
        if not io.get("verified") or io.get("write_bytes", 0) < 65536 or io.get("read_bytes", 0) < 65536:
            errs.append(f"I/O not done or not verified: {io}")
        # ---- tshark without the plugin
        flt = m.get("tshark_filter", "")
        if flt and f"\t{flt}\t" not in protos and not any(l.split("\t")[-1] == flt for l in protos.splitlines()):
            errs.append(f"tshark has no protocol {flt!r}")
        want = {flt: 1, **m.get("expect", {}).get("tshark", {}),
                f"infiniband.cm.req.serviceid.dport == {port}": 1}
        seen = {}
        for f, lo in want.items():
            n, err = count(pcap, f)
            seen[f] = n
            if err:
                errs.append(f"tshark -Y {f!r}: {err[0]}")
            elif n < lo:
                errs.append(f"tshark -Y {f!r}: {n} frames, expected at least {lo}")
        total, _ = count(pcap, "frame")
        malformed, _ = count(pcap, "_ws.malformed")   # TShark's own baseline, reported only
        # ---- qptrace
        r = subprocess.run([a.qptrace, "summary", "--json", "-q", pcap], capture_output=True, text=True)
        if r.returncode != 0:
            errs.append(f"qptrace exit {r.returncode}: {r.stderr.strip()[:200]}")
            s = {}
        else:
            s = json.loads(r.stdout)
        convs = s.get("conversations", [])
        tot = s.get("totals", {})
        if s and (tot.get("malformed") or tot.get("bad_icrc")):
            errs.append(f"qptrace: {tot.get('malformed')} malformed, {tot.get('bad_icrc')} bad ICRC")
        nconv = m.get("expect", {}).get("conversations")
        if s and nconv is not None and len(convs) != nconv:
            errs.append(f"qptrace: {len(convs)} conversations, expected {nconv}")
        qpns = set()
        for c in convs:
            cm = c.get("cm", {})
            if c.get("transport") != "RC" or c.get("paired_by") != "cm":
                errs.append(f"conversation {c.get('id')}: {c.get('transport')} paired by {c.get('paired_by')}, "
                            "expected RC paired by cm")
            if cm.get("service_id") != 0x0000000001060000 | (port or 0):
                errs.append(f"conversation {c.get('id')}: CM service ID {cm.get('service_id')}, expected {sid}")
            if cm.get("rdma_cm", {}).get("dst_port") != port:
                errs.append(f"conversation {c.get('id')}: RDMA-CM port {cm.get('rdma_cm')}, expected {port}")
            for e in c.get("endpoints", []):
                qpns.add((e.get("addr"), e.get("qpn")))
        listed = {("10.0.0.2", q["lqpn"]) for q in m.get("qps", [])
                  if q.get("type") == "RC" and str(q.get("link", "")).startswith("rxe1")}
        if s and not listed <= qpns:
            errs.append(f"QPNs the kernel listed {sorted(listed)} not among the conversations' {sorted(qpns)}")
        if s and not listed:
            errs.append("the manifest lists no RC QP of the initiator (rdma res show qp)")
        decoded = seen.get(flt)
        line = (f"{name}: {m.get('protocol')} port {port}, {total} frames, tshark -Y {flt}: {decoded}, "
                f"qptrace: {len(convs)} RC conversations paired by CM, kernel {m.get('kernel')}, "
                f"{size} bytes, tshark malformed: {malformed}")
        if errs:
            failures += 1
            print("FAIL " + line)
            for e in errs:
                print("    " + e)
        else:
            print("ok   " + line)
            for f, n in seen.items():
                if f != flt:
                    print(f"       {f}: {n}")
    sk = os.path.join(a.dir, "SKIPPED")
    if os.path.exists(sk):
        for l in open(sk):
            print("not captured: " + l.rstrip())
    shutil.rmtree(home, ignore_errors=True)
    print(f"{len(manifests) - failures}/{len(manifests)} upper-layer captures check out")
    return 1 if failures else 0


def self_test(a):
    """Mutated copies of DIR must fail, each for the reason planted."""
    names = sorted(os.path.basename(p)[:-5] for p in glob.glob(os.path.join(a.dir, "*.json")))
    if len(names) < 2:
        print("self-test needs at least two scenarios")
        return 1
    cases = [(f"{n}.pcap is {names[(i + 1) % len(names)]}'s capture", n, names[(i + 1) % len(names)], None)
             for i, n in enumerate(names)]
    cases.append((f"{names[0]}'s I/O not verified", names[0], None, "io"))
    bad = 0
    for what, victim, other, field in cases:
        d = tempfile.mkdtemp(prefix="validate-ulp-self-")
        for f in glob.glob(os.path.join(a.dir, "*")):
            shutil.copy(f, d)
        if other:
            shutil.copy(os.path.join(a.dir, other + ".pcap"), os.path.join(d, victim + ".pcap"))
        if field == "io":
            mf = os.path.join(d, victim + ".json")
            m = json.load(open(mf))
            m["io"]["verified"] = False
            json.dump(m, open(mf, "w"))
        cmd = [sys.executable, os.path.abspath(__file__), "--qptrace", a.qptrace, d]
        if a.tshark:
            cmd[2:2] = ["--tshark", a.tshark]
        r = subprocess.run(cmd, capture_output=True, text=True)
        refused = r.returncode == 1 and f"FAIL {victim}:" in r.stdout
        others_ok = all(f"ok   {n}:" in r.stdout for n in names if n != victim)
        print(("ok  " if refused and others_ok else "FAIL") + f" self-test: {what}: "
              f"{'refused' if refused else 'NOT refused'}{'' if others_ok else ', others not ok'}")
        bad += not (refused and others_ok)
        shutil.rmtree(d, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
