#!/usr/bin/env python3
"""How tools/capture and tools/rxe-vm deal with a VM run that loses results,
without booting a VM.

tools/capture is run with QPTRACE_RXE_VM pointing at a fake runner (written
below) that "runs" each scenario of the VM script by copying the committed
captures/rxe/NAME.pcap and writing the record the real VM script writes.
What the fake does on its first and second call is set per case: leave a
scenario out, report its tool as failed, or fail as a whole.  The checks:
only what is unfinished runs again, in one second VM, its manifest says
vm_run 2, and what is still missing after that fails the capture, by name.

`tools/rxe-vm verify` is checked on a made output directory: a file missing
or cut short against the VM's inventory is named, removed, and fails it.
"""
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CAPTURE = os.path.join(TOP, "tools", "capture")
RXE_VM = os.path.join(TOP, "tools", "rxe-vm")

FAKE = r'''#!/usr/bin/env python3
import os, re, shutil, sys
state, top = os.environ["FAKE_STATE"], os.environ["FAKE_TOP"]
calls = len(os.listdir(state)) + 1
script, out = sys.argv[2], sys.argv[3]
shutil.copy(script, os.path.join(state, f"call{calls}.sh"))
plan = os.environ.get(f"FAKE_CALL{calls}", "")      # e.g. "omit:uc_pingpong fail-tool:x exit:1"
omit = {w[5:] for w in plan.split() if w.startswith("omit:")}
fail = {w[10:] for w in plan.split() if w.startswith("fail-tool:")}
code = next((int(w[5:]) for w in plan.split() if w.startswith("exit:")), 0)
os.makedirs(out, exist_ok=True)
if "nothing" in plan.split():
    sys.exit(code)
names = re.findall(r"^scenario (\S+) ", open(script).read(), re.M)
with open(os.path.join(out, "env.meta"), "w") as f:
    f.write("kernel=fake\nactive_mtu=1024\nmtu_vethA=1500\n")
log = []
for n in names:
    log.append(f"=== {n}: fake run {calls}")
    if n in omit:
        continue
    shutil.copy(os.path.join(top, "captures", "rxe", n + ".pcap"), os.path.join(out, n + ".pcap"))
    rc = 1 if n in fail else 0
    with open(os.path.join(out, n + ".meta"), "w") as f:
        f.write(f"name={n}\nserver_rc=0\nclient_rc={rc}\ngid_index_server=1\ngid_index_client=1\n"
                "t_start=1.0\nt_client_start=1.5\nt_client_end=2.0\nt_end=3.0\nattempts=1\n")
with open(os.path.join(out, "run.log"), "w") as f:
    f.write("\n".join(log) + "\n")
sys.exit(code)
'''

failures = 0


def check(cond, what):
    global failures
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures += 1


def capture(tmp, plans, names):
    """Run tools/capture with the fake runner; returns (rc, stdout, stderr, calls, outdir)."""
    state = tempfile.mkdtemp(dir=tmp)
    out = tempfile.mkdtemp(dir=tmp)
    env = dict(os.environ, QPTRACE_RXE_VM=os.path.join(tmp, "fake-rxe-vm"),
               FAKE_STATE=state, FAKE_TOP=TOP)
    for i, plan in enumerate(plans, 1):
        env[f"FAKE_CALL{i}"] = plan
    p = subprocess.run([CAPTURE, "-o", out] + names, env=env, capture_output=True, text=True,
                       timeout=120)
    calls = [open(os.path.join(state, f)).read() for f in sorted(os.listdir(state))]
    return p.returncode, p.stdout, p.stderr, calls, out


def scenarios_in(script):
    return re.findall(r"^scenario (\S+) ", script, re.M)


def manifest(out, name):
    path = os.path.join(out, name + ".json")
    return json.load(open(path)) if os.path.exists(path) else None


def main():
    tmp = tempfile.mkdtemp(prefix="qptrace-retry.")
    try:
        fake = os.path.join(tmp, "fake-rxe-vm")
        with open(fake, "w") as f:
            f.write(FAKE)
        os.chmod(fake, os.stat(fake).st_mode | stat.S_IXUSR)
        both = ["rc_pingpong", "uc_pingpong"]

        # 1. a scenario's result lost in the first VM: it alone runs again
        rc, so, se, calls, out = capture(tmp, ["omit:uc_pingpong"], both)
        check(rc == 0, f"lost result, found again: capture exit 0 (got {rc}; {se.strip()[-300:]})")
        check(len(calls) == 2, f"lost result: two VM runs (got {len(calls)})")
        check(len(calls) == 2 and scenarios_in(calls[1]) == ["uc_pingpong"],
              "lost result: the second VM runs only uc_pingpong")
        m = manifest(out, "uc_pingpong")
        check(m is not None and m.get("vm_run") == 2, "lost result: uc_pingpong's manifest says vm_run 2")
        m = manifest(out, "rc_pingpong")
        check(m is not None and "vm_run" not in m, "lost result: rc_pingpong's manifest has no vm_run")
        check("running again in a new VM: uc_pingpong" in so, "lost result: capture says what it runs again")

        # 2. a tool that failed all its attempts in the first VM
        rc, so, se, calls, out = capture(tmp, ["fail-tool:rc_pingpong"], both)
        check(rc == 0 and len(calls) == 2 and scenarios_in(calls[1]) == ["rc_pingpong"],
              f"failed tool: rc_pingpong alone runs again and passes (exit {rc}, {len(calls)} runs)")
        m = manifest(out, "rc_pingpong")
        check(m is not None and m["client"]["exit_status"] == 0 and m.get("vm_run") == 2,
              "failed tool: the manifest is the second run's (client exit 0, vm_run 2)")

        # 3. the first VM fails as a whole and brings nothing back
        rc, so, se, calls, out = capture(tmp, ["nothing exit:1"], both)
        check(rc == 0 and len(calls) == 2 and scenarios_in(calls[1]) == both,
              f"VM failed: both scenarios run again and pass (exit {rc}, {len(calls)} runs)")
        check("VM exit 1" in so, "VM failed: capture reports the first VM's exit status")

        # 4. still missing after the second VM: the capture fails, by name
        rc, so, se, calls, out = capture(tmp, ["omit:uc_pingpong", "omit:uc_pingpong"], both)
        check(rc == 1, f"lost twice: capture exit 1 (got {rc})")
        check(len(calls) == 2, f"lost twice: no third VM (got {len(calls)} runs)")
        check("uc_pingpong: no result" in se, "lost twice: stderr names uc_pingpong")
        check(manifest(out, "rc_pingpong") is not None and manifest(out, "uc_pingpong") is None,
              "lost twice: rc_pingpong is still written, uc_pingpong is not")

        # 5. nothing lost: one VM
        rc, so, se, calls, out = capture(tmp, [""], both)
        check(rc == 0 and len(calls) == 1, f"nothing lost: one VM run, exit 0 (exit {rc}, {len(calls)} runs)")

        # 6. rxe-vm verify against the VM's inventory
        d = os.path.join(tmp, "verify")
        os.makedirs(d)
        for name, data in (("whole.pcap", b"x" * 100), ("short.pcap", b"x" * 40)):
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)
        with open(os.path.join(d, ".files"), "w") as f:
            f.write("100 ./whole.pcap\n100 ./short.pcap\n7 ./gone.meta\n")
        p = subprocess.run([RXE_VM, "verify", d], capture_output=True, text=True, timeout=30)
        check(p.returncode == 1, f"verify: a lost and a short file fail it (exit {p.returncode})")
        check("short.pcap" in p.stderr and "gone.meta" in p.stderr and "whole.pcap" not in p.stderr,
              f"verify: names the short and the lost file, not the whole one ({p.stderr.strip()})")
        check(not os.path.exists(os.path.join(d, "short.pcap")), "verify: the cut-short file is removed")
        check(os.path.exists(os.path.join(d, "whole.pcap")), "verify: the whole file stays")
        with open(os.path.join(d, ".files"), "w") as f:
            f.write("100 ./whole.pcap\n")
        p = subprocess.run([RXE_VM, "verify", d], capture_output=True, text=True, timeout=30)
        check(p.returncode == 0, f"verify: a complete output passes (exit {p.returncode}; {p.stderr.strip()})")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{'FAILED' if failures else 'passed'}: {failures} check(s) failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
