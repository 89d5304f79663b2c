#!/usr/bin/env python3
"""tests/flow_layers.py - the flow engine's files are a pipeline, no circle.

    flow_layers.py SOURCE_ROOT

The flow engine's files (analyzer/qpt_flow*.c) call each other down one
way (issue 32), in this order, each layer calling only the ones below it:

  entry      qpt_flow.c (lifecycle, a packet to its half, the end)
  pairing    qpt_flow_pair.c (halves and conversations)
  analysis   qpt_flow_seq.c, qpt_flow_goback.c, qpt_flow_resp.c, qpt_flow_msg.c,
             qpt_flow_cm.c, qpt_flow_qos.c, qpt_flow_lat.c,
             qpt_flow_tunnel.c
  emit       qpt_flow_emit.c (a verdict's events; calls none of them)

and aside: qpt_flow_cold.c (idle halves and conversations kept compact),
qpt_flow_slab.c (their memory), qpt_flow_read.c (the read model, the walk).

For each file: the functions it defines (not static: fl_* and qpt_*) and
the ones it names (calls, or takes the address of), comments and string
literals left out; a static inline function of the engine's internal
headers (qpt_flow_int.h, qpt_flow_qos.h) stands for what it names (so
fl_twin_of() names qpt_flow_pair.c's fl_twin_find()).  That gives the
file graph; every circle in it (a strongly connected set of two files or
more) fails the check and is printed with the calls that close it, unless
its calls back up are listed in ALLOWED with the reason they stay (the
graph without them must have no circle).  Also checked: each
file is in one layer above, and emit names no other flow file.
"""
import glob
import os
import re
import sys

import tap
from boundaries import without_comments

LAYERS = {
    'qpt_flow.c': 'entry',
    'qpt_flow_pair.c': 'pairing',
    'qpt_flow_seq.c': 'analysis',
    'qpt_flow_goback.c': 'analysis',
    'qpt_flow_resp.c': 'analysis',
    'qpt_flow_msg.c': 'analysis',
    'qpt_flow_cm.c': 'analysis',
    'qpt_flow_qos.c': 'analysis',
    'qpt_flow_lat.c': 'analysis',
    'qpt_flow_tunnel.c': 'analysis',
    'qpt_flow_emit.c': 'emit',
    'qpt_flow_cold.c': 'aside',
    'qpt_flow_slab.c': 'aside',
    'qpt_flow_read.c': 'aside',
}
HEADERS = ('qpt_flow_int.h', 'qpt_flow_qos.h', 'qpt_flow_goback.h')

# The calls back up that stay, each with the reason (without them the graph
# has no circle; any other call back up closes one and fails).
ALLOWED = {
    ('qpt_flow_pair.c', 'qpt_flow_cold.c'):
        'pairing finds a half by its key, live or cold, and thaws a cold one '
        '(fl_peek, fl_thaw, fl_unforward, fl_cold_free); the cold file '
        'freezes and frees live halves and conversations with pairing\'s '
        'fl_half_free/fl_conv_free: one store kept in two files',
    ('qpt_flow_pair.c', 'qpt_flow_qos.c'):
        'a late pairing folds one conversation into another and carries '
        'each analysis\' state over (fl_qos_fold, fl_qos_merge, fl_qos_free); '
        'the analyses name conversations through pairing (qpt_flow_conv_id)',
    ('qpt_flow_pair.c', 'qpt_flow_tunnel.c'):
        'the same fold carries the tunnel session over (fl_tunnel_fold)',
    ('qpt_flow_msg.c', 'qpt_flow_seq.c'):
        'messages read the request window\'s slot (fl_slot_of), the '
        'sequence analysis\' per-packet lookup: moved out of '
        'qpt_flow_seq.c it would lose its inlining in fl_request',
}

# a function's name (not a struct, union or enum tag of the same name)
NAME = r'(?<!struct )(?<!union )(?<!enum )\b((?:fl|qpt)_\w+)\b'


def strip_strings(text):
    """text (comments already blanked) with the string and character
    literals' contents blanked too."""
    return re.sub(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'',
                  lambda m: m.group(0)[0] + ' ' * (len(m.group(0)) - 2) + m.group(0)[0],
                  text)


def top_level_functions(text):
    """[(name, is_static, is_inline, body)] of the functions defined in
    text (comments and literals blanked), at brace depth 0."""
    out = []
    depth, i, start = 0, 0, 0
    while i < len(text):
        c = text[i]
        if c == '{':
            if depth == 0:
                head = text[start:i]
                m = re.search(r'\b(\w+)\s*\(([^;{}]*)\)\s*$', head)
                body_start = i
            depth += 1
        elif c == '}':
            depth -= 1
            if depth == 0:
                if m:
                    # the declaration's words since the last statement
                    decl = re.split(r'[;}]', head)[-1]
                    out.append((m.group(1), re.search(r'\bstatic\b', decl) is not None,
                                re.search(r'\binline\b', decl) is not None,
                                text[body_start:i + 1]))
                start = i + 1
        elif c == ';' and depth == 0:
            start = i + 1
        i += 1
    return out


def read(path):
    with open(path, encoding='utf-8', errors='replace') as f:
        return strip_strings(without_comments(f.read()))


def graph(root):
    """(files, edges): edges[a][b] = the functions of b that a names."""
    adir = os.path.join(root, 'analyzer')
    files = sorted(os.path.basename(p) for p in glob.glob(os.path.join(adir, 'qpt_flow*.c')))
    defined = {}   # function -> file
    names = {}     # file -> the names it uses in its functions
    for f in files:
        used = set()
        for name, static, _inline, body in top_level_functions(read(os.path.join(adir, f))):
            if not static and re.fullmatch(NAME, name):
                defined[name] = f
            used |= set(re.findall(NAME, body))
        names[f] = used
    inline = {}    # header inline function -> the names it uses
    for h in HEADERS:
        for name, _static, is_inline, body in top_level_functions(read(os.path.join(adir, h))):
            if is_inline:
                inline[name] = set(re.findall(NAME, body)) - {name}
    edges = {f: {} for f in files}
    for f in files:
        todo, seen = list(names[f]), set()
        while todo:
            n = todo.pop()
            if n in seen:
                continue
            seen.add(n)
            todo += inline.get(n, ())
            g = defined.get(n)
            if g and g != f:
                edges[f].setdefault(g, set()).add(n)
    return files, edges, defined


def circles(files, edges):
    """The strongly connected sets of two files or more (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            scc = []
            while True:
                w = stack.pop()
                on.discard(w)
                scc.append(w)
                if w == v:
                    break
            if len(scc) > 1:
                out.append(frozenset(scc))

    for v in files:
        if v not in index:
            visit(v)
    return out


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().split('\n')[2].strip(), file=sys.stderr)
        return 2
    files, edges, defined = graph(sys.argv[1])
    # the check looks at something: the files and their calls are there
    tap.check(len(files) >= len(LAYERS) and len(defined) > 50 and
              sum(len(e) for e in edges.values()) > 10,
              f'{len(files)} flow files, {len(defined)} functions, '
              f'{sum(len(e) for e in edges.values())} calls between files found')
    unknown = [f for f in files if f not in LAYERS]
    for f in unknown:
        print(f'# {f}: in no layer (add it to LAYERS and to the order above)')
    tap.check(not unknown, 'each flow file is in a layer')
    for f in sorted(files):
        for g in sorted(edges[f]):
            print(f'# {f} -> {g}: {", ".join(sorted(edges[f][g]))}')
    for (a, b), why in sorted(ALLOWED.items()):
        print(f'# allowed back up: {a} -> {b}: {why}')
        tap.check(b in edges.get(a, {}), f'{a} -> {b} (allowed) is still there '
                  '(else drop it from ALLOWED)')
    down = {a: {b: n for b, n in e.items() if (a, b) not in ALLOWED}
            for a, e in edges.items()}
    found = circles(files, down)
    for scc in found:
        for a in sorted(scc):
            for b in sorted(down[a]):
                if b in scc:
                    print(f'#   circle: {a} -> {b} ({", ".join(sorted(down[a][b]))})')
    tap.check(not found, 'no circle between the flow files but through the '
              f'{len(ALLOWED)} allowed calls back up' +
              ''.join('; circle: ' + ', '.join(sorted(s)) for s in found))
    emit_calls = edges.get('qpt_flow_emit.c', {})
    tap.check('qpt_flow_emit.c' in edges and not emit_calls,
              'qpt_flow_emit.c names no other flow file\'s function' +
              (': ' + ', '.join(sorted(emit_calls)) if emit_calls else ''))
    return tap.done()


if __name__ == '__main__':
    sys.exit(main())
