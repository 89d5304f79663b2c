#!/usr/bin/env python3
"""A capture of many QPs: every packet analysed, peak RSS bounded.

Usage: tests/scale.py --qptrace BIN --qpscen BIN [--qps N] [--max-rss-mib M]
                      [--dir DIR]

Makes a capture of N one-packet QPs with `qpscen bench --one-way --msg-size 0
--packets N --qps N --loss 0` (N distinct destination QPNs, one WRITE each,
no answers: N conversations), in a temporary directory under DIR (default
/var/tmp; removed afterwards), then runs

  qptrace summary --json -q FILE    the totals are checked against the
                                    generator's command line: N frames, N
                                    RoCE packets, 0 untracked, N
                                    conversations, no QP limit in the totals
  qptrace summary -q -j 1 FILE      the text report
  qptrace summary -q -j 2 FILE      the same text, byte for byte, with its
                                    own bound (--max-rss-jobs-mib, 320)
  qptrace plot --top 3 FILE         conversations 0, 1 and 2 drawn (none
                                    has trouble), within --max-rss-plot-mib
                                    (300; 559 MiB when plot thawed every
                                    conversation)

each as a child whose peak RSS (getrusage of the child, ru_maxrss) must be
at most M MiB; then `summary --max-qps K` (K = N / 1000): N - K packets
untracked, K conversations, the limit and that it was reached in the
totals, the untracked finding naming --max-qps, the text saying so.  Prints the time and the peak of each.  Under AddressSanitizer
(tools/sanitize) N is at most ASAN_QPS (70,000, past the engine's old
65,536 limit) and the RSS is not checked (nor counted), and the output
says so.  Prints "N passed, N failed"; exit status 0 when every check
passes, 1 otherwise.
"""
import argparse
import filecmp
import json
import re
import os
import subprocess
import sys
import tempfile
import time

import tap  # tests/tap.py
from tap import check

# QPs under AddressSanitizer: past the engine's old limit of 65,536
ASAN_QPS = 70000


def run(cmd, out_path):
    """Runs cmd with stdout to out_path; (status, peak RSS in KiB, seconds)."""
    c = tap.run_child(cmd, stdout=out_path)
    if c.err:
        sys.stderr.write(c.err.decode('utf-8', 'replace')[-2000:])
    return c.status, c.rss_kib, c.seconds


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--qptrace', required=True)
    ap.add_argument('--qpscen', required=True)
    ap.add_argument('--qps', type=int, default=1000000)
    ap.add_argument('--max-rss-mib', type=float, default=256.0)
    ap.add_argument('--max-rss-jobs-mib', type=float, default=320.0,
                    help='the bound with -j 2 (two engines, then one)')
    ap.add_argument('--max-rss-plot-mib', type=float, default=300.0,
                    help='the bound of plot --top 3 (two reads of the input)')
    ap.add_argument('--dir', default='/var/tmp')
    a = ap.parse_args()
    n = a.qps
    asan = tap.under_asan()
    if asan and n > ASAN_QPS:
        # tools/sanitize: the RSS bound means nothing for an instrumented
        # binary (not checked), and a million QPs take minutes there: the
        # same checks on ASAN_QPS QPs (still past the old 65,536 limit)
        tap.sanitized_note('%d QPs instead of %d, RSS not checked' % (ASAN_QPS, n))
        n = ASAN_QPS
    with tempfile.TemporaryDirectory(prefix='qpt-scale-', dir=a.dir) as tmp:
        cap = os.path.join(tmp, 'many-qps-%d.pcap' % n)
        t = time.monotonic()
        subprocess.run([a.qpscen, 'bench', '-o', cap, '--packets', str(n), '--qps', str(n),
                        '--loss', '0', '--cnp-rate', '0', '--msg-size', '0', '--one-way'],
                       check=True)
        print('made %s: %d packets to %d QPNs in %.1f s (%.0f MB)'
              % (cap, n, n, time.monotonic() - t, os.path.getsize(cap) / 1e6), flush=True)
        out = os.path.join(tmp, 'summary.json')
        status, rss, secs = run([a.qptrace, 'summary', '--json', '-q', cap], out)
        print('summary --json: exit %d, %.1f s, peak RSS %.1f MiB' % (status, secs, rss / 1024),
              flush=True)
        check(status == 0, 'summary --json exits 0')
        totals = {}
        try:
            with open(out, 'rb') as f:
                f.seek(max(0, os.path.getsize(out) - 4096))
                tail = f.read().decode('utf-8', 'replace')
            totals = json.loads(tail[tail.index('"totals":') + 9:].rstrip().rstrip('}') + '}')
        except (ValueError, OSError) as e:
            check(False, 'totals in the JSON summary: %s' % e)
        print('totals: %s' % totals)
        for key, want in (('frames', n), ('iba_packets', n), ('untracked', 0),
                          ('conversations', n)):
            check(totals.get(key) == want, '%s = %s (want %d, from the generator\'s command line)'
                  % (key, totals.get(key), want))
        check('max_qps' not in totals, 'no QP limit in the totals without --max-qps')
        # every QP is one-way (--one-way): one capture-wide finding names
        # them all, not one finding per conversation
        try:
            with open(out, 'rb') as f:
                f.seek(max(0, os.path.getsize(out) - 65536))
                tail = f.read().decode('utf-8', 'replace')
            one_way = [m for m in re.finditer(r'"kind":"capture_incomplete"[^}]*"numbers":\{([^}]*)\}', tail)]
        except OSError:
            one_way = []
        check(len(one_way) == 1 and '"conversations":%d' % n in one_way[0].group(1),
              'one capture_incomplete finding for the %d one-way conversations (found %d)'
              % (n, len(one_way)))
        if not asan:  # (under ASan: not checked, not counted; said above)
            check(rss <= a.max_rss_mib * 1024,
                  'summary --json peak RSS %.1f MiB <= %.0f MiB' % (rss / 1024, a.max_rss_mib))
        text1 = os.path.join(tmp, 'summary-j1.txt')
        status, rss, secs = run([a.qptrace, 'summary', '-q', '-j', '1', cap], text1)
        print('summary (text): exit %d, %.1f s, peak RSS %.1f MiB' % (status, secs, rss / 1024),
              flush=True)
        check(status == 0, 'summary exits 0')
        if not asan:
            check(rss <= a.max_rss_mib * 1024,
                  'summary peak RSS %.1f MiB <= %.0f MiB' % (rss / 1024, a.max_rss_mib))
        # two analysis threads: the same report, and their engines' idle
        # conversations stay compact when the caller's absorbs them
        text2 = os.path.join(tmp, 'summary-j2.txt')
        status, rss, secs = run([a.qptrace, 'summary', '-q', '-j', '2', cap], text2)
        print('summary -j 2 (text): exit %d, %.1f s, peak RSS %.1f MiB'
              % (status, secs, rss / 1024), flush=True)
        check(status == 0 and filecmp.cmp(text1, text2, shallow=False),
              'summary -j 2 exits 0 and prints what -j 1 prints (%d bytes)'
              % os.path.getsize(text1))
        os.unlink(text2)
        if not asan:
            check(rss <= a.max_rss_jobs_mib * 1024,
                  'summary -j 2 peak RSS %.1f MiB <= %.0f MiB' % (rss / 1024, a.max_rss_jobs_mib))
        # plot --top 3: the worst three (none has trouble: the first three
        # ids) drawn, the other conversations never thawed
        status, rss, secs = run([a.qptrace, 'plot', '-q', '--top', '3', '-o',
                                 os.path.join(tmp, 'top.svg'), cap], os.devnull)
        drawn = sorted(f for f in os.listdir(tmp) if f.startswith('top-conv'))
        print('plot --top 3: exit %d, %.1f s, peak RSS %.1f MiB, %s'
              % (status, secs, rss / 1024, drawn), flush=True)
        check(status == 0 and drawn == ['top-conv0.svg', 'top-conv1.svg', 'top-conv2.svg'],
              'plot --top 3 exits 0 and draws conversations 0, 1 and 2')
        if not asan:
            check(rss <= a.max_rss_plot_mib * 1024,
                  'plot --top 3 peak RSS %.1f MiB <= %.0f MiB'
                  % (rss / 1024, a.max_rss_plot_mib))
        # --max-qps K: the QPs past K are not analysed, and the output says so
        k = max(1, n // 1000)
        out = os.path.join(tmp, 'limited.json')
        status, rss, secs = run([a.qptrace, 'summary', '--json', '-q', '--max-qps', str(k), cap],
                                out)
        with open(out, 'rb') as f:
            f.seek(max(0, os.path.getsize(out) - 65536))
            tail = f.read().decode('utf-8', 'replace')
        lt = json.loads(tail[tail.index('"totals":') + 9:].rstrip().rstrip('}') + '}')
        print('--max-qps %d: exit %d, %.1f s, totals %s' % (k, status, secs, lt))
        check(status == 0 and lt.get('untracked') == n - k and lt.get('conversations') == k and
              lt.get('max_qps') == k and lt.get('qp_limit_reached') is True,
              '--max-qps %d: %d untracked (want %d), the limit and that it was reached in the '
              'totals' % (k, lt.get('untracked', -1), n - k))
        check('"kind":"untracked"' in tail and '--max-qps' in tail,
              '--max-qps %d: the untracked finding names the option' % k)
        text = subprocess.run([a.qptrace, 'summary', '-q', '--max-qps', str(k), cap],
                              capture_output=True, text=True).stdout
        check('%d packets not analysed: more QPs than --max-qps %d' % (n - k, k) in text,
              '--max-qps %d: the text totals say how many packets were not analysed' % k)
    return tap.done()


if __name__ == '__main__':
    sys.exit(main())
