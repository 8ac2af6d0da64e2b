#!/usr/bin/env python3
"""Fails when a crate's modules import each other in a circle.

Usage: python3 scripts/module-cycles.py SRC_DIR...
       python3 scripts/module-cycles.py --self-test

Reads every .rs file under each source folder (tests and comments left
out), notes which modules each refers to through `crate::`, `super::` and
`self::` paths (brace lists included) and, in a parent, the paths that
start with one of its children's names (`use child::Item`), and looks for
strongly connected groups of modules. A path that names an item of a
module (`super::Integration`, `crate::say`) refers to that module. A parent
and its children count like any two modules: a child that takes from its
parent what the parent takes from the child closes a circle, so what the
children share lives in a module of its own below them. Prints each circle
and exits 1 if there is one. `--self-test` checks the check on made-up
crates: a parent/child circle is found, siblings sharing a module are not.
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
    return re.sub(r"#\[cfg\(test\)\]\s*(?:pub(?:\([a-z]+\))?\s+)?mod \w+\s*\{.*", "", source, flags=re.DOTALL)


def references(source):
    source = strip(source)

    def expand(m):
        return " ".join(f"{m.group(1)}::{item.strip()}" for item in m.group(2).split(",") if item.strip())

    for _ in range(3):  # nested brace lists
        source = re.sub(r"\b((?:crate|super|self)(?:::[a-z_][a-z0-9_]*)*)::\{([^{}]*)\}", expand, source)
    return re.findall(r"\b((?:crate|super|self)(?:::[A-Za-z_][A-Za-z0-9_]*)+)", source)


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
            # The longest module the path names; an item of `here` itself
            # (`super::Integration`) names `here`.
            for n in range(len(parts), -1, -1):
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


def self_test():
    import tempfile

    def crate(files):
        root = tempfile.mkdtemp()
        for name, text in files.items():
            path = Path(root, name)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf8")
        return [sorted("::".join(m) for m in g) for g in circles(graph(root))]

    parent_child = {
        "lib.rs": "mod clis;\n",
        "clis/mod.rs": "mod codex;\npub trait Integration {}\npub const ALL: &[&dyn Integration] = &[&codex::Codex];\n",
        "clis/codex.rs": "use super::Integration;\npub struct Codex;\nimpl Integration for Codex {}\n",
    }
    assert crate(parent_child) == [["clis", "clis::codex"]], crate(parent_child)
    shared = {
        "lib.rs": "mod clis;\n",
        "clis/mod.rs": "mod codex;\nmod integration;\npub use integration::Integration;\npub const ALL: &[&dyn Integration] = &[&codex::Codex];\n",
        "clis/integration.rs": "pub trait Integration {}\n",
        "clis/codex.rs": "use super::integration::Integration;\npub struct Codex;\nimpl Integration for Codex {}\n",
    }
    assert crate(shared) == [], crate(shared)
    # A test module's paths count for nothing, whatever its name.
    tested = dict(parent_child, **{"clis/codex.rs": "pub struct Codex;\n#[cfg(test)]\npub(crate) mod expect {\n    use super::super::Integration;\n}\n"})
    assert crate(tested) == [], crate(tested)
    print("module-cycles: self-test passed")


if sys.argv[1:] == ["--self-test"]:
    self_test()
    sys.exit(0)

bad = False
for root in sys.argv[1:]:
    for group in circles(graph(root)):
        bad = True
        print(f"{root}: modules import each other in a circle: " + " <-> ".join("::".join(m) for m in group))
sys.exit(1 if bad else 0)
