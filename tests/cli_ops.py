#!/usr/bin/env python3
"""qptrace as operators use it (issue 16): what golden rows cannot show.

usage: cli_ops.py QPTRACE ROOT

- packets --json carries conv and the verdict kinds of events --json, on
  the same frames;
- packets -w FILE writes the frames shown (--conv, a window) as a pcap that
  reads back with the same frames (and that tshark reads, when installed);
- summary --json findings: every finding names an existing conversation
  and frames of the capture, and the loss findings' numbers add up; a
  capture merged with itself has one capture-copies finding, whose numbers
  are the single capture's packets and conversations.
Prints `N passed, N failed`.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

ok = bad = 0


def check(cond, what):
    global ok, bad
    if cond:
        ok += 1
    else:
        bad += 1
        print('FAIL', what)


def run(q, *args, **kw):
    return subprocess.run([q, *args], capture_output=True, text=True, timeout=120, **kw)


def jsonl(text):
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_packets_verdicts(q):
    for cap in ('captures/made/nak_gbn.pcap', 'captures/made/rnr.pcap',
                'captures/made/cnp_ecn.pcap', 'captures/rxe/write_bw_drop.pcap',
                'captures/made/fill_gbn.pcap'):  # a verdict decided a frame later
        pk = jsonl(run(q, 'packets', '--json', cap).stdout)
        ev = jsonl(run(q, 'events', '--json', cap).stdout)
        by_frame = {}
        for e in ev:
            by_frame.setdefault(e['frame'], set()).add(e['kind'])
        got = {p['frame']: set(p['verdicts']) for p in pk if p['verdicts']}
        check(got == by_frame, f'{cap}: packets --json verdicts {sorted(got.items())[:4]} '
                               f'!= events {sorted(by_frame.items())[:4]}')
        convs = {e['frame']: e['conv'] for e in ev if e['conv'] >= 0}
        for p in pk:
            if p['frame'] in convs:
                check(p['conv'] == convs[p['frame']],
                      f'{cap} frame {p["frame"]}: conv {p["conv"]} != events {convs[p["frame"]]}')
        check(all('conv' in p for p in pk), f'{cap}: a packets --json line without conv')


def test_write(q):
    d = tempfile.mkdtemp()
    try:
        out = os.path.join(d, 'conv1.pcap')
        cap = 'captures/made/multi_qp.pcap'
        p = run(q, 'packets', '-q', '--conv', '1', '-w', out, cap)
        check(p.returncode == 0 and p.stdout == '', f'-w: exit {p.returncode}, stdout {p.stdout[:80]!r}')
        want = [x for x in jsonl(run(q, 'packets', '--json', cap).stdout) if x['conv'] == 1]
        got = jsonl(run(q, 'packets', '--json', out).stdout)
        strip = lambda x: {k: v for k, v in x.items() if k not in ('frame', 'conv')}
        check(len(got) == len(want) and len(got) > 0 and
              [strip(x) for x in got] == [strip(x) for x in want],
              f'-w --conv 1: {len(got)} frames read back, {len(want)} shown')
        # a window, nanosecond times kept
        out2 = os.path.join(d, 'window.pcap')
        p = run(q, 'packets', '-q', '--from', '+0.000010', '--to', '+0.000030', '-w', out2,
                'captures/made/nak_gbn.pcap')
        w = jsonl(run(q, 'packets', '--json', out2).stdout)
        allp = jsonl(run(q, 'packets', '--json', 'captures/made/nak_gbn.pcap').stdout)
        t0 = allp[0]['time']
        inwin = [x['time'] for x in allp if 0.000010 <= round(x['time'] - t0, 6) <= 0.000030]
        check([x['time'] for x in w] == inwin and w,
              f'-w window: times {[x["time"] for x in w][:3]} != {inwin[:3]}')
        if shutil.which('tshark'):
            t = subprocess.run(['tshark', '-r', out, '-T', 'fields', '-e', 'frame.number'],
                               capture_output=True, text=True, timeout=120)
            check(t.returncode == 0 and len(t.stdout.split()) == len(want),
                  f'tshark -r the -w file: exit {t.returncode}, {t.stderr[:120]}')
        # nothing selected: no file, a message
        out3 = os.path.join(d, 'none.pcap')
        p = run(q, 'packets', '--conv', '99', '-w', out3, cap)
        check(not os.path.exists(out3) and 'not written' in p.stderr,
              f'-w with nothing selected: {p.stderr!r}')
        # an unwritable file: exit 2 and a message naming it
        p = run(q, 'packets', '-w', '/nonexistent/dir/x.pcap', cap)
        check(p.returncode == 2 and '/nonexistent/dir/x.pcap' in p.stderr,
              f'-w unwritable: exit {p.returncode}, {p.stderr!r}')
    finally:
        shutil.rmtree(d)


def test_findings(q):
    for cap in ('captures/made/nak_gbn.pcap', 'captures/made/naks.pcap',
                'captures/rxe/write_bw_drop.pcap', 'captures/made/cnp_ecn.pcap',
                'captures/made/timeout_resend.pcap', 'captures/made/multi_qp.pcap'):
        s = json.loads(run(q, 'summary', '--json', cap).stdout)
        ids = {c['id']: c for c in s['conversations']}
        nframes = s['totals']['frames']
        for f in s['findings']:
            check(f['severity'] in ('error', 'warning', 'note', 'chat'), f'{cap}: severity {f}')
            check(f['conv'] is None or f['conv'] in ids, f'{cap}: finding of no conversation {f}')
            check(all(1 <= x <= nframes for x in f['frames']), f'{cap}: frames {f["frames"]}')
            check(f['text'] and f['kind'], f'{cap}: empty finding {f}')
            n = f['numbers']
            if 'resent_packets' in n:
                x = ids[f['conv']]['directions'][f['dir']]
                check(n['resent_packets'] == x['retransmitted_packets'] and
                      abs(n['time_lost_us'] - x['time_lost_us']) < 0.01,
                      f'{cap}: finding numbers {n} vs direction {f["dir"]}')
        sev = ['error', 'warning', 'note', 'chat']
        order = [sev.index(f['severity']) for f in s['findings']]
        check(order == sorted(order), f'{cap}: findings not worst first: {order}')
        clean = all(not x['retransmitted_packets'] and not x['psn_gaps'] and not x['cnps']
                    for c in s['conversations'] for x in c['directions'])
        check(clean == (not s['findings']), f'{cap}: clean {clean} but findings {s["findings"][:1]}')


def test_findings_merged(q):
    """A capture merged with itself (two capture points seeing the same
    packets): every packet of every conversation is seen twice.  With more
    than one conversation that is one finding about the capture (issue 17:
    a merged capture of 100,000 QPs gave 200,000 rows saying the same),
    whose numbers are what the single capture's summary counts."""
    for cap in ('captures/made/multi_qp.pcap', 'captures/rxe/qpgen_multi_qp.pcap',
                'captures/rxe/uc_pingpong.pcap'):
        one = json.loads(run(q, 'summary', '--json', cap).stdout)
        two = json.loads(run(q, 'summary', '--json', cap, cap).stdout)
        convs = [c for c in one['conversations']
                 if any(x['packets'] for x in c['directions'])]
        packets = sum(x['packets'] for c in convs for x in c['directions'])
        copies = [f for f in two['findings'] if f['kind'] == 'capture_copies']
        check(len(convs) > 1, f'{cap}: {len(convs)} conversations (the test needs several)')
        check(len(copies) == 1 and copies[0]['conv'] is None,
              f'{cap} merged with itself: capture copies findings {copies}')
        if len(copies) != 1:
            continue
        n = copies[0]['numbers']
        check(n.get('duplicates') == packets and n.get('conversations') == len(convs),
              f'{cap} merged with itself: {n}, the capture alone: {packets} packets in '
              f'{len(convs)} conversations')
        check(all(1 <= x <= 2 * one['totals']['frames'] for x in copies[0]['frames']) and
              copies[0]['frames'], f'{cap}: frames {copies[0]["frames"]}')


def test_units(q):
    """Durations in µs, ms or s with three significant digits; throughput
    in bit/s; no bare "us" in text (JSON keeps *_us keys)."""
    import re
    dur = re.compile(r'(-?\d+(?:\.\d+)?) (µs|ms|s)\b')
    for cap in ('captures/made/nak_gbn.pcap', 'captures/rxe/write_bw_drop.pcap',
                'captures/rxe/qpgen_rnr.pcap', 'captures/made/timeout_resend.pcap',
                'captures/public/linlinw5_rdma_cm.pcap'):
        for args in (['events'], ['summary'], ['summary', '-l']):
            out = run(q, *args, '-q', cap).stdout
            check(not re.search(r'\d us\b', out), f'{" ".join(args)} {cap}: "us" in text')
            for m in dur.finditer(out):
                digits = m.group(1).lstrip('-').replace('.', '').lstrip('0') or '0'
                check(len(digits) == 3 or m.group(1).lstrip('-') in ('0', '0.00'),
                      f'{" ".join(args)} {cap}: "{m.group(0)}" is not 3 significant digits')
                v = float(m.group(1))
                check(m.group(2) != 'µs' or abs(v) < 1000, f'{cap}: {m.group(0)} should be ms')
                check(m.group(2) != 'ms' or abs(v) < 1000, f'{cap}: {m.group(0)} should be s')
        out = run(q, 'summary', cap).stdout
        check(re.search(r'\d (k|M|G)?bit/s', out), f'summary {cap}: no throughput in bit/s')
    s = run(q, 'events', 'captures/made/nak_gbn.pcap').stdout
    check('(trigger frame 11)' in s, 'events names a go-back-N trigger "trigger frame"')


def test_ctrl_c(q):
    """Ctrl-C stops reading and prints the results so far, marked as cut
    short (exit 130); a second Ctrl-C quits at once."""
    import signal
    import time
    data = open('captures/made/nak_gbn.pcap', 'rb').read()
    for args, mark in ((['summary', '-'], 'cut short by Ctrl-C'),
                       (['summary', '--json', '-'], '"interrupted":true'),
                       (['events', '-'], 'cut short by Ctrl-C'),
                       (['packets', '-'], 'cut short by Ctrl-C')):
        # the capture's frames, and the pipe kept open: qptrace waits for more
        p = subprocess.Popen([q, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        p.stdin.write(data)
        p.stdin.flush()
        time.sleep(0.5)
        p.send_signal(signal.SIGINT)
        try:
            out, err = p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            check(False, f'{args}: still running 10 s after Ctrl-C')
            continue
        out, err = out.decode(), err.decode()
        check(p.returncode == 130, f'{args} Ctrl-C: exit {p.returncode}, {err[:200]!r}')
        check(mark in out + err, f'{args} Ctrl-C: not marked as cut short: {(out + err)[:200]!r}')
        if args[0] == 'summary':
            check('10.0.0.1 QP 0x000011' in out and ('40 frames' in out or
                                                    '"frames":40' in out),
                  f'{args} Ctrl-C: not the results of the 40 frames read: {out[:300]!r}')
        if args[0] == 'packets':
            check(len(out.splitlines()) == 40, f'packets Ctrl-C: {len(out.splitlines())} lines, not 40')
    # a second Ctrl-C while the results are being written (nobody reads
    # them: the write blocks) ends qptrace at once, by the signal
    big = 'captures/public/linlinw5_nccl_nccl_node0.pcap'
    p = subprocess.Popen([q, 'packets', '-v', big], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    time.sleep(0.3)
    p.send_signal(signal.SIGINT)
    try:
        p.wait(timeout=5)
        check(p.returncode == -signal.SIGINT, f'second Ctrl-C: exit {p.returncode}')
    except subprocess.TimeoutExpired:
        p.kill()
        check(False, 'second Ctrl-C: still running')
    p.communicate()


def test_compressed(q):
    """gzip and zstd captures read directly (files and standard input), the
    others named with the way to read them; a directory said to be one."""
    d = tempfile.mkdtemp()
    try:
        cap = 'captures/made/nak_gbn.pcap'
        want = run(q, 'summary', '--json', cap).stdout
        want = json.loads(want)
        files = {}
        for tool, ext in (('gzip', 'gz'), ('zstd', 'zst'), ('xz', 'xz')):
            if not shutil.which(tool):
                continue
            path = os.path.join(d, 'c.pcap.' + ext)
            with open(path, 'wb') as f:
                subprocess.run([tool, '-c', cap], stdout=f, check=True)
            files[ext] = path
        for ext in ('gz', 'zst'):
            if ext not in files:
                continue
            got = run(q, 'summary', '--json', files[ext])
            check(got.returncode == 0, f'{ext}: exit {got.returncode}, {got.stderr[:200]!r}')
            if got.returncode == 0:
                g = json.loads(got.stdout)
                check(g['totals'] == want['totals'] and g['conversations'] == want['conversations'],
                      f'{ext}: not the summary of the uncompressed capture')
            with open(files[ext], 'rb') as f:
                got = subprocess.run([q, 'packets', '--json', '-'], stdin=f, capture_output=True,
                                     text=True, timeout=60)
            check(got.returncode == 0 and len(got.stdout.splitlines()) == 40,
                  f'{ext} on standard input: exit {got.returncode}, {got.stderr[:200]!r}')
        if 'xz' in files:
            got = run(q, 'summary', files['xz'])
            check(got.returncode == 2 and 'xzcat ' + files['xz'] + ' | qptrace' in got.stderr,
                  f'xz: exit {got.returncode}, {got.stderr!r}')
        got = run(q, 'summary', d)
        check(got.returncode == 2 and 'is a directory' in got.stderr, f'directory: {got.stderr!r}')
        s = json.loads(run(q, 'summary', '--json', cap).stdout)
        check(all(x.get('episodes_truncated') is False for c in s['conversations']
                  for x in c['directions']), 'episodes_truncated missing from the JSON')
    finally:
        shutil.rmtree(d)


def pcap_records(path):
    """(header, [(sec, frac, caplen, wirelen, data)]) of a little-endian pcap."""
    import struct
    raw = open(path, 'rb').read()
    recs, off = [], 24
    while off + 16 <= len(raw):
        sec, frac, cap, wire = struct.unpack_from('<iIII', raw, off)
        recs.append([sec, frac, cap, wire, raw[off + 16:off + 16 + cap]])
        off += 16 + cap
    return raw[:24], recs


def write_pcap(path, hdr, recs):
    import struct
    with open(path, 'wb') as f:
        f.write(hdr)
        for sec, frac, cap, wire, data in recs:
            f.write(struct.pack('<iIII', sec, frac, cap, wire) + data)


def pcapng_with(path, opts, frame):
    import struct

    def blk(t, body):
        body += b'\0' * (-len(body) % 4)
        return struct.pack('<II', t, 12 + len(body)) + body + struct.pack('<I', 12 + len(body))

    def opt(code, val):
        return struct.pack('<HH', code, len(val)) + val + b'\0' * (-len(val) % 4)
    shb = blk(0x0a0d0d0a, struct.pack('<IHHq', 0x1a2b3c4d, 1, 0, -1))
    idb = blk(1, struct.pack('<HHI', 1, 0, 65535) + b''.join(opt(c, v) for c, v in opts) + opt(0, b''))
    epb = blk(6, struct.pack('<IIIII', 0, 0, 1000, len(frame), len(frame)) + frame)
    open(path, 'wb').write(shb + idb + epb)


def test_time(q):
    """Signed seconds printed right, fractions past a second carried, times
    past 64-bit nanoseconds an error naming the file and frame, --from in
    9999 refused; plot copies standard input only when it is a capture,
    bounded, and removes the copy (also when killed)."""
    import signal
    import struct
    import time
    d = tempfile.mkdtemp()
    try:
        hdr, recs = pcap_records('captures/made/nak_gbn.pcap')
        neg = os.path.join(d, 'neg.pcap')
        r0, r1 = list(recs[0]), list(recs[1])
        r0[0], r0[1], r1[0], r1[1] = -1, 999999, 0, 0
        write_pcap(neg, hdr, [r0, r1])
        pk = jsonl(run(q, 'packets', '--json', neg).stdout)
        check([p['time'] for p in pk] == [-0.000001, 0.0], f'negative time: {[p["time"] for p in pk]}')
        raw = run(q, 'packets', '--json', neg).stdout
        check('"time":-0.000001,' in raw, f'negative time printed {raw[:80]!r}')
        line = run(q, 'packets', neg).stdout.splitlines()
        check(line and line[1].split()[1] == '0.000001', f'relative time of frame 2: {line[1:2]}')
        ev = run(q, 'events', '--json', neg).stdout
        check('1.999999' not in ev, f'events time {ev[:120]!r}')
        frac = os.path.join(d, 'frac.pcap')
        r0 = list(recs[0])
        r0[0], r0[1] = 10, 1500000
        write_pcap(frac, hdr, [r0])
        raw = run(q, 'packets', '--json', frac).stdout
        check('"time":11.500000,' in raw, f'usec past a second: {raw[:60]!r}')
        for val in (2 ** 62, -2 ** 62):
            ng = os.path.join(d, 'off.pcapng')
            pcapng_with(ng, [(14, struct.pack('<q', val))], recs[0][4])
            for cmd in ('packets', 'summary', 'events'):
                p = run(q, cmd, ng)
                check(p.returncode == 2 and ng + ': frame 1: time' in p.stderr and
                      'out of range' in p.stderr and 'runtime error' not in p.stderr,
                      f'{cmd} if_tsoffset {val}: exit {p.returncode}, {p.stderr!r}')
        ng = os.path.join(d, 'resol0.pcapng')
        pcapng_with(ng, [(9, b'\0')], recs[0][4])
        p = run(q, 'summary', ng)
        check(p.returncode in (0, 2) and 'runtime error' not in p.stderr,
              f'if_tsresol 0: exit {p.returncode}, {p.stderr!r}')
        p = run(q, 'summary', '--from', '9999-12-31T00:00:00Z', 'captures/made/rnr.pcap')
        check(p.returncode == 2 and 'bad --from' in p.stderr, f'--from 9999: {p.returncode} {p.stderr!r}')
        # plot -: the header first, a bound, no copy left behind
        tmp = os.path.join(d, 'tmp')
        os.mkdir(tmp)
        env = dict(os.environ, TMPDIR=tmp)
        t = time.time()
        with open('/dev/zero', 'rb') as z:
            p = subprocess.run([q, 'plot', '--conv', '0', '-o', os.path.join(d, 'z.svg'), '-'],
                               stdin=z, capture_output=True, text=True, timeout=20, env=env)
        check(p.returncode == 2 and 'not a capture' in p.stderr and time.time() - t < 5,
              f'plot - < /dev/zero: exit {p.returncode}, {p.stderr!r}')
        with open('captures/made/nak_gbn.pcap', 'rb') as f:
            p = subprocess.run([q, 'plot', '--conv', '0', '-o', os.path.join(d, 'b.svg'), '-'],
                               stdin=f, capture_output=True, text=True, timeout=20,
                               env=dict(env, QPTRACE_PLOT_STDIN_MAX='1000'))
        check(p.returncode == 2 and 'larger than 1000' in p.stderr, f'plot bound: {p.stderr!r}')
        check(os.listdir(tmp) == [], f'plot left {os.listdir(tmp)} behind')
        for sig in (signal.SIGTERM, signal.SIGINT):
            p = subprocess.Popen([q, 'plot', '--conv', '0', '-o', os.path.join(d, 'k.svg'), '-'],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, env=env)
            p.stdin.write(open('captures/made/nak_gbn.pcap', 'rb').read()[:2000])
            p.stdin.flush()
            time.sleep(0.5)
            copying = os.listdir(tmp)
            p.send_signal(sig)
            p.wait(timeout=10)
            p.stdin.close()
            check(copying and os.listdir(tmp) == [],
                  f'plot killed by {sig}: copy {copying}, left {os.listdir(tmp)}')
    finally:
        shutil.rmtree(d)


def test_monitor_nothing_opened(q):
    """monitor on an interface or a folder that is not there: the error
    alone on stderr, nothing on stdout (no final totals), exit 2."""
    for args, name in ((('-i', 'nosuch0'), 'nosuch0'), (('-r', 'nosuch.d'), 'nosuch.d')):
        r = run(q, 'monitor', *args)
        err = r.stderr.splitlines()
        check(r.returncode == 2 and r.stdout == '' and len(err) == 1 and name in err[0],
              f'monitor {" ".join(args)}: exit {r.returncode}, stdout {r.stdout!r}, stderr {err}')


def test_man_page(q):
    """docs/qptrace.1 names every option each command's --help lists, for
    that command; the bash completion offers them."""
    import re
    man = open('docs/qptrace.1').read()
    plain = lambda t: re.sub(r'\\f[BIRP]', '', t).replace('\\-', '-').replace('\\(aq', "'")
    entries = {}  # option -> set of commands, from ".TP / .BR -x, --long / (cmds)"
    lines = man.splitlines()
    for i, line in enumerate(lines):
        if line == '.TP' and i + 2 < len(lines) and lines[i + 2].startswith('('):
            opts = re.findall(r'--?[A-Za-z][A-Za-z-]*', plain(lines[i + 1]))
            cmds = set(c.strip() for c in lines[i + 2].strip('()').split(','))
            for o in opts:
                entries.setdefault(o, set()).update(cmds)
    helptext = run(q, '--help').stdout
    commands = re.findall(r'^  ([a-z]+) ', helptext.split('Commands:')[1], re.M)
    check(set(commands) >= {'summary', 'events', 'packets', 'grade', 'plot', 'verdicts'},
          f'commands {commands}')
    for c in commands:
        check(re.search(r'^\.B ' + c + r'$', man, re.M), f'man page: no command {c}')
        h = run(q, 'help', c).stdout
        for m in re.finditer(r'^\s+(-\w), (--[\w-]+)|^\s+(--[\w-]+)', h, re.M):
            for o in filter(None, m.groups()):
                check(c in entries.get(o, ()), f'man page: {o} not listed for {c}')
    # the completion, with qptrace on PATH
    env = dict(os.environ, PATH=os.path.dirname(q) + os.pathsep + os.environ.get('PATH', ''))
    script = ('source docs/completion/qptrace; COMP_WORDS=(qptrace summary --lo); COMP_CWORD=2; '
              '_qptrace; echo "${COMPREPLY[@]}"; COMP_WORDS=(qptrace pa); COMP_CWORD=1; '
              '_qptrace; echo "${COMPREPLY[@]}"; complete -p qptrace')
    out = subprocess.run(['bash', '-c', script], capture_output=True, text=True, env=env,
                         timeout=60).stdout.splitlines()
    check(out[:2] == ['--long', 'packets'] and 'qptrace' in out[2],
          f'bash completion: {out}')


def main():
    q, root = os.path.abspath(sys.argv[1]), sys.argv[2]
    os.chdir(root)
    for t in [v for k, v in sorted(globals().items()) if k.startswith('test_')]:
        t(q)
    print(f'{ok} passed, {bad} failed')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
