#!/usr/bin/env python3
"""Golden tests for the qptrace command line.

Usage:
    tests/golden.py [--qptrace BIN] [--root DIR] [--update] [-k SUBSTR] [-v]

Cases come from tests/golden/*.test, one per line (blank lines and lines
starting with # are ignored), three columns separated by " | ":

    CAPTURES | ARGUMENTS | EXPECTED

  CAPTURES   space-separated paths relative to the repository root, given
             to qptrace after the arguments, in order.  "stdin:PATH" passes
             "-" and feeds PATH on standard input; "missing:PATH" passes PATH,
             which must NOT exist (the missing-file case).
  ARGUMENTS  qptrace arguments (shell quoting, e.g. -f 'udp and port 4791').
  EXPECTED   file under tests/golden/expected/ holding the exit status,
             stderr and stdout of the run.

Besides the table, every captures/made/*.pcap present at run time is a case
"packets --json" with expected file made/NAME.json.out; a made capture
without its expected file FAILS (run --update, then review the output).
Every captures/public/*.pcap must have a "packets" and a "packets --json"
row, or the run fails.

--update rewrites the expected files from the current binary (review the
diff with git before committing).  Prints "N passed, N failed"; exit 1 on
any failure.
"""
import argparse
import difflib
import glob
import os
import shlex
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


class Case:
    def __init__(self, captures, args, expected, origin):
        self.captures = captures
        self.args = args
        self.expected = expected
        self.origin = origin

    @property
    def name(self):
        return self.expected


def parse_tables(golden_dir):
    cases = []
    for table in sorted(glob.glob(os.path.join(golden_dir, '*.test'))):
        with open(table) as f:
            for n, line in enumerate(f, 1):
                if not line.strip() or line.lstrip().startswith('#'):
                    continue
                # A leading space keeps an empty first column (no capture).
                cols = [c.strip() for c in (' ' + line.rstrip('\n')).split(' | ')]
                origin = f'{os.path.basename(table)}:{n}'
                if len(cols) != 3:
                    sys.exit(f'golden: {origin}: expected 3 columns "CAPTURES | ARGS | EXPECTED"')
                cases.append(Case(cols[0].split(), shlex.split(cols[1]), cols[2], origin))
    return cases


def made_cases(root):
    cases = []
    for pcap in sorted(glob.glob(os.path.join(root, 'captures', 'made', '*.pcap'))):
        rel = os.path.relpath(pcap, root)
        name = os.path.splitext(os.path.basename(pcap))[0]
        cases.append(Case([rel], ['packets', '--json'], f'made/{name}.json.out', 'captures/made glob'))
    return cases


def run_case(qptrace, root, case):
    argv = [qptrace] + case.args
    stdin = subprocess.DEVNULL
    shown = ['qptrace'] + case.args
    for c in case.captures:
        if c.startswith('stdin:'):
            stdin = open(os.path.join(root, c[len('stdin:'):]), 'rb')
            argv.append('-')
            shown.append('- <' + c[len('stdin:'):])
        else:
            c = c[len('missing:'):] if c.startswith('missing:') else c
            argv.append(c)
            shown.append(c)
    env = dict(os.environ, LC_ALL='C', TZ='UTC')
    try:
        p = subprocess.run(argv, cwd=root, stdin=stdin, capture_output=True, env=env,
                           timeout=120)
    finally:
        if stdin is not subprocess.DEVNULL:
            stdin.close()
    out = ['$ ' + ' '.join(shlex.quote(a) if not a.startswith('- <') else a for a in shown),
           f'exit: {p.returncode}', 'stderr:']
    out += ['| ' + l for l in p.stderr.decode('utf-8', 'replace').splitlines()]
    out.append('stdout:')
    text = '\n'.join(out) + '\n' + p.stdout.decode('utf-8', 'replace')
    return text


def check_public_coverage(root, cases):
    problems = []
    for pcap in sorted(glob.glob(os.path.join(root, 'captures', 'public', '*.pcap'))):
        rel = os.path.relpath(pcap, root)
        modes = {tuple(c.args) for c in cases if c.captures == [rel]}
        for want in (('packets',), ('packets', '--json')):
            if want not in modes:
                problems.append(f'{rel}: no golden row with "{" ".join(want)}"')
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--qptrace', default=None, help='qptrace binary (default build/analyzer/qptrace)')
    ap.add_argument('--root', default=os.path.dirname(HERE), help='repository root')
    ap.add_argument('--update', action='store_true', help='rewrite the expected files')
    ap.add_argument('-k', dest='match', default='', help='only cases whose name contains this')
    ap.add_argument('-v', '--verbose', action='store_true')
    a = ap.parse_args()

    root = os.path.abspath(a.root)
    qptrace = os.path.abspath(a.qptrace or os.path.join(root, 'build', 'analyzer', 'qptrace'))
    golden_dir = os.path.join(root, 'tests', 'golden')
    expected_dir = os.path.join(golden_dir, 'expected')
    if not os.access(qptrace, os.X_OK):
        sys.exit(f'golden: {qptrace}: not an executable (build first, or pass --qptrace)')

    table = parse_tables(golden_dir)
    cases = table + made_cases(root)
    names = [c.name for c in cases]
    dups = {n for n in names if names.count(n) > 1}
    if dups:
        sys.exit(f'golden: expected file used twice: {", ".join(sorted(dups))}')

    passed = failed = 0
    for problem in check_public_coverage(root, table):
        print(f'FAIL coverage: {problem}')
        failed += 1

    for case in cases:
        if a.match not in case.name:
            continue
        path = os.path.join(expected_dir, case.expected)
        for c in case.captures:
            must_exist = not c.startswith('missing:')
            f = c.split(':', 1)[1] if c.startswith(('stdin:', 'missing:')) else c
            if os.path.exists(os.path.join(root, f)) != must_exist:
                print(f'FAIL {case.name} ({case.origin}): capture {f} '
                      f'{"does not exist" if must_exist else "exists but must not"}')
                failed += 1
                break
        else:
            got = run_case(qptrace, root, case)
            if a.update:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                old = open(path).read() if os.path.exists(path) else None
                if old != got:
                    with open(path, 'w') as f:
                        f.write(got)
                    print(f'{"updated" if old is not None else "created"} {case.name}')
                passed += 1
                continue
            if not os.path.exists(path):
                print(f'FAIL {case.name} ({case.origin}): no expected output '
                      f'tests/golden/expected/{case.expected}; run tests/golden.py --update '
                      f'and review it')
                failed += 1
                continue
            want = open(path).read()
            if got == want:
                passed += 1
                if a.verbose:
                    print(f'ok   {case.name}')
                continue
            failed += 1
            print(f'FAIL {case.name} ({case.origin})')
            diff = list(difflib.unified_diff(want.splitlines(), got.splitlines(),
                                             'expected', 'got', lineterm='', n=2))
            for line in diff[:60]:
                print('    ' + line)
            if len(diff) > 60:
                print(f'    ... {len(diff) - 60} more diff lines')

    print(f'{passed} passed, {failed} failed')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
