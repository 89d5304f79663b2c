#!/usr/bin/env python3
"""Outputs at the edges: every failed write is an error, empty captures
still give their summary, unreadable files stay out of the header.

usage: cli_io.py QPTRACE ROOT

- stdout on a full disk (/dev/full) and stdout closed: exit 2 and one
  stderr line "cannot write standard output: ..." for packets, events,
  summary (text and JSON) and verdicts;
- a reader that goes away with SIGPIPE ignored (as Python's subprocess
  with restore_signals=False, some CI): exit 2, the write error reported,
  and qptrace stops reading instead of going through the whole input;
- a capture with a header and no frames: `summary --json` is valid JSON
  with zero totals (jq gets an object, not nothing);
- `summary missing.pcap good.pcap`: the header names only the good file.
Prints `N passed, N failed`.
"""
import json
import os
import signal
import subprocess
import sys
import time

ok = bad = 0


def check(cond, what):
    global ok, bad
    if cond:
        ok += 1
    else:
        bad += 1
        print('FAIL', what)


def first_frame_time(path):
    """The first record's time of a classic pcap (the window's +0)."""
    with open(path, 'rb') as f:
        hdr = f.read(24)
        rec = f.read(16)
    magic = int.from_bytes(hdr[:4], 'little')
    order = 'little' if magic in (0xa1b2c3d4, 0xa1b23c4d) else 'big'
    nano = int.from_bytes(hdr[:4], order) == 0xa1b23c4d
    sec = int.from_bytes(rec[:4], order)
    frac = int.from_bytes(rec[4:8], order)
    return sec + frac / (1e9 if nano else 1e6)


def main():
    q, root = os.path.abspath(sys.argv[1]), sys.argv[2]
    os.chdir(root)
    cap = 'captures/made/nak_gbn.pcap'
    cmds = [['packets', cap], ['packets', '--json', cap], ['events', cap],
            ['events', '--json', cap], ['summary', cap], ['summary', '--json', cap],
            ['verdicts'], ['verdicts', '--json']]
    for args in cmds:
        with open('/dev/full', 'w') as full:
            p = subprocess.run([q, *args], stdout=full,
                               stderr=subprocess.PIPE, text=True, timeout=60)
        check(p.returncode == 2 and 'cannot write standard output: No space left on device' in p.stderr,
              f'{args} > /dev/full: exit {p.returncode}, stderr {p.stderr.strip()!r}')
        p = subprocess.run([q, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           text=True, timeout=60,
                           preexec_fn=lambda: os.close(1))
        check(p.returncode == 2 and 'cannot write standard output' in p.stderr,
              f'{args} with stdout closed: exit {p.returncode}, stderr {p.stderr.strip()!r}')

    # SIGPIPE ignored, the reader reads one line and leaves: the write
    # fails with EPIPE and qptrace stops.  Many files make enough output
    # to fill the pipe many times over.
    many = ['captures/public/linlinw5_nccl_nccl_node0.pcap'] * 400
    for args in (['packets', *many], ['events', *many]):
        t = time.monotonic()
        p = subprocess.Popen([q, args[0], '-q', *args[1:]],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             restore_signals=False,
                             preexec_fn=lambda: signal.signal(signal.SIGPIPE, signal.SIG_IGN))
        p.stdout.readline()
        p.stdout.close()
        err = p.stderr.read().decode()
        rc = p.wait(timeout=120)
        check(rc == 2 and 'cannot write standard output: Broken pipe' in err,
              f'{args[0]} | head -1 with SIGPIPE ignored: exit {rc}, stderr {err[-200:]!r}')

    out = subprocess.run([q, 'summary', '--json', 'captures/hostile/header_only.pcap'],
                         capture_output=True, text=True, timeout=60)
    try:
        s = json.loads(out.stdout)
        check(out.returncode == 0 and s['conversations'] == [] and s['totals']['frames'] == 0,
              f'empty capture: {out.stdout!r}')
    except ValueError:
        check(False, f'empty capture: summary --json is not JSON: {out.stdout!r} (exit {out.returncode})')

    out = subprocess.run([q, 'summary', '-q', 'captures/does-not-exist.pcap', cap],
                         capture_output=True, text=True, timeout=60)
    first = out.stdout.splitlines()[0] if out.stdout else ''
    check(out.returncode == 2 and first == cap + ':',
          f'missing + good: header {first!r}, exit {out.returncode}')
    out = subprocess.run([q, 'summary', '--json', 'captures/does-not-exist.pcap', cap],
                         capture_output=True, text=True, timeout=60)
    check(json.loads(out.stdout)['file'] == cap, f'missing + good JSON file: {out.stdout[:80]!r}')

    # The window selects what is shown; the analysis is of the whole input:
    # events inside a window are exactly the whole input's events at those
    # times (same conversation ids, verdicts, episodes and triggers), and
    # the summary shows the conversations with a frame in it, numbered and
    # paired as in the whole input (their counts are the window's:
    # tests/rollup.py checks them).
    for c, lo, hi in (('captures/made/nak_gbn.pcap', 0.000020, 0.000030),
                      ('captures/made/multi_qp.pcap', 0.000005, 0.000012),
                      ('captures/rxe/read_bw_drop.pcap', 0.0512, 0.06),
                      ('captures/made/timeout_resend.pcap', 0.004, 0.0045)):
        full = [json.loads(l) for l in subprocess.run([q, 'events', '--json', '-q', c],
                capture_output=True, text=True).stdout.splitlines()]
        first = first_frame_time(c)
        want = [e for e in full if lo - 1e-7 <= e['time'] - first <= hi + 1e-7]
        got = [json.loads(l) for l in subprocess.run(
            [q, 'events', '--json', '-q', '--from', f'+{lo:.6f}', '--to', f'+{hi:.6f}', c],
            capture_output=True, text=True).stdout.splitlines()]
        check(got == want and (want or 'multi_qp' in c), f'{c} events in [{lo}, {hi}]: {len(got)} events, want {len(want)}')
        summ = json.loads(subprocess.run([q, 'summary', '--json', c], capture_output=True,
                                         text=True).stdout)
        ws = json.loads(subprocess.run([q, 'summary', '--json', '--from', f'+{lo:.6f}', '--to',
                                        f'+{hi:.6f}', c], capture_output=True, text=True).stdout)
        ids = {cv['id'] for cv in ws['conversations']}
        same = lambda cv: {k: cv[k] for k in ('id', 'transport', 'paired_by', 'endpoints')}
        check(ids and all(same(cv) in map(same, summ['conversations']) for cv in ws['conversations']),
              f'{c} summary in the window: conversations {sorted(ids)} not those of the whole input')
    out = subprocess.run([q, 'summary', '--conv', '99', 'captures/made/multi_qp.pcap'],
                         capture_output=True, text=True)
    check(out.returncode == 2 and 'no conversation matches' in out.stderr,
          f'--conv 99: exit {out.returncode}, {out.stderr.strip()!r}')
    out = subprocess.run([q, 'events', '--json', '--qp', '0x11', cap], capture_output=True, text=True)
    evs = [json.loads(l) for l in out.stdout.splitlines()]
    check(out.returncode == 0 and evs and all(e['conv'] == 0 for e in evs),
          f'--qp 0x11: exit {out.returncode}, {len(evs)} events')

    print(f'{ok} passed, {bad} failed')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
