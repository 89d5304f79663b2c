#!/usr/bin/env python3
"""tests/boundaries.py - the engine's front door is the only door.

    boundaries.py SOURCE_ROOT

Front ends (the CLI, analyzer/cli/; the Wireshark plugin, dissector/) and
the engine's readers of results (analyzer/qpt_findings*.c, qpt_rank.c) read
the engine through qpt_flow.h's read model (struct qpt_conv_stats,
struct qpt_dir_stats), never its storage (qpt_flow_int.h: struct qpt_dir
with its rare-counter pointer r, struct qpt_conv with dir pointers and
cold_mark, ...), so that a change to how the engine keeps a million
conversations small rewires none of them (issue 32).

Front ends drive the engine (make, feed, end, free it) only through their
driver: analyzer/cli/driver.c for every command of the CLI, the plugin's
dissector/roce-analysis.c (issue 32: one end-of-input call each, none
forgotten).

Each check is a function of the source root that returns its failures
(file:line: what), one TAP line per file it looked at; CHECKS lists them.
Comments are left out before matching (they may name what they explain),
string literals are not (a storage name in one would be read somewhere).
"""
import glob
import os
import re
import sys

import tap

# The storage (qpt_flow_int.h) by the names a reader would use for it.
STORAGE = [
    (r'#\s*include\s*[<"]qpt_flow_int\.h[>"]', 'includes qpt_flow_int.h'),
    (r'#\s*include\s*[<"]qpt_flow_qos\.h[>"]', 'includes qpt_flow_qos.h (qpt_flow_int.h\'s)'),
    (r'#\s*include\s*[<"]qpt_flow_goback\.h[>"]', 'includes qpt_flow_goback.h (qpt_flow_int.h\'s)'),
    (r'\bstruct\s+qpt_dir(?!\w)', 'struct qpt_dir (the storage; read struct qpt_dir_stats)'),
    (r'\bstruct\s+qpt_conv(?!\w)', 'struct qpt_conv (the storage; read struct qpt_conv_stats)'),
    (r'\bstruct\s+qpt_dir_rare\b', 'struct qpt_dir_rare'),
    (r'\bqpt_dir_rare_none\b', 'qpt_dir_rare_none'),
    (r'\bqpt_dir_none\b', 'qpt_dir_none'),
    (r'\bstruct\s+qpt_dir_qos\b', 'struct qpt_dir_qos (its matching state; read struct qpt_qos_stats)'),
    (r'\bstruct\s+qpt_qos_inline\b', 'struct qpt_qos_inline'),
    (r'\bstruct\s+qpt_ecn_mark\b', 'struct qpt_ecn_mark'),
    (r'\bstruct\s+(half|half_rare|half_rec|half_loss|cold_half|conv_block|conv_view|'
     r'half_view|addr_halves|cm_rec)\b', 'an engine-internal struct'),
    # (through a pointer to a direction, as the storage holds them: a
    # direction by value would be a struct qpt_dir, named)
    (r'->r->', 'the rare-counter pointer (->r->)'),
    (r'\bqos_in\b', 'the inline QoS union (qos_in)'),
    (r'\bcold_mark\b', 'cold_mark'),
    (r'\bop_mask\b', 'op_mask (read ops_seen / qpt_dir_op())'),
    (r'(->|\.)opv\b', 'opv (read qpt_dir_op())'),
    (r'\bmerged_into\b', 'merged_into'),
    (r'\bfl_[a-z_]+\s*\(', "an engine-internal function (fl_*)"),
    (r'\bfl_counter_locs\b', 'fl_counter_locs'),
]


def readers(root):
    """The files that must read the read model only."""
    files = []
    for pat in ('analyzer/cli/**/*.c', 'analyzer/cli/**/*.h', 'dissector/**/*.c',
                'dissector/**/*.h', 'analyzer/qpt_findings*.c', 'analyzer/qpt_findings*.h',
                'analyzer/qpt_rank.c', 'analyzer/qpt_rank.h'):
        files += glob.glob(os.path.join(root, pat), recursive=True)
    return sorted(set(files))


def without_comments(text):
    """text with its C comments blanked (newlines kept: line numbers hold),
    string and character literals kept."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r'[^\n]', ' ', text[i:j]))
            i = j
        elif text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i))
            i = j
        elif c in '"\'':
            j = i + 1
            while j < n and text[j] != c and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return ''.join(out)


def check_storage_reads(root):
    """No reader includes qpt_flow_int.h or names a storage struct or field."""
    results = []
    files = readers(root)
    if not files:
        return [('front ends found under ' + root, ['no file to check'])]
    for path in files:
        with open(path, encoding='utf-8', errors='replace') as f:
            text = without_comments(f.read())
        bad = []
        for no, line in enumerate(text.split('\n'), 1):
            for pat, what in STORAGE:
                if re.search(pat, line):
                    bad.append(f'{os.path.relpath(path, root)}:{no}: {what}: {line.strip()}')
        results.append((os.path.relpath(path, root) + ' reads only the read model', bad))
    return results


# The engine's calls that drive it: make it, feed it, end it, free it, and
# -j N's (qpt_flow.h).  In the command line only analyzer/cli/driver.c
# makes them; the plugin's driver is dissector/roce-analysis.c.
DRIVING = r'\bqpt_flow_(new|free|packet|set_tap|end|forget_halves|add_capture_drops|' \
    r'set_previous_time|set_conv_end|pfc_feed|absorb)\s*\('
DRIVERS = ('analyzer/cli/driver.c', 'dissector/roce-analysis.c')


def check_driver_only(root):
    """No front end but the drivers feeds or ends the engine."""
    results = []
    files = [f for f in readers(root) if not f.endswith(('qpt_findings.c', 'qpt_rank.c'))]
    drivers = [os.path.join(root, d) for d in DRIVERS]
    missing = [d for d in drivers if d not in files]
    if missing:
        return [('the drivers are there', ['not found: ' + ', '.join(missing)])]
    for path in files:
        with open(path, encoding='utf-8', errors='replace') as f:
            text = without_comments(f.read())
        calls = [(no, line) for no, line in enumerate(text.split('\n'), 1)
                 if re.search(DRIVING, line)]
        rel = os.path.relpath(path, root)
        if path in drivers:
            # the driver does drive it (else the check looks at nothing)
            results.append((rel + ' drives the engine',
                            [] if calls else [rel + ': no call of ' + DRIVING]))
        else:
            results.append((rel + ' drives the engine only through the driver',
                            [f'{rel}:{no}: {line.strip()}' for no, line in calls]))
    return results


MAX_LINES = 900  # issue 32: no file of the engine, the CLI or the plugin longer


def check_file_lengths(root):
    """Every source file in analyzer/ (its cli/ too) and dissector/ has at
    most MAX_LINES lines."""
    out = []
    for d in ("analyzer", "dissector"):
        for f in sorted(glob.glob(os.path.join(root, d, "**", "*.[ch]"), recursive=True)):
            with open(f, encoding="utf-8", errors="replace") as fh:
                n = sum(1 for _ in fh)
            rel = os.path.relpath(f, root)
            out.append((f"{rel}: {n} lines (at most {MAX_LINES})",
                        [f"{rel}: {n} lines"] if n > MAX_LINES else []))
    return out


CHECKS = [check_storage_reads, check_driver_only, check_file_lengths]


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().split('\n')[2].strip(), file=sys.stderr)
        return 2
    root = sys.argv[1]
    for check in CHECKS:
        for what, bad in check(root):
            for b in bad:
                print('#', b)
            tap.check(not bad, what)
    return tap.done()


if __name__ == '__main__':
    sys.exit(main())
