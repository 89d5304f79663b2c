#!/usr/bin/env python3
"""Walk the verdict table and check that every CLI front end shows each kind.

usage: verdicts.py QPTRACE ROOT

The table comes from `qptrace verdicts --json` (the engine's QPT_VERDICTS,
one row per kind).  For every kind, the made captures (captures/made, and
captures/hostile for the kinds only bad input shows) are searched for one
where `events --json` reports it; a kind found in no capture fails.  On that
capture:
  - `events --json` and `events` text name the kind on the same frames;
  - `summary --json` counts it: the direction counter the table names
    (`totals.X` for a totals key) equals the number of its events per
    conversation direction (or in all, for a totals key);
  - an episode's trigger reads the same in `summary --json` episodes, in
    `summary` text and in the event's detail.
The expected values are the events' own frames and counts, so a front end
that drops or renames a kind fails here.  Prints `N passed, N failed`.
"""
import glob
import json
import os
import re
import subprocess
import sys


def run(q, *args):
    p = subprocess.run([q, *args], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, LC_ALL='C', TZ='UTC'))
    return p.stdout


def counter_of(summ, ckey, conv, d):
    """The table's counter for (conv, dir), or the totals value."""
    if ckey.startswith('totals.'):
        return summ['totals'][ckey[len('totals.'):]]
    for c in summ['conversations']:
        if c['id'] == conv:
            v = c['directions'][d][ckey]
            return sum(v.values()) if isinstance(v, dict) else v
    return None


def main():
    q, root = sys.argv[1], sys.argv[2]
    table = [json.loads(l) for l in run(q, 'verdicts', '--json').splitlines() if l]
    caps = (sorted(glob.glob(os.path.join(root, 'captures', 'made', '*.pcap'))) +
            sorted(glob.glob(os.path.join(root, 'captures', 'hostile', '*.pcap'))))
    events = {}
    for cap in caps:
        events[cap] = [json.loads(l) for l in run(q, 'events', '--json', '-q', cap).splitlines() if l]
    ok = bad = 0

    def check(cond, what):
        nonlocal ok, bad
        if cond:
            ok += 1
        else:
            bad += 1
            print('FAIL', what)

    check(len(table) >= 18, f'verdict table has {len(table)} kinds')
    for row in table:
        kind = row['kind']
        cap = next((c for c in caps if any(e['kind'] == kind for e in events[c])), None)
        check(cap is not None, f'{kind}: no made capture shows it')
        if cap is None:
            continue
        name = os.path.relpath(cap, root)
        evs = [e for e in events[cap] if e['kind'] == kind]
        frames = sorted(e['frame'] for e in evs)
        text = run(q, 'events', '-q', cap)
        tframes = sorted(int(m.group(1)) for m in
                         re.finditer(r'^\S+ frame (\d+)(?: \([^)]*\))? conv -?\d+ ' + re.escape(kind) + r' ',
                                     text, re.M))
        check(tframes == frames, f'{kind} in {name}: events text frames {tframes} != JSON {frames}')
        summ = json.loads(run(q, 'summary', '--json', '-q', cap))
        ckey = row['counter']
        if ckey.startswith('totals.'):
            got = counter_of(summ, ckey, None, None)
            check(got == len(evs), f'{kind} in {name}: {ckey} = {got}, {len(evs)} events')
        else:
            per = {}
            for e in evs:
                if e['conv'] >= 0:
                    per[(e['conv'], e['dir'])] = per.get((e['conv'], e['dir']), 0) + 1
            if not per:  # events of no conversation: compare with all directions
                got = sum(counter_of(summ, ckey, c['id'], d) for c in summ['conversations']
                          for d in (0, 1))
                check(got == len(evs), f'{kind} in {name}: {ckey} summed = {got}, {len(evs)} events')
            for (conv, d), n in sorted(per.items()):
                got = counter_of(summ, ckey, conv, d)
                check(got == n, f'{kind} in {name}: conv {conv} dir {d} {ckey} = {got}, {n} events')
        print(f'{kind}: {name}, frames {frames[:6]}{"..." if len(frames) > 6 else ""}')
        if kind == 'gbn_episode':
            # the trigger, the same in JSON episodes, text and the event
            for cap2 in caps:
                out = run(q, 'summary', '--json', '-q', cap2)
                if not out.strip():
                    continue  # a capture with no frames prints no summary
                s2 = json.loads(out)
                t2 = run(q, 'summary', '-l', '-q', cap2)
                gbn = {e['frame']: e for e in events[cap2] if e['kind'] == 'gbn_episode'}
                for c in s2['conversations']:
                    for d, x in enumerate(c['directions']):
                        for i, ep in enumerate(x['episodes']):
                            e = gbn.get(ep['first_resent_frame'])
                            trig = ep['trigger']
                            words = {'nak': 'after NAK', 'timeout': 'timeout',
                                     'read_retry': 'READ re-issued', 'resend': 'without a captured NAK'}
                            check(e is not None and words[trig] in e.get('detail', ''),
                                  f'{cap2}: episode trigger {trig} vs event {e and e.get("detail")}')
                            line = f'{"b->a" if d else "a->b"} go-back-N #{i + 1}: {trig} frame {ep["trigger_frame"]}'
                            check(line in t2, f'{cap2}: summary text lacks "{line}"')
    print(f'{ok} passed, {bad} failed')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
