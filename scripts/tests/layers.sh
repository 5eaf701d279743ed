#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The driver's files import each other (`use crate::x`, `crate::x::`
# outside comments) only downwards: each file's opening comment says its
# layer ("//! Layer N (...)"), and no file uses a file of a higher layer,
# no two files of a layer use each other in a cycle, and no event source
# (layer 5) uses another. A file that states no layer fails too.
#
# It reads names, as `use` writes them: an inherent method of a type
# defined above (the Bridge's handlers in events.rs), a trait's
# implementation (a work item's WorkItem) or a macro of the crate root
# is not a name and goes unseen; bridge.rs says where the driver has them.
#
#   scripts/tests/layers.sh [DIR]    (DIR: drivers/net/macsec_bridge)
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
exec python3 - "${1:-$top/drivers/net/macsec_bridge}" <<'PY'
import os, re, sys

d = sys.argv[1]
# Layers whose files may not use each other at all.
APART = {5: 'event sources'}
# What Kbuild builds under another module name.
AS = {'platform_compat': 'platform'}
GENERATED = {'macsec_bridge_compat.rs'}

files = sorted(f for f in os.listdir(d) if f.endswith('.rs') and f not in GENERATED)
layer, text, bad = {}, {}, []
for f in files:
    src = open(os.path.join(d, f)).read()
    m = re.search(r'^//! Layer (\d+)\b', src, re.M)
    if not m:
        bad.append(f'{f}: states no layer ("//! Layer N")')
        continue
    layer[f] = int(m.group(1))
    # Strings, then comments (doc comments and their links included).
    src = re.sub(r'"(?:\\.|[^"\\])*"', '""', src)
    src = re.sub(r'/\*.*?\*/', '', src, flags=re.S)
    text[f] = re.sub(r'//.*', '', src)

mods = {}
for f in layer:
    mods.setdefault(AS.get(f[:-3], f[:-3]), []).append(f)


def used(src):
    """The first segment of every `crate::` path in `src`."""
    out = set()
    for m in re.finditer(r'\bcrate\s*::\s*', src):
        rest = src[m.end():]
        if not rest.startswith('{'):
            n = re.match(r'\w+', rest)
            if n:
                out.add(n.group(0))
            continue
        depth, item, i = 0, '', 0
        for i, c in enumerate(rest):
            if c == '{':
                depth += 1
                if depth == 1:
                    continue
            elif c == '}':
                depth -= 1
                if depth == 0:
                    break
            if depth == 1 and c == ',':
                n = re.match(r'\s*(\w+)', item)
                if n:
                    out.add(n.group(1))
                item = ''
            else:
                item += c
        n = re.match(r'\s*(\w+)', item)
        if n:
            out.add(n.group(1))
    return out - {'self'}


edges = 0
same = {}
for f in sorted(text):
    for m in sorted(used(text[f])):
        for g in mods.get(m, []):
            if g == f:
                continue
            edges += 1
            lf, lg = layer[f], layer[g]
            if lg > lf:
                bad.append(f'{f} (layer {lf}) uses {g} (layer {lg})')
            elif lg == lf and lf in APART:
                bad.append(f'{f} uses {g}: {APART[lf]} (layer {lf}) use no other')
            elif lg == lf:
                same.setdefault(f, set()).add(g)

# A cycle within a layer.
state = {}


def visit(f, path):
    state[f] = 1
    for g in sorted(same.get(f, ())):
        if state.get(g) == 1:
            cycle = path[path.index(g):] + [g]
            bad.append(f'cycle in layer {layer[f]}: ' + ' -> '.join(cycle))
        elif g not in state:
            visit(g, path + [g])
    state[f] = 2


for f in sorted(same):
    if f not in state:
        visit(f, [f])

for b in bad:
    print('FAIL: ' + b)
if bad:
    sys.exit(1)
print(f'ok: {len(layer)} files in {len(set(layer.values()))} layers, '
      f'{edges} imports between them, none upwards or in a cycle')
PY
