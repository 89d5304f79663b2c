#!/usr/bin/env python3
"""tools/capture --host without RDMA devices or a VM: the script it makes
for a ConnectX-like pair, what it refuses, and its manifests.

  * `--host mlx5_0:mlx5_0:192.0.2.1 mlx5_1:mlx5_1:192.0.2.2 --dry-run`
    prints a script (valid for bash and, where there is one, busybox sh)
    that names the devices, taps and addresses given and none of the VM's
    (rxe0, rxe1, vethA, vethB, 10.0.0.x), every unimpaired scenario, and
    none of the impaired ones (the drops need tc to see RoCE packets, which
    an offloaded device's never pass), each skipped by name on stderr;
  * an impaired scenario asked for by name is refused (exit 2), so is the
    lossy set (no middle on a host) and a device that is not here;
  * an rxe-like spec (the tap a netdev other than the device) keeps the
    drops, on the netdevs given;
  * `--results DIR` turns a made-up host run (a committed pcap, the records
    the script writes) into a manifest with "host": true, the devices,
    taps, addresses and drivers.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CAPTURE = os.path.join(TOP, "tools", "capture")
MLX = ["--host", "mlx5_0:mlx5_0:192.0.2.1", "mlx5_1:mlx5_1:192.0.2.2"]
VM_NAMES = re.compile(r"(^|[^\w])(rxe0|rxe1|vethA|vethB)(?!\w)|10\.0\.0\.", re.M)
failures = 0


def check(cond, what):
    global failures
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures += 1


def capture(*args):
    return subprocess.run([CAPTURE, *args], capture_output=True, text=True, timeout=120)


def table():
    """name -> impairment, from tools/capture -l"""
    p = capture("-l")
    return dict(l.split("|")[0::2] for l in p.stdout.splitlines() if l.count("|") == 2)


def main():
    scen = table()
    plain = sorted(n for n, i in scen.items() if i == "none")
    impaired = sorted(n for n, i in scen.items() if i != "none")
    check(len(plain) > 10 and impaired, f"tools/capture -l: {len(plain)} unimpaired, {len(impaired)} impaired")

    # 1. the ConnectX-like pair
    p = capture(*MLX, "--dry-run")
    s = p.stdout
    check(p.returncode == 0, f"mlx5 --dry-run: exit 0" + (f" (got {p.returncode}; {p.stderr.strip()[-300:]})" if p.returncode else ""))
    left = [m.group(0).strip() for m in VM_NAMES.finditer(s)]
    check(not left, f"mlx5 --dry-run: no rxe0/rxe1/vethA/vethB/10.0.0.x in the script (found {sorted(set(left))})")
    for w in ("SDEV=mlx5_0", "CDEV=mlx5_1", "STAP=mlx5_0", "CTAP=mlx5_1", "SADDR=192.0.2.1",
              "CADDR=192.0.2.2", "HOSTMODE=1", "tap $STAP"):
        check(w in s, f"mlx5 --dry-run: the script has {w}")
    ran = re.findall(r"^scenario (\S+) ", s, re.M)
    check(sorted(ran) == plain, f"mlx5 --dry-run: every unimpaired scenario, no impaired one ({len(ran)} run"
          + (f"; missing {sorted(set(plain) - set(ran))}, extra {sorted(set(ran) - set(plain))}" if sorted(ran) != plain else "") + ")")
    lines = {l.split()[1]: l for l in s.splitlines() if l.startswith("scenario ")}
    check(all(" -d\\ mlx5_0" in lines[n] and " -d\\ mlx5_1" in lines[n] for n in ran
              if not n.startswith(("qpgen", "rping"))),
          "mlx5 --dry-run: every verbs/perftest scenario uses -d mlx5_0 (server) and -d mlx5_1 (client)")
    check(all("-s\\ 192.0.2.1\\ -c\\ 192.0.2.2" in lines[n] and "@OUT@/" in lines[n]
              for n in ran if n.startswith("qpgen")),
          "mlx5 --dry-run: qpgen gets -s 192.0.2.1 -c 192.0.2.2 and writes into $OUT")
    check(all(re.search(rf"skipping {n} .*ConnectX", p.stderr) for n in impaired if not scen[n].startswith("loss")),
          "mlx5 --dry-run: each impaired scenario skipped by name, saying why")
    for sh in ("bash", "busybox"):
        exe = shutil.which(sh)
        if not exe:
            print(f"skip {sh} -n: no {sh}")
            continue
        q = subprocess.run([exe] + (["sh"] if sh == "busybox" else []) + ["-n"], input=s, text=True,
                           capture_output=True)
        check(q.returncode == 0, f"mlx5 --dry-run: the script parses with {sh} ({q.stderr.strip()[:200]})")

    # 2. refusals
    drop = next(n for n in impaired if scen[n].startswith("drop"))
    p = capture(*MLX, "--dry-run", "rc_pingpong", drop)
    check(p.returncode == 2 and f"{drop} refused" in p.stderr,
          f"mlx5: {drop} asked for by name is refused, exit 2 (got {p.returncode}: {p.stderr.strip()[:200]})")
    p = capture(*MLX, "-L", "--dry-run")
    check(p.returncode == 2 and "needs the VM's middle" in p.stderr and "no scenario" in p.stderr,
          f"mlx5 -L: the lossy set is refused, exit 2 (got {p.returncode})")
    p = capture("--host", "qptrace_no_dev0", "qptrace_no_dev1", "rc_pingpong")
    check(p.returncode == 2 and "no RDMA device qptrace_no_dev0" in p.stderr,
          f"a device that is not here: exit 2, named (got {p.returncode}: {p.stderr.strip()[:200]})")

    # what is missing here is named, with its package: devices and tools
    fake = tempfile.mkdtemp(prefix="qptrace-host-path.")
    try:
        for d in ("/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"):
            for n in (os.listdir(d) if os.path.isdir(d) else []):
                if n not in ("ibv_rc_pingpong", "tcpdump") and not os.path.lexists(os.path.join(fake, n)):
                    os.symlink(os.path.join(d, n), os.path.join(fake, n))
        p = subprocess.run([CAPTURE, "--host", "qptrace_no_dev0", "qptrace_no_dev1", "rc_pingpong"],
                           capture_output=True, text=True, timeout=120, env=dict(os.environ, PATH=fake))
        check(p.returncode == 2 and "ibv_rc_pingpong (ibverbs-utils)" in p.stderr
              and "tcpdump (tcpdump)" in p.stderr and "no RDMA device qptrace_no_dev1" in p.stderr,
              "missing tools and devices named, exit 2" + ("" if p.returncode == 2 else
                                                           f" (got {p.returncode}: {p.stderr.strip()[-300:]})"))
    finally:
        shutil.rmtree(fake, ignore_errors=True)

    # 3. an rxe-like pair keeps the drops, on its netdevs
    p = capture("--host", "sw0:ethS:198.51.100.1", "sw1:ethC:198.51.100.2", "--dry-run")
    ran = re.findall(r"^scenario (\S+) \S+ (\S+)", p.stdout, re.M)
    want = {n: scen[n].replace("vethA", "ethS").replace("vethB", "ethC") for n in scen
            if not scen[n].startswith("loss")}
    check(p.returncode == 0 and dict(ran) == want,
          f"rxe-like --dry-run: every scenario, drops on ethS/ethC ({len(ran)} run, exit {p.returncode})")
    check(not VM_NAMES.search(p.stdout), "rxe-like --dry-run: no VM names left")

    # 4. manifests from a host run's results
    tmp = tempfile.mkdtemp(prefix="qptrace-host-dry.")
    try:
        res, out = os.path.join(tmp, "res"), os.path.join(tmp, "out")
        os.makedirs(res)
        shutil.copy(os.path.join(TOP, "captures", "rxe", "rc_pingpong.pcap"), res)
        with open(os.path.join(res, "rc_pingpong.meta"), "w") as f:
            f.write("name=rc_pingpong\nserver_rc=0\nclient_rc=0\ngid_index_server=3\ngid_index_client=3\n"
                    "t_start=1.0\nt_client_start=1.5\nt_client_end=2.0\nt_end=3.0\nattempts=1\n"
                    "server_args=-d mlx5_0 -g 3 -n 5 -s 1024\n")
        with open(os.path.join(res, "env.meta"), "w") as f:
            f.write("kernel=6.1.0-test\nactive_mtu=4096\nnetdev_mtu=9000\nhost=1\n"
                    "capture_filter=(udp port 4791 or tcp) and host 192.0.2.1 and host 192.0.2.2\n")
            for r, i, n in (("server", 0, "enp1s0f0np0"), ("client", 1, "enp1s0f1np1")):
                f.write(f"{r}_dev=mlx5_{i}\n{r}_tap=mlx5_{i}\n{r}_netdev={n}\n{r}_addr=192.0.2.{i + 1}\n"
                        f"{r}_driver=mlx5_core\n{r}_parent=\n{r}_netdev_driver=mlx5_core\n"
                        f"{r}_node_type=1: CA\n{r}_hca=fw_ver: 22.36.1010 vendor_id: 0x02c9 "
                        "vendor_part_id: 4125 hw_ver: 0x0 board_id: MT_0000000359\n")
        p = capture(*MLX, "--results", res, "-o", out)
        mp = os.path.join(out, "rc_pingpong.json")
        check(p.returncode == 0 and os.path.exists(mp),
              f"--results: rc_pingpong's manifest written (exit {p.returncode}: {p.stderr.strip()[:200]})")
        if os.path.exists(mp):
            m = json.load(open(mp))
            d = m.get("devices", {})
            check(m.get("host") is True and "--host" in m.get("generated_by", ""), "--results: host true")
            check(d.get("server", {}).get("device") == "mlx5_0" and d.get("client", {}).get("tap") == "mlx5_1"
                  and d.get("server", {}).get("netdev") == "enp1s0f0np0"
                  and d.get("client", {}).get("driver") == "mlx5_core"
                  and d.get("server", {}).get("hca", {}).get("vendor_part_id") == "4125",
                  f"--results: devices, taps, netdevs, drivers, HCA ({d})")
            check(m["server"]["addr"] == "192.0.2.1" and m["client"]["device"] == "mlx5_1"
                  and m["capture"]["interface"] == "mlx5_0" and "host 192.0.2.1" in m["capture"]["command"]
                  and m["path_mtu"] == 4096 and m["netdev_mtu"] == 9000,
                  "--results: sides, capture interface and filter, MTUs")
            check(m["expect"] == json.loads(
                '{"transport":"RC","client":{"SEND":[5,1024]},"server":{"SEND":[5,1024]}}'),
                "--results: the scenario's expectation")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    print(f"{'FAILED' if failures else 'passed'}: {failures} check(s) failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
