#!/usr/bin/env python3
"""Checks sstclim's layering from the `crate::` paths in src/: no module imports a layer above
its own, and no import circle between top-level modules or between sibling submodules.

Layers, top to bottom (the README's "How it works" describes them):
  cli       clap types and their validation into a plan
  job       run (one rank), dist (across ranks), and the subcommands beside it (run_events,
            tools, bench)
  pipeline  the tile loop that drives the stages for a job
  plan      what a job is (plan) and what can go wrong in it (error): the types the job,
            the pipeline and the stages' callers share
  stages    discover, window, calendar, stats, template, input, pool, engine, output, nc,
            smooth, events
  utilities util, report
A module may use its own layer and the layers below it. Within a layer, any import is allowed
as long as it closes no circle. `main.rs` (above cli) uses the library through `sstclim::`.

    python3 scripts/check-layers.py [src]      # exit 1 and one line per violation
"""
import collections
import os
import re
import sys

LAYERS = {
    "cli": 0,
    "run": 1, "run_events": 1, "dist": 1, "tools": 1, "bench": 1,
    "pipeline": 2,
    "plan": 3, "error": 3,
    "discover": 4, "window": 4, "calendar": 4, "stats": 4, "template": 4,
    "input": 4, "pool": 4, "engine": 4, "output": 4, "nc": 4, "smooth": 4, "events": 4,
    "util": 5, "report": 5,
}


def module_of(root, path):
    parts = os.path.relpath(path, root)[:-3].split("/")
    if parts[-1] == "mod":
        parts = parts[:-1]
    return tuple(parts)


def strip(text):
    """The text without comments, string literals and `#[cfg(test)] mod tests { ... }`."""
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r'"(\\.|[^"\\])*"', '""', text)
    m = re.search(r"#\[cfg\(test\)\]\s*(pub\s+)?mod\s+tests\s*\{", text)
    return text[: m.start()] if m else text


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "src"
    files = [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith(".rs")]
    mods = {module_of(root, f): f for f in files}
    mods.pop(("main",), None)
    mods.pop(("lib",), None)
    problems = []
    top_edges = collections.defaultdict(set)
    sib_edges = collections.defaultdict(set)  # (parent, child) -> {sibling child}
    for mod, path in sorted(mods.items()):
        text = strip(open(path, encoding="utf-8").read())
        # `use crate::{a, b::c}` groups: expand their first level
        paths = re.findall(r"crate::([a-z_][a-z_0-9]*(?:::[a-z_][a-z_0-9]*)*)", text)
        for group in re.findall(r"crate::\{([^}]*)\}", text):
            paths += [p.strip().split(" ")[0] for p in group.split(",") if p.strip()]
        # `super::x` from a file module `a::b` (or `a::b::mod`) names `a::x`
        for rel in re.findall(r"(?<![a-z_:])super::([a-z_][a-z_0-9]*(?:::[a-z_][a-z_0-9]*)*)", text):
            paths.append("::".join(mod[:-1] + tuple(rel.split("::"))))
        for p in paths:
            parts = tuple(p.split("::"))
            # the longest prefix naming a module
            target = next((parts[:k] for k in range(len(parts), 0, -1) if parts[:k] in mods), None)
            if target is None or target[0] == mod[0] and target == mod:
                continue
            a, b = mod[0], target[0]
            if a != b:
                if a not in LAYERS or b not in LAYERS:
                    problems.append(f"{path}: module {a or b} has no layer in scripts/check-layers.py")
                elif LAYERS[b] < LAYERS[a]:
                    problems.append(f"{path}: {'::'.join(mod)} (layer {LAYERS[a]}) imports {'::'.join(target)} (layer {LAYERS[b]}, above)")
                top_edges[a].add(b)
            else:
                # siblings under one parent: the first level where the paths differ
                k = 0
                while k < min(len(mod), len(target)) and mod[k] == target[k]:
                    k += 1
                if k < len(mod) and k < len(target):
                    sib_edges[(mod[:k], mod[k])].add(target[k])
    for cycle in cycles({a: bs for a, bs in top_edges.items()}):
        problems.append("import circle between top-level modules: " + " -> ".join(cycle))
    by_parent = collections.defaultdict(dict)
    for (parent, child), sibs in sib_edges.items():
        by_parent[parent][child] = sibs
    for parent, edges in sorted(by_parent.items()):
        for cycle in cycles(edges):
            problems.append(f"import circle inside {'::'.join(parent)}: " + " -> ".join(cycle))
    problems = list(dict.fromkeys(problems))
    for p in problems:
        print(p)
    print(f"check-layers: {len(mods)} modules, {len(problems)} problem(s)", file=sys.stderr)
    return 1 if problems else 0


def cycles(edges):
    """One representative circle per strongly connected component of more than one node."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(10000)

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
                out.append(path_in(sorted(comp), edges))

    for v in sorted(set(edges) | {w for ws in edges.values() for w in ws}):
        if v not in index:
            visit(v)
    return out


def path_in(comp, edges):
    """A circle through the component's first node, found breadth first."""
    members, start = set(comp), comp[0]
    prev, queue = {start: None}, [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(edges.get(v, ())):
            if w == start:
                walk = [v]
                while prev[walk[-1]] is not None:
                    walk.append(prev[walk[-1]])
                return list(reversed(walk)) + [start]
            if w in members and w not in prev:
                prev[w] = v
                queue.append(w)
    return comp


if __name__ == "__main__":
    sys.exit(main())
