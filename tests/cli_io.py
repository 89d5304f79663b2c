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

    print(f'{ok} passed, {bad} failed')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
