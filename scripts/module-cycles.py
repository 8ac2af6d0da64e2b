#!/usr/bin/env python3
"""Fails when a crate's modules import each other in a circle.

Usage: python3 scripts/module-cycles.py SRC_DIR...

Reads every .rs file under each source folder (tests and comments left
out), notes which modules each refers to through `crate::`, `super::` and
`self::` paths (brace lists included) and, in a parent, the paths that
start with one of its children's names (`use child::Item`), and looks for
strongly connected groups of modules. A parent and its children count like
any two modules: a child that takes from its parent what the parent takes
from the child closes a circle, so what the children share lives in a
module of its own below them. Prints each circle and exits 1 if there is
one.
"""
import os
import re
import sys
from pathlib import Path


def module_of(root, path):
    parts = os.path.relpath(path, root)[:-3].split(os.sep)
    return tuple(parts[:-1] if parts[-1] in ("mod", "lib", "main") else parts)


def strip(source):
    source = re.sub(r"//[^\n]*", "", source)
    return re.sub(r"#\[cfg\(test\)\]\s*mod tests\s*\{.*", "", source, flags=re.DOTALL)


def references(source):
    source = strip(source)

    def expand(m):
        return " ".join(f"{m.group(1)}::{item.strip()}" for item in m.group(2).split(",") if item.strip())

    for _ in range(3):  # nested brace lists
        source = re.sub(r"\b((?:crate|super|self)(?:::[a-z_][a-z0-9_]*)*)::\{([^{}]*)\}", expand, source)
    return re.findall(r"\b((?:crate|super|self)(?:::[a-z_][a-z0-9_]*)+)", source)


def graph(root):
    files = [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs
             if f.endswith(".rs") and os.sep + "bin" + os.sep not in os.path.join(d, f)]
    modules = {module_of(root, f): f for f in files}
    edges = {m: set() for m in modules}
    for m, f in modules.items():
        for ref in references(Path(f).read_text(encoding="utf8")):
            parts = ref.split("::")
            here = [] if parts[0] == "crate" else list(m)
            parts = parts[1:] if parts[0] == "crate" else parts
            while parts and parts[0] in ("super", "self"):
                if parts[0] == "super":
                    here = here[:-1]
                parts = parts[1:]
            for n in range(len(parts), 0, -1):
                target = tuple(here + parts[:n])
                if target in modules:
                    if target != m:
                        edges[m].add(target)
                    break
        # A parent names its children without `self::` (`use child::Item`).
        for name in re.findall(r"(?<![:\w])([a-z_][a-z0-9_]*)::", strip(Path(f).read_text(encoding="utf8"))):
            if m + (name,) in modules:
                edges[m].add(m + (name,))
    return edges


def circles(edges):
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(group)

    sys.setrecursionlimit(10000)
    for v in edges:
        if v not in index:
            visit(v)
    return found


bad = False
for root in sys.argv[1:]:
    for group in circles(graph(root)):
        bad = True
        print(f"{root}: modules import each other in a circle: " + " <-> ".join("::".join(m) for m in group))
sys.exit(1 if bad else 0)
