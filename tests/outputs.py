#!/usr/bin/env python3
"""Issue 35, nothing lost: an output never destroys an input, and a write
that fails leaves nothing behind (analyzer/cli/outfile.c).

usage: outputs.py QPTRACE ROOT            (any user)
       outputs.py QPTRACE ROOT --full-disk  (root: a 64 KiB tmpfs)

Without --full-disk:
- `packets -w` onto its own input, named as it is, through another path,
  a symbolic link and a hard link, and onto standard input's file;
  `grade --gradebook` onto one of the captures (named, in a graded
  folder, through a symbolic link) and onto the rubric; a `--feedback`
  file that would be a capture; `plot -o` onto the capture and a
  `plot --top` file that is a link to it: each refused with exit 2 and one
  line naming the output and the input, the input's bytes unchanged
  (SHA-256) and no temporary file left;
- a write cut by the file size limit (RLIMIT_FSIZE, SIGXFSZ ignored: the
  write fails with EFBIG) for packets -w, plot -o, grade --gradebook:
  exit 2, a message naming the file, no file of the new name, an older
  file of that name intact, no temporary file;
- a write that succeeds replaces the older file whole, keeps its
  permissions, writes through a symbolic link (the link stays one), and
  -w /dev/null still works;
- `packets -w` from a pipe that stops: SIGTERM removes the temporary
  file; Ctrl-C ends the input and puts what was read in place (exit 130);
  Ctrl-C twice leaves either that or nothing, never a temporary file.
With --full-disk (root; exit 77 with a message when a tmpfs cannot be
mounted): the same four writers onto a full 64 KiB tmpfs: exit 2, "No
space left on device", no new file, an older file intact, no temporary
file.
Prints `N passed, N failed`.
"""
import hashlib
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import tap  # tests/tap.py

Q = os.path.abspath(sys.argv[1])
ROOT = os.path.abspath(sys.argv[2])
FULL = '--full-disk' in sys.argv[3:]
CAP = os.path.join(ROOT, 'captures', 'rxe', 'rc_pingpong.pcap')
MANY = os.path.join(ROOT, 'captures', 'made', 'multi_qp.pcap')  # 95 frames, 8 QPs
RUBRIC = os.path.join(ROOT, 'rubrics', 'rc_pingpong.ini')


def run(*args, stdin=None, preexec=None, cwd=None):
    return subprocess.run([Q, *args], stdin=stdin, capture_output=True, text=True,
                          timeout=120, preexec_fn=preexec, cwd=cwd)


def sha(path):
    with open(path, 'rb') as f:
        return hashlib.sha256(f.read()).hexdigest()


def temps(d):
    """Temporary files outfile.c would leave: .NAME.XXXXXX"""
    return sorted(n for n in os.listdir(d) if n.startswith('.'))


def refused(p, out, inp, what):
    err = p.stderr.strip()
    lines = err.splitlines()
    tap.check(p.returncode == 2 and len(lines) == 1 and out in lines[0] and inp in lines[0]
              and 'refusing to overwrite' in lines[0],
              f'{what}: exit 2 and one line naming {out} and {inp} (exit {p.returncode}, {err!r})')


def test_refusals(d):
    cap = os.path.join(d, 'in.pcap')
    shutil.copy(CAP, cap)
    want = sha(cap)
    os.symlink('in.pcap', os.path.join(d, 'sym.pcap'))
    os.link(cap, os.path.join(d, 'hard.pcap'))
    sub = os.path.join(d, 'sub')
    os.mkdir(sub)
    for out, what in ((cap, 'packets -w IN IN'),
                      (os.path.join(sub, '..', 'in.pcap'), 'packets -w through another path'),
                      (os.path.join(d, 'sym.pcap'), 'packets -w onto a symbolic link to IN'),
                      (os.path.join(d, 'hard.pcap'), 'packets -w onto a hard link to IN')):
        p = run('packets', '-w', out, cap)
        refused(p, out, cap, what)
        tap.check(sha(cap) == want and p.stdout == '', f'{what}: the input unchanged')
    # the input given as -r, and as standard input
    p = run('packets', '-w', os.path.join(d, 'sym.pcap'), '-r', cap)
    refused(p, 'sym.pcap', cap, 'packets -w LINK -r IN')
    with open(cap, 'rb') as f:
        p = run('packets', '-w', cap, '-', stdin=f)
    refused(p, cap, 'standard input', 'packets -w IN - < IN')
    tap.check(sha(cap) == want, 'packets -w IN - < IN: the input unchanged')

    # grade: the gradebook onto a capture or the rubric, a feedback file
    # onto a capture
    cls = os.path.join(d, 'class')
    os.mkdir(cls)
    for n in ('s1.pcap', 's2.pcap'):
        shutil.copy(CAP, os.path.join(cls, n))
    s2 = os.path.join(cls, 's2.pcap')
    os.symlink(s2, os.path.join(d, 'book-link.csv'))
    rub = os.path.join(d, 'rubric.ini')
    shutil.copy(RUBRIC, rub)
    rub_sha = sha(rub)
    for book, files, inp, what in (
            (s2, [os.path.join(cls, 's1.pcap'), s2], s2, '--gradebook onto a capture'),
            (s2, [cls], s2, '--gradebook onto a capture of the folder graded'),
            (os.path.join(d, 'book-link.csv'), [cls], s2,
             '--gradebook onto a symbolic link to a capture'),
            (rub, [cls], rub, '--gradebook onto the rubric')):
        p = run('grade', '-q', '--rubric', rub, '--gradebook', book, *files)
        refused(p, book, inp, 'grade ' + what)
        tap.check(sha(s2) == want and sha(rub) == rub_sha and p.stdout == '',
                  f'grade {what}: the captures and the rubric unchanged, nothing graded')
    # capture a.pcap's feedback file is a.txt: here a capture too
    fbd = os.path.join(d, 'fb')
    os.mkdir(fbd)
    shutil.copy(CAP, os.path.join(fbd, 'a.pcap'))
    shutil.copy(CAP, os.path.join(fbd, 'a.txt'))
    p = run('grade', '-q', '--rubric', rub, '--feedback', fbd,
            os.path.join(fbd, 'a.pcap'), os.path.join(fbd, 'a.txt'))
    refused(p, os.path.join(fbd, 'a.txt'), os.path.join(fbd, 'a.txt'),
            'grade --feedback: a feedback file that is a capture')
    tap.check(sha(os.path.join(fbd, 'a.txt')) == want, '--feedback: the capture unchanged')

    # plot -o, and a --top file that is a link to the capture
    many = os.path.join(d, 'many.pcap')
    shutil.copy(MANY, many)
    many_sha = sha(many)
    p = run('plot', '-q', '--conv', '0', '-o', many, many)
    refused(p, many, many, 'plot -o IN')
    os.symlink(many, os.path.join(d, 'top-conv0.svg'))
    p = run('plot', '-q', '--top', '2', '-o', os.path.join(d, 'top.svg'), many)
    refused(p, 'top-conv0.svg', many, 'plot --top: FILE-conv0.svg a link to IN')
    tap.check(sha(many) == many_sha and not os.path.exists(os.path.join(d, 'top-conv1.svg')),
              'plot: the input unchanged, no SVG written before the refusal')
    tap.check(temps(d) == [] and temps(cls) == [], f'refusals: no temporary file ({temps(d)})')


def fsize_limit(n):
    def pre():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of death
        resource.setrlimit(resource.RLIMIT_FSIZE, (n, n))
    return pre


def failed_write(p, path, what, reason):
    err = p.stderr.strip()
    tap.check(p.returncode == 2 and f'cannot write {path}: {reason}' in err.replace(
        '--gradebook: ', ''), f'{what}: exit 2, "cannot write {path}: {reason}" '
              f'(exit {p.returncode}, {err[-300:]!r})')


def writers(d):
    """(what, argv writing OUT) for each kind of output file."""
    return (('packets -w', lambda out: ['packets', '-q', '-w', out, MANY]),
            ('plot -o', lambda out: ['plot', '-q', '--conv', '0', '-o', out, MANY]),
            ('grade --gradebook', lambda out: ['grade', '-q', '--rubric', RUBRIC,
                                               '--gradebook', out, CAP]))


def test_failed_writes(d, pre, reason, label):
    """Each writer into d, where pre (run in the child) or the disk makes
    the write fail: nothing new, the old file as it was."""
    for what, argv in writers(d):
        new = os.path.join(d, 'new.out')
        p = run(*argv(new), preexec=pre)
        failed_write(p, new, f'{what} {label}', reason)
        tap.check(not os.path.exists(new) and temps(d) == [],
                  f'{what} {label}: no file left ({os.listdir(d)})')
        old = os.path.join(d, 'old.out')
        tap.check(os.path.exists(old), f'{what} {label}: the older file is there to begin with')
        before = sha(old)
        p = run(*argv(old), preexec=pre)
        failed_write(p, old, f'{what} {label} over an older file', reason)
        tap.check(sha(old) == before and temps(d) == [],
                  f'{what} {label}: the older file intact, no temporary file')
    # --feedback: one file per capture
    fb = os.path.join(d, 'fb')
    p = run('grade', '-q', '--rubric', RUBRIC, '--feedback', fb, CAP, preexec=pre)
    tap.check(p.returncode == 2 and reason in p.stderr and
              (not os.path.isdir(fb) or os.listdir(fb) == []),
              f'grade --feedback {label}: exit 2, "{reason}", no file '
              f'(exit {p.returncode}, {p.stderr.strip()[-200:]!r}, '
              f'{os.listdir(fb) if os.path.isdir(fb) else "no folder"})')


def test_writes(d):
    """Successful writes: whole, the old permissions, through a link."""
    old = os.path.join(d, 'old.out')
    for what, argv in writers(d):
        with open(old, 'w') as f:
            f.write('older\n')
        os.chmod(old, 0o640)
        p = run(*argv(old))
        st = os.stat(old)
        tap.check(p.returncode in (0, 1) and os.path.getsize(old) > 6 and
                  (st.st_mode & 0o777) == 0o640 and temps(d) == [],
                  f'{what} over an older file: replaced whole, mode 0640 kept '
                  f'(exit {p.returncode}, mode {oct(st.st_mode & 0o777)}, {p.stderr[-200:]!r})')
    target = os.path.join(d, 'target.pcap')
    os.symlink('target.pcap', os.path.join(d, 'link.pcap'))
    p = run('packets', '-q', '-w', os.path.join(d, 'link.pcap'), MANY)
    tap.check(p.returncode == 0 and os.path.islink(os.path.join(d, 'link.pcap')) and
              os.path.getsize(target) > 0,
              f'packets -w onto a symbolic link: written where it points, the link kept '
              f'({p.stderr!r})')
    p = run('packets', '-q', '-w', '/dev/null', MANY)
    tap.check(p.returncode == 0 and os.path.exists('/dev/null') and
              not os.path.isfile('/dev/null'), f'packets -w /dev/null: exit 0 ({p.stderr!r})')


def test_signals(d):
    """packets -w from a pipe that stops: a signal that ends qptrace
    removes the temporary file; the first Ctrl-C ends the input and writes
    what was read (as the text output does), in place."""
    data = open(MANY, 'rb').read()
    data = data[:24] + data[24:] * 40  # its records 40 times: 3,800 frames, 2.8 MB
    for sigs, label in (([signal.SIGTERM], 'SIGTERM'), ([signal.SIGINT], 'Ctrl-C'),
                        ([signal.SIGINT, signal.SIGINT], 'Ctrl-C twice')):
        out = os.path.join(d, 'sig.pcap')
        p = subprocess.Popen([Q, 'packets', '-q', '-w', out, '-'], stdin=subprocess.PIPE,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        p.stdin.write(data[:len(data) * 9 // 10])  # then waits for the rest
        p.stdin.flush()
        tmp = []
        for _ in range(100):
            time.sleep(0.05)
            tmp = temps(d)
            if tmp:
                break
        for sig in sigs:
            p.send_signal(sig)
        p.wait(timeout=20)
        p.stdin.close()
        err = p.stderr.read().decode()
        p.stderr.close()
        left = temps(d)
        if label == 'SIGTERM':
            ok = p.returncode == -signal.SIGTERM and not os.path.exists(out)
        elif label == 'Ctrl-C':
            back = run('packets', '-q', out)
            ok = (p.returncode == 130 and back.returncode == 0 and
                  len(back.stdout.splitlines()) > 64)
        else:  # the second may come after the file is in place
            ok = (p.returncode == -signal.SIGINT and not os.path.exists(out)) or \
                 (p.returncode == 130 and os.path.exists(out))
        tap.check(tmp and left == [] and ok,
                  f'packets -w from a pipe, {label}: the temporary file {tmp} made, none '
                  f'left; exit {p.returncode}, {out} '
                  f'{"in place" if os.path.exists(out) else "not made"} ({err.strip()[-200:]!r})')
        if os.path.exists(out):
            os.unlink(out)


def full_disk():
    if os.geteuid() != 0:
        print('outputs.py --full-disk: not root: cannot mount a tmpfs (skipped)')
        return 77
    mnt = tempfile.mkdtemp(prefix='qpt-full-')
    m = subprocess.run(['mount', '-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', mnt],
                       capture_output=True, text=True)
    if m.returncode != 0:
        os.rmdir(mnt)
        print(f'outputs.py --full-disk: mount of a 64 KiB tmpfs not permitted '
              f'({m.stderr.strip()}): skipped')
        return 77
    try:
        with open(os.path.join(mnt, 'old.out'), 'w') as f:
            f.write('the older file, kept\n')
        try:  # fill it
            with open(os.path.join(mnt, 'filler'), 'wb') as f:
                while True:
                    f.write(b'\0' * 4096)
                    f.flush()
        except OSError:
            pass
        test_failed_writes(mnt, None, 'No space left on device', 'on a full tmpfs')
    finally:
        subprocess.run(['umount', mnt])
        os.rmdir(mnt)
    return tap.done()


def main():
    if FULL:
        return full_disk()
    d = tempfile.mkdtemp(prefix='qpt-outputs-')
    try:
        for name, fn in (('refuse', test_refusals), ('writes', test_writes),
                         ('signals', test_signals)):
            sub = os.path.join(d, name)
            os.mkdir(sub)
            fn(sub)
        sub = os.path.join(d, 'fsize')
        os.mkdir(sub)
        with open(os.path.join(sub, 'old.out'), 'w') as f:
            f.write('the older file, kept\n')
        test_failed_writes(sub, fsize_limit(64), 'File too large', 'past the file size limit')
    finally:
        shutil.rmtree(d)
    return tap.done()


if __name__ == '__main__':
    sys.exit(main())
