#!/usr/bin/env python3
"""monitor.py - qptrace monitor with real parts, on this machine only.

A network namespace of its own with a veth pair (qpa <-> qpb) and its own
loopback; tcpreplay replays made and rxe captures into qpa at their
captured pace; `qptrace monitor -i qpb --metrics 127.0.0.1:PORT` captures
on the other end; a real Prometheus server, started here inside the same
namespace, scrapes it every second.  The test asks Prometheus's HTTP API
for the totals (summed over the series) and compares them with
`qptrace summary --json` of the frames as they arrived (tcpdump beside the
monitor: the replay's pace stretches on a loaded machine; the frames must be
the file's).  Then a replay loop at top
speed checks that the monitor's memory stays flat, and `-r DIR --follow`
is checked on a directory whose files grow and rotate.

No address outside the namespace is used: 127.0.0.1 inside it, and the
veth pair, which has no IP address.  Everything is bounded in time and
torn down at the end.  Skips (exit 77) when not root or a part is missing.

    monitor.py QPTRACE ROOT
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse

import tap  # tests/tap.py
from tap import check

CAPTURES = ("captures/rxe/write_bw_drop.pcap", "captures/rxe/read_bw_drop.pcap",
            "captures/rxe/rc_pingpong_drop.pcap", "captures/made/nak_gbn.pcap",
            "captures/made/cnp_ecn.pcap", "captures/made/rnr.pcap")
LOOP_CAPTURE = "captures/rxe/write_bw.pcap"
# Under the sanitizers (tools/sanitize sets ASAN_OPTIONS) the loop is
# shorter and its memory is not judged: ASan's quarantine grows by design.
SANITIZED = "ASAN_OPTIONS" in os.environ
LOOP_PACKETS = int(os.environ.get("QPT_MONITOR_LOOP_PACKETS",
                                  "500000" if SANITIZED else "10000000"))
LOOP_PPS = int(os.environ.get("QPT_MONITOR_LOOP_PPS", "100000"))
METRICS_PORT = 19464
PROM_PORT = 19090


class NS:
    def __init__(self, name):
        self.name = name

    def cmd(self, *args):
        return ["ip", "netns", "exec", self.name, *args]

    def run(self, *args, **kw):
        kw.setdefault("check", True)
        kw.setdefault("capture_output", True)
        kw.setdefault("timeout", 120)
        return subprocess.run(self.cmd(*args), **kw)

    def get(self, url, timeout=5):
        """HTTP GET from inside the namespace (its 127.0.0.1)."""
        return tap.netns_get(self.name, url, timeout)

    def promql(self, q):
        out = self.get(f"http://127.0.0.1:{PROM_PORT}/api/v1/query?" +
                       urllib.parse.urlencode({"query": q}))
        if not out:
            return None
        res = json.loads(out)["data"]["result"]
        return sum(float(r["value"][1]) for r in res) if res else None


def summary_totals(qptrace, cap):
    d = json.loads(subprocess.run([qptrace, "summary", "--json", "-q", cap], check=True,
                                  capture_output=True, text=True).stdout)
    t = {"packets": 0, "retransmitted_packets": 0, "gbn_episodes": 0, "naks": 0,
         "rnr_naks": 0, "cnps": 0, "ecn_ce": 0}
    for c in d["conversations"]:
        for x in c["directions"]:
            t["packets"] += x["packets"]
            t["retransmitted_packets"] += x["retransmitted_packets"]
            t["gbn_episodes"] += x["gbn_episodes"]
            t["naks"] += sum(x["naks"].values())
            t["rnr_naks"] += x["rnr_naks"]
            t["cnps"] += x["cnps"]
            t["ecn_ce"] += x["ecn_ce"]
    t["iba_packets"] = d["totals"]["iba_packets"]
    return t


PROMQL = {"packets": "sum(qptrace_packets_total)",
          "retransmitted_packets": "sum(qptrace_retransmitted_packets_total)",
          "gbn_episodes": "sum(qptrace_gbn_episodes_total)",
          "naks": "sum(qptrace_naks_total)", "rnr_naks": "sum(qptrace_rnr_naks_total)",
          "cnps": "sum(qptrace_cnps_total)", "ecn_ce": "sum(qptrace_ecn_ce_packets_total)",
          "iba_packets": "qptrace_iba_packets_total"}


wait_for = tap.wait_for


def start_monitor(ns, qptrace, extra, out):
    return subprocess.Popen(ns.cmd(qptrace, "monitor", "--no-events", "--json", "--interval", "0",
                                   "--idle", "3600", "--duration", "240", *extra),
                            stdout=out, stderr=subprocess.STDOUT)


def stop(p):
    """Ctrl-C; the exit status (the monitor's own: `ip netns exec` execs it)."""
    return tap.interrupt(p)


def rss_kb(pid):
    # the monitor's own pid: `ip netns exec` execs it, so the pid is the same
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def main():
    qptrace, root = os.path.abspath(sys.argv[1]), sys.argv[2]
    tap.need_live_monitor(qptrace, "network namespaces, a veth pair, a live capture")
    name = f"qptmon{os.getpid()}"
    if subprocess.run(["ip", "netns", "add", name], capture_output=True).returncode:
        tap.skip("cannot create a network namespace here (ip netns add failed)")
    ns = NS(name)
    tmp = tempfile.mkdtemp(prefix="qpt-monitor-")
    prom = mon = None
    try:
        ns.run("sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
        ns.run("sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1")
        ns.run("ip", "link", "set", "lo", "up")
        ns.run("ip", "link", "add", "qpa", "type", "veth", "peer", "name", "qpb")
        for dev in ("qpa", "qpb"):
            ns.run("ip", "link", "set", dev, "mtu", "9000", "up")
        cfg = os.path.join(tmp, "prometheus.yml")
        with open(cfg, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                    "scrape_configs:\n  - job_name: qptrace\n    static_configs:\n"
                    f"      - targets: ['127.0.0.1:{METRICS_PORT}']\n")
        plog = open(os.path.join(tmp, "prometheus.log"), "w")
        prom = subprocess.Popen(ns.cmd("prometheus", f"--config.file={cfg}",
                                       f"--storage.tsdb.path={tmp}/tsdb",
                                       f"--web.listen-address=127.0.0.1:{PROM_PORT}"),
                                stdout=plog, stderr=subprocess.STDOUT)
        check(wait_for(lambda: ns.get(f"http://127.0.0.1:{PROM_PORT}/-/ready") is not None, 60)
              is not None, "Prometheus is up inside the namespace")

        for rel in CAPTURES:
            cap = os.path.join(root, rel)
            want = summary_totals(qptrace, cap)
            mlog = open(os.path.join(tmp, "monitor.log"), "w")
            mon = start_monitor(ns, qptrace, ["-i", "qpb", "--metrics",
                                              f"127.0.0.1:{METRICS_PORT}"], mlog)
            up = wait_for(lambda: ns.get(f"http://127.0.0.1:{METRICS_PORT}/metrics"), 20)
            if not up:
                check(False, f"{rel}: the monitor serves metrics")
                stop(mon)
                continue
            # what arrived, as tcpdump beside the monitor saw it: the
            # replay keeps the captured pace only roughly on a loaded
            # machine (a pause stretched past the 500 us timeout gap is a
            # timeout episode there), so the analysis of the frames as
            # they arrived is the reference; the frames are the file's
            rx = os.path.join(tmp, "arrived.pcap")
            dump = subprocess.Popen(ns.cmd("tcpdump", "-i", "qpb", "-s", "0", "-U", "-n",
                                           "--immediate-mode", "-w", rx),
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            wait_for(lambda: os.path.exists(rx) or None, 10)
            time.sleep(0.5)
            t0 = time.monotonic()
            ns.run("tcpreplay", "-q", "-i", "qpa", cap, timeout=120)
            got = wait_for(lambda: (ns.promql(PROMQL["iba_packets"]) == want["iba_packets"]) or None,
                           30)
            # (tcpdump -U writes each packet as it comes: wait for all)
            wait_for(lambda: summary_totals(qptrace, rx)["iba_packets"] >= want["iba_packets"]
                     or None, 15)
            tap.interrupt(dump)
            arrived = summary_totals(qptrace, rx)
            the_file = dict(want)
            # (tcpdump may miss the first frames while it starts: then the
            # file is the reference)
            if arrived["iba_packets"] == want["iba_packets"] and arrived["packets"] == want["packets"]:
                if arrived != want:
                    print(f"# {rel}: as replayed {arrived}, the file {want}")
                want = arrived
            else:
                print(f"# {rel}: tcpdump saw {arrived['iba_packets']} of {want['iba_packets']} frames: "
                      "the file is the reference")
            scraped = {k: ns.promql(q) for k, q in PROMQL.items()}
            scraped = {k: int(v) if v is not None else None for k, v in scraped.items()}
            # a counter that depends on the replay's pace (episodes: a
            # pause stretched past the timeout gap) may differ between
            # tcpdump's stamps and the monitor's own of the same arrival
            # (CI under load: read_bw_drop's file 7 episodes, as tcpdump
            # saw it arrive 9, the monitor 8): where the arrival and the
            # file disagree, a value from one to the other; where they
            # agree, that value alone
            def fits(k):
                if scraped[k] is None:
                    return False
                lo, hi = sorted((want[k], the_file[k]))
                return lo <= scraped[k] <= hi

            same = got and all(fits(k) for k in want)
            check(same, f"{rel}: Prometheus {scraped} = summary {want}"
                        f" ({time.monotonic() - t0:.1f} s)")
            drops = ns.promql("sum(qptrace_capture_dropped_packets_total)")
            check(drops == 0, f"{rel}: capture dropped {drops}")
            rc = stop(mon)
            mon = None
            mlog.close()
            with open(os.path.join(tmp, "monitor.log")) as f:
                lines = [json.loads(l) for l in f if l.startswith("{")]
            fin = [l for l in lines if l.get("type") == "final_totals"]
            check(fin and fin[-1]["retransmitted_packets"] == want["retransmitted_packets"] and
                  rc == 130,
                  f"{rel}: Ctrl-C prints the final summary "
                  f"({fin[-1]['retransmitted_packets'] if fin else None} retransmitted), "
                  f"exit status {rc} (130)")

        # Ctrl-C right after a burst: the frames the kernel still holds
        # (in a block it has not handed over yet) are counted
        cap = os.path.join(root, "captures/made/cnp_ecn.pcap")
        want = summary_totals(qptrace, cap)
        mlog = open(os.path.join(tmp, "monitor-burst.log"), "w")
        mon = start_monitor(ns, qptrace, ["-i", "qpb"], mlog)
        time.sleep(1.5)
        ns.run("tcpreplay", "-q", "--topspeed", "-i", "qpa", cap, timeout=120)
        rc = stop(mon)
        mon = None
        mlog.close()
        with open(os.path.join(tmp, "monitor-burst.log")) as f:
            fin = [json.loads(l) for l in f if '"final_totals"' in l]
        check(fin and fin[-1]["iba_packets"] == want["iba_packets"] and rc == 130,
              f"Ctrl-C at once after a burst of {want['iba_packets']} packets: "
              f"{fin[-1]['iba_packets'] if fin else None} counted, exit status {rc}")

        # Memory: a replay loop at top speed; RSS after the first quarter and
        # at the end.
        cap = os.path.join(root, LOOP_CAPTURE)
        nframes = json.loads(subprocess.run([qptrace, "summary", "--json", "-q", cap], check=True,
                                            capture_output=True, text=True).stdout)["totals"]["frames"]
        loops = max(1, LOOP_PACKETS // nframes)
        mlog = open(os.path.join(tmp, "monitor-loop.log"), "w")
        mon = start_monitor(ns, qptrace, ["-i", "qpb", "--metrics", f"127.0.0.1:{METRICS_PORT}"],
                            mlog)
        wait_for(lambda: ns.get(f"http://127.0.0.1:{METRICS_PORT}/metrics"), 20)
        rp = subprocess.Popen(ns.cmd("tcpreplay", "-q", f"--pps={LOOP_PPS}", f"--loop={loops}",
                                     "-i", "qpa", cap),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        samples = []
        t0 = time.monotonic()
        while rp.poll() is None and time.monotonic() - t0 < 300:
            samples.append(rss_kb(mon.pid))
            time.sleep(1)
        if rp.poll() is None:
            rp.kill()
        rp.wait()
        time.sleep(2)
        samples.append(rss_kb(mon.pid))
        frames = ns.get(f"http://127.0.0.1:{METRICS_PORT}/metrics") or ""
        fr = [l for l in frames.splitlines() if l.startswith("qptrace_frames_total ")]
        dr = [l for l in frames.splitlines() if l.startswith("qptrace_capture_dropped_packets_total")]
        stop(mon)
        mon = None
        samples = [s for s in samples if s]
        q = samples[len(samples) // 4] if samples else None
        grow = (samples[-1] - q) if samples else None
        check(samples and (grow < 4096 or SANITIZED),
              f"replay loop of {loops * nframes} frames ({fr[0].split()[1] if fr else '?'} "
              f"captured, dropped {[d.split()[-1] for d in dr]}) in {time.monotonic() - t0:.0f} s: "
              f"RSS {q} kB after a quarter, {samples[-1] if samples else None} kB at the end"
              f"{' (sanitized: not judged)' if SANITIZED else ''}")

        # -r DIR --follow: a file that grows, then a rotation.
        d = os.path.join(tmp, "rot")
        os.mkdir(d)
        src = os.path.join(root, "captures/rxe/write_bw_drop.pcap")
        data = open(src, "rb").read()
        want = summary_totals(qptrace, src)
        with open(os.path.join(d, "cap-0001.pcap"), "wb") as f:
            f.write(data[:24 + (len(data) - 24) // 2 + 7])  # cut mid-record
        mlog = open(os.path.join(tmp, "monitor-follow.log"), "w")
        mon = subprocess.Popen([qptrace, "monitor", "--json", "--interval", "1", "--idle", "3600",
                                "--duration", "60", "-r", d, "--follow"],
                               stdout=mlog, stderr=subprocess.STDOUT)
        time.sleep(1.5)
        with open(os.path.join(d, "cap-0001.pcap"), "ab") as f:
            f.write(data[24 + (len(data) - 24) // 2 + 7:])
        time.sleep(1.5)
        nak = os.path.join(root, "captures/made/nak_gbn.pcap")
        shutil.copy(nak, os.path.join(d, "cap-0002.pcap"))
        os.utime(os.path.join(d, "cap-0002.pcap"))
        time.sleep(2.5)
        stop(mon)
        mon = None
        mlog.close()
        lines = [json.loads(l) for l in open(os.path.join(tmp, "monitor-follow.log")) if l.startswith("{")]
        fin = [l for l in lines if l.get("type") == "final_totals"]
        want2 = summary_totals(qptrace, nak)
        ev = [l for l in lines if l.get("type") == "event"]
        iv = [l for l in lines if l.get("type") == "interval"]
        check(fin and fin[-1]["iba_packets"] == want["iba_packets"] + want2["iba_packets"] and
              fin[-1]["retransmitted_packets"] ==
              want["retransmitted_packets"] + want2["retransmitted_packets"],
              f"-r DIR --follow: a growing file cut mid-record, then a rotation: "
              f"{fin[-1]['iba_packets'] if fin else None} RoCE packets, "
              f"{fin[-1]['retransmitted_packets'] if fin else None} retransmitted, "
              f"{len(ev)} events, {len(iv)} periodic lines")
    finally:
        stop(mon)
        stop(prom)
        subprocess.run(["ip", "netns", "delete", name], capture_output=True)
        if tap.failed:
            for log in ("monitor.log", "prometheus.log"):
                p = os.path.join(tmp, log)
                if os.path.exists(p):
                    print(f"# --- {log} (tail)")
                    for line in open(p).read().splitlines()[-15:]:
                        print("#", line)
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"1..{tap.n}")
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
