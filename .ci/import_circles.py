#!/usr/bin/env python3
"""import_circles.py SRC_DIR... -- fails when the modules of a crate import each other in
a circle.

A module is a file (`a/b.rs` and `a/b/mod.rs` are `a::b`). It imports another when it
names it through `crate::` or `super::` (a path names the longest module it starts
with). A module and its own parent or children do not count as a circle: a parent
declares its children, and a child may use its parent's items. Test modules (`tests`,
`*_tests`, an inline `#[cfg(test)] mod`) are left out. Prints each circle
(a strongly connected group of modules) and exits 1 when there is one.
"""

import os
import re
import sys


def modules(root):
    out = {}
    for d, _, files in os.walk(root):
        for f in files:
            if not f.endswith(".rs"):
                continue
            path = os.path.join(d, f)
            parts = os.path.relpath(path, root)[:-3].split(os.sep)
            if parts[-1] in ("mod", "lib", "main"):
                parts = parts[:-1]
            name = "::".join(parts)
            if parts and (parts[-1] == "tests" or parts[-1].endswith("_tests")):
                continue  # test-only modules are not the crate's structure
            src = open(path, encoding="utf-8").read()
            # Inline test modules (at the end of a file) likewise.
            cut = re.search(r"#\[cfg\(test\)\]\s*mod \w+\s*\{", src)
            out[name] = src[: cut.start()] if cut else src
    return out


def related(a, b):
    return a == b or a.startswith(b + "::") or b.startswith(a + "::") or not a or not b


def edges(mods):
    names = set(mods)

    def resolve(path):
        parts = path.split("::")
        for i in range(len(parts), 0, -1):
            m = "::".join(parts[:i])
            if m in names:
                return m
        return None

    out = {m: set() for m in mods}
    for m, src in mods.items():
        parent = m.rsplit("::", 1)[0] if "::" in m else ""
        found = [(p, "crate") for p in re.findall(r"crate::((?:\w+::)*\w+)", src)]
        found += [(p, "super") for p in re.findall(r"super::((?:\w+::)*\w+)", src)]
        for p, kind in found:
            full = p if kind == "crate" else (parent + "::" + p if parent else p)
            t = resolve(full)
            if t is not None and not related(m, t):
                out[m].add(t)
    return out


def circles(graph):
    index, low, stack, on, found = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(100000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
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
                found.append(sorted(group))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def main():
    status = 0
    for root in sys.argv[1:]:
        mods = modules(root)
        graph = edges(mods)
        found = circles(graph)
        for c in found:
            status = 1
            print(f"{root}: import circle: {' -> '.join(c)}")
        if not found:
            print(f"{root}: {len(mods)} modules, no import circle")
    sys.exit(status)


main()
