#!/usr/bin/env python3
"""include_cycles.py DIR... — prints every include cycle inside each folder of src/, one per line.

A file X.c and its header X.h are one node X; X -> Y when X.c or X.h includes "folder/Y.h" of the
same folder. A cycle means two parts of one layer use each other, which the layering forbids
(ARCHITECTURE.md). Used by test_source_layers.sh; exits 0 and prints nothing when there is none."""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def graph(folder):
    layer = os.path.basename(folder.rstrip('/'))
    edges = {}
    for name in sorted(os.listdir(folder)):
        if not name.endswith(('.c', '.h')):
            continue
        node = name[:-2]
        with open(os.path.join(folder, name), encoding='utf-8', errors='replace') as f:
            text = f.read()
        for inc in INCLUDE.findall(text):
            if inc.startswith(layer + '/') and inc.endswith('.h'):
                to = inc[len(layer) + 1:-2]
                if to != node:
                    edges.setdefault(node, set()).add(to)
        edges.setdefault(node, set())
    return edges


def cycles(edges):
    """One cycle per strongly connected component of more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


for folder in sys.argv[1:]:
    for comp in cycles(graph(folder)):
        print(f"{os.path.basename(folder.rstrip('/'))}: {' <-> '.join(comp)}")
