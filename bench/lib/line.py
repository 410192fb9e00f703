"""Writes and reads the result lines of bench/compare.sh (the protocol is described at
the top of compare.sh). Target scripts written in Python import `emit`; compare.sh runs
`python3 bench/lib/line.py report FILE` to print the table."""

import json
import statistics
import sys


def emit(target, name, unit, ours, goal, met, peer=None, ratio=None, note=None, informational=False):
    """Prints one result line: ours/peer are lists of figures (one per run). An
    informational line has no goal: it is shown, and not counted."""
    line = {"target": str(target), "name": name, "unit": unit, "ours": list(ours),
            "goal": goal, "met": bool(met)}
    if informational:
        line["informational"] = True
    if peer is not None:
        line["peer"] = list(peer)
    if ratio is not None:
        line["ratio"] = ratio
    if note:
        line["note"] = note
    print(json.dumps(line), flush=True)


def fig(v):
    """A figure with 3 significant digits, in plain notation for the usual ranges."""
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 1e6:
        return f"{v / 1e6:.3g}M"
    if a >= 1e4:
        return f"{v / 1e3:.3g}k"
    if a >= 1e3:
        return f"{v:,.0f}"
    return f"{v:.3g}"


def spread(values):
    if not values:
        return "-"
    return f"{fig(statistics.median(values))} ({fig(min(values))}-{fig(max(values))})"


def check(line):
    """The reason a line breaks the protocol, or None."""
    for key, kind in (("target", str), ("name", str), ("unit", str), ("ours", list),
                      ("goal", str), ("met", bool)):
        if not isinstance(line.get(key), kind):
            return f"field {key!r} missing or not a {kind.__name__}"
    for key in ("ours", "peer"):
        if key in line and not all(isinstance(v, (int, float)) for v in line[key]):
            return f"field {key!r} holds something that is not a number"
    if "ratio" in line and not isinstance(line["ratio"], (int, float)):
        return "field 'ratio' is not a number"
    if "informational" in line and not isinstance(line["informational"], bool):
        return "field 'informational' is not a bool"
    return None


def read_lines(path):
    """The result lines of `path` that keep the protocol, in target order, and 1 when
    a line breaks it (each such line is named on stderr), else 0."""
    bad = 0
    lines = []
    with open(path) as f:
        for n, text in enumerate(f, 1):
            text = text.strip()
            if not text:
                continue
            try:
                line = json.loads(text)
                why = check(line)
            except json.JSONDecodeError as e:
                why = f"not JSON ({e})"
            if why:
                print(f"{path}:{n}: bad result line: {why}: {text[:120]}", file=sys.stderr)
                bad = 1
                continue
            lines.append(line)
    lines.sort(key=lambda l: [int(p) if p.isdigit() else p for p in l["target"].split(".")])
    return lines, bad


def verdict(line, met="MET", not_met="NOT MET", none="(no goal)"):
    """A line's verdict in the words given."""
    return none if line.get("informational") else met if line["met"] else not_met


def tally(lines):
    """(figures that meet their goal, figures with a goal)."""
    goals = [l for l in lines if not l.get("informational")]
    return sum(l["met"] for l in goals), len(goals)


def report(path):
    """Prints the table; returns 1 when a line breaks the protocol, else 0."""
    lines, bad = read_lines(path)
    for l in lines:
        ratio = f"ratio {fig(l['ratio'])}" if "ratio" in l else "ratio -"
        print(f"target {l['target']:<5} {l['name']}  ours {spread(l['ours'])} {l['unit']}"
              f"  peer {spread(l.get('peer', []))}  {ratio}  goal {l['goal']}  {verdict(l)}")
        if l.get("note"):
            print(f"             ({l['note']})")
    met, goals = tally(lines)
    print(f"{met} of {goals} figures meet their goal ({len(lines) - goals} shown without one)")
    return bad


def markdown(path):
    """Prints the Performance table of bench/README.md: a row per figure; returns 1
    when a line breaks the protocol, else 0."""
    lines, bad = read_lines(path)
    print("| target | figure | ours | peer, same run | ratio | goal | |")
    print("|---|---|---|---|---|---|---|")
    for l in lines:
        cell = lambda s: str(s).replace("|", "\\|").replace("*", "\\*")
        ours = f"{spread(l['ours'])} {l['unit']}" if l["ours"] else "not measured"
        peer = spread(l["peer"]) if l.get("peer") else ""
        ratio = f"{fig(l['ratio'])}x" if "ratio" in l else ""
        print(f"| {l['target']} | {cell(l['name'])} | {cell(ours)} | {cell(peer)} | {ratio} "
              f"| {cell(l['goal'])} | {verdict(l, 'met', 'NOT MET', 'no goal')} |")
    met, goals = tally(lines)
    print()
    print(f"{met} of {goals} figures meet their goal; medians, with the runs' range in brackets.")
    return bad


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "report":
        sys.exit(report(sys.argv[2]))
    if len(sys.argv) == 3 and sys.argv[1] == "markdown":
        sys.exit(markdown(sys.argv[2]))
    print("usage: line.py report|markdown RESULTS.jsonl", file=sys.stderr)
    sys.exit(2)
