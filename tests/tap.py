"""tests/tap.py - what the Python test scripts share.

    import tap
    tap.check(ok, "what was checked")   # "ok N - what" / "not ok N - what"
    ...
    return tap.done()                   # "N passed, N failed"; exit status

tap.quiet = True before the first check prints only the failures, as
"FAIL: what" (the scripts whose checks are few and long).

run_child() runs a command as a child of its own and returns its exit
status, output, peak RSS (getrusage of that child: os.wait4, so neither
this script nor another child counts), wall time and whether it timed out.

under_asan() tells whether the test runs under tools/sanitize
(AddressSanitizer): a test that does less there (fewer inputs, no memory
bound) must say so in its output (sanitized_note), never count what it
did not do as passed.
"""
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

quiet = False
n = 0
failed = []


def check(ok, what):
    """Counts one check; prints it (quiet: only when it failed)."""
    global n
    n += 1
    if not ok:
        failed.append(what)
    if quiet:
        if not ok:
            print("FAIL:", what, flush=True)
    else:
        print(f"{'ok' if ok else 'not ok'} {n} - {what}", flush=True)
    return ok


def passed():
    return n - len(failed)


def done():
    """Prints "N passed, N failed"; returns the exit status (1 on a failure)."""
    print(f"{passed()} passed, {len(failed)} failed", flush=True)
    return 1 if failed else 0


def free_port():
    """A TCP port free on 127.0.0.1 now."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def skip(why):
    """Exit 77 (meson: skipped), saying why."""
    print(f"SKIP: {why}")
    sys.exit(77)


def need_metrics(qptrace):
    """Skips unless qptrace was built with libmicrohttpd (monitor --metrics)."""
    r = subprocess.run([qptrace, "monitor", "--metrics", "127.0.0.1:1", "-r", "/nonexistent"],
                       capture_output=True, text=True)
    # only the build without it skips (one that cannot load it fails)
    if "was built without" in r.stderr:
        skip("qptrace built without libmicrohttpd (libmicrohttpd-dev): no --metrics")


def need_live_monitor(qptrace, why_root):
    """Skips unless root, with ip, tcpreplay, prometheus and monitor --metrics."""
    if os.geteuid() != 0:
        skip(f"needs root ({why_root})")
    for tool, pkg in (("ip", "iproute2"), ("tcpreplay", "tcpreplay"), ("prometheus", "prometheus")):
        if not shutil.which(tool):
            skip(f"{tool} not installed (Debian package {pkg}: tools/setup-deps installs it)")
    need_metrics(qptrace)


def netns_get(ns, url, timeout=5):
    """HTTP GET from inside network namespace ns (its 127.0.0.1): the body,
    or None."""
    code = ("import sys, urllib.request\n"
            "try:\n"
            f"    sys.stdout.write(urllib.request.urlopen({url!r}, timeout={timeout}).read().decode())\n"
            "except Exception as e:\n"
            "    sys.stderr.write(str(e)); sys.exit(1)\n")
    r = subprocess.run(["ip", "netns", "exec", ns, sys.executable, "-c", code],
                       capture_output=True, text=True, timeout=timeout + 10)
    return r.stdout if r.returncode == 0 else None


def wait_for(fn, timeout, step=0.25):
    """fn()'s first true value within timeout seconds, or None."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = fn()
        if v:
            return v
        time.sleep(step)
    return None


def interrupt(p, timeout=10):
    """Ctrl-C to child p (killed after timeout s); its exit status."""
    if p and p.poll() is None:
        p.send_signal(signal.SIGINT)
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    return p.returncode if p else None


def under_asan():
    """True when run by tools/sanitize (the sanitizer options are set)."""
    return "ASAN_OPTIONS" in os.environ or "LSAN_OPTIONS" in os.environ


def sanitized_note(what):
    """Prints what this test does less under AddressSanitizer."""
    print(f"# under AddressSanitizer: {what}", flush=True)


class Child:
    """What run_child() returns."""

    def __init__(self, status, out, err, rss_kib, seconds, timed_out):
        self.status = status        # exit status; negative: the signal
        self.out = out              # stdout (bytes), None when sent to a file
        self.err = err              # stderr (bytes), None when not captured
        self.rss_kib = rss_kib      # peak RSS of the child (ru_maxrss)
        self.seconds = seconds
        self.timed_out = timed_out

    @property
    def rss_mib(self):
        return self.rss_kib / 1024.0


def run_child(cmd, stdout=None, stderr=True, timeout=None, env=None, cwd=None):
    """Runs cmd with stdin from /dev/null; stdout to the file named stdout
    (os.devnull: discarded), or captured (None), or inherited (False);
    stderr captured unless stderr=False (then inherited).  A timeout kills
    it (timed_out)."""
    t0 = time.monotonic()
    out_f = None if stdout is False else open(stdout, "wb") if stdout else tempfile.TemporaryFile()
    err_f = tempfile.TemporaryFile() if stderr else None
    try:
        p = subprocess.Popen(cmd, stdout=out_f, stderr=err_f, stdin=subprocess.DEVNULL,
                             env=env, cwd=cwd)
        timed_out = []

        def kill():
            timed_out.append(True)
            p.kill()
        timer = threading.Timer(timeout, kill) if timeout else None
        if timer:
            timer.start()
        try:
            _, status, ru = os.wait4(p.pid, 0)
        finally:
            if timer:
                timer.cancel()
        p.returncode = os.waitstatus_to_exitcode(status)  # reaped here
        out = err = None
        if stdout is None:
            out_f.seek(0)
            out = out_f.read()
        if err_f:
            err_f.seek(0)
            err = err_f.read()
    finally:
        if out_f:
            out_f.close()
        if err_f:
            err_f.close()
    return Child(p.returncode, out, err, ru.ru_maxrss, time.monotonic() - t0, bool(timed_out))

