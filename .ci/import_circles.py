#!/usr/bin/env python3
"""import_circles.py SRC_DIR... -- fails when the modules of a crate import each other in
a circle. `import_circles.py --self-test` checks the checker on the fixture trees in
.ci/fixtures/import_circles (one with a circle it must find, one without).

A module is a file (`a/b.rs` and `a/b/mod.rs` are `a::b`; `lib.rs`/`main.rs` is the crate
root). It imports another when it names it through `crate::`, `super::` (any number of
them) or `self::`, in a path or in a `use` group (`use super::{a, b::C}`,
`crate::x::{y, z::{..}}`); a path names the longest module it starts with. A module's
use of its parent's items counts like any other (a child that reads `super::x` depends
on its parent), and so does a parent's use of a child's items (`pub use x::Y`, `x::f()`);
declaring a child (`mod x;`) does not. A module and its own descendants may still use
each other: a strongly connected group of modules that lies inside the subtree of one of
its members is checked again without that member, and is a circle only when what is left
still is one (a circle between children shows; a parent and its children do not). Uses of the crate root's own items do not count (the root declares
every module). Comments are left out, and so are test modules (`tests`, `*_tests`, an
inline `#[cfg(test)] mod`). Prints each circle (a strongly connected group of modules)
and exits 1 when there is one.
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
            with open(path, encoding="utf-8") as fh:
                src = fh.read()
            # Inline test modules (at the end of a file) likewise.
            cut = re.search(r"#\[cfg\(test\)\]\s*mod \w+\s*\{", src)
            src = src[: cut.start()] if cut else src
            out[name] = re.sub(r"//[^\n]*", "", src)
    return out


START = re.compile(r"(?<![\w:])(crate|self|super)\b((?:\s*::\s*super\b)*)\s*::\s*")
CHILD = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", re.M)
IDENT = re.compile(r"\s*(\w+|\*)\s*")


def use_tree(src, pos):
    """The paths of the use tree (or plain path) starting at `pos`: a list of
    `["a", "b", ...]` segment lists."""
    segs = []
    while True:
        if src.startswith("{", pos):
            out, pos = [], pos + 1
            while True:
                while pos < len(src) and src[pos] in " \t\r\n,":
                    pos += 1
                if pos >= len(src) or src[pos] == "}":
                    break
                before = pos
                for tail in use_tree_at(src, pos):
                    out.append(segs + tail[0])
                    pos = tail[1]
                if pos == before:
                    pos += 1  # not a path: step over it
            return out or [segs]
        m = IDENT.match(src, pos)
        if not m:
            return [segs]
        segs.append(m.group(1))
        pos = m.end()
        sep = re.compile(r"\s*::\s*").match(src, pos)
        if not sep:
            return [segs]
        pos = sep.end()


def use_tree_at(src, pos):
    """Like `use_tree`, but each path with the position after the whole tree."""
    end = tree_end(src, pos)
    return [(p, end) for p in use_tree(src, pos)]


def tree_end(src, pos):
    """The position just after the use tree starting at `pos`."""
    depth = 0
    while pos < len(src):
        c = src[pos]
        if c == "{":
            depth += 1
        elif c == "}":
            if depth == 0:
                return pos
            depth -= 1
            if depth == 0:
                return pos + 1
        elif depth == 0 and (c == "," or c == ";" or not (c.isalnum() or c in "_:* \t\r\n")):
            return pos
        pos += 1
    return pos


def paths(src):
    """Every `(anchor, supers, segments)` a module names: anchor `crate`, `self` or
    `super`; `supers` how many `super::` follow a leading one. A path that starts
    with the name of a child the module declares (`mod x;` ... `x::Y`) is read as
    `self::x::Y`."""
    for m in START.finditer(src):
        supers = m.group(2).count("super")
        for segs in use_tree(src, m.end()):
            segs = [s for s in segs if s not in ("self", "*")]
            yield m.group(1), supers, segs
    children = CHILD.findall(src)
    if children:
        bare = re.compile(r"(?<![\w:])(" + "|".join(children) + r")\s*::\s*")
        for m in bare.finditer(src):
            for segs in use_tree(src, m.start()):
                yield "self", 0, [s for s in segs if s not in ("self", "*")]


def edges(mods):
    names = set(mods)

    def resolve(parts):
        for i in range(len(parts), 0, -1):
            m = "::".join(parts[:i])
            if m in names:
                return m
        return None  # the crate root's own items, or outside the crate

    out = {m: set() for m in mods}
    for m, src in mods.items():
        here = m.split("::") if m else []
        for anchor, supers, segs in paths(src):
            if anchor == "crate":
                base = []
            else:
                up = supers + (anchor == "super")
                if up > len(here):
                    continue  # above the root: not this crate's
                base = here[: len(here) - up]
            t = resolve(base + segs)
            if t is not None and t != m:
                out[m].add(t)
    return out


def components(graph, nodes):
    """The strongly connected groups (of two or more) of `graph` restricted to `nodes`."""
    index, low, stack, on, found = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(100000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v] & nodes):
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

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return found


def circles(graph, nodes=None):
    """The import circles: strongly connected groups, except that a module and its own
    descendants may use each other (a parent declares and re-exports its children, and
    they use its items). A group that lies inside the subtree of one of its members is
    checked again without that member, so a circle between its children still shows."""
    nodes = set(graph) if nodes is None else nodes
    found = []
    for group in components(graph, nodes):
        tops = [t for t in group if all(g == t or g.startswith(t + "::") for g in group)]
        if tops:
            found += circles(graph, set(group) - {tops[0]})
        else:
            found.append(group)
    return sorted(found)


def check(root):
    mods = modules(root)
    graph = edges(mods)
    found = circles(graph)
    for c in found:
        print(f"{root}: import circle: {' -> '.join(c)}")
        for a in c:
            inside = sorted(b for b in graph[a] if b in c)
            print(f"    {a} uses {', '.join(inside)}")
    if not found:
        print(f"{root}: {len(mods)} modules, no import circle")
    return found


def self_test():
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "import_circles")
    want = {
        "circle": [["a", "a::child", "b"], ["c", "d::inner"], ["e::x", "e::y"]],
        "clean": [],
    }
    bad = 0
    for tree, expected in want.items():
        got = check(os.path.join(here, tree))
        if got != expected:
            print(f"self-test: {tree}: expected circles {expected}, found {got}")
            bad = 1
    print("self-test: " + ("FAILED" if bad else "the checker finds the fixtures' circles and no others"))
    return bad


def main():
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    if not sys.argv[1:]:
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(2)
    status = 0
    for root in sys.argv[1:]:
        if check(root):
            status = 1
    sys.exit(status)


main()
