#!/usr/bin/env python3
"""hardware_transcripts.py GPIB_DIAG DOC... -- the documents' transcripts on the hardware
path, run by compat/ci.sh.

A `text` block is one when the line before its fence is
`<!-- compat/ci.sh runs this transcript on the hardware path -->`. Its `$ ` lines are run
(environment assignments first, then `gpib-diag ARGS`, which runs GPIB_DIAG: the build
with the linux-gpib feature, linked against the simulator's libgpib.so.0), and every
line shown under a command must appear in what it printed, in order. On the hardware
path time is the wall clock's, so figures vary from run to run: numbers are compared as
numbers-at-that-place (each run of digits stands for any), and runs of spaces as one.
Words, units and the order of lines must be as shown; a command with
GPIB_SIM_REALTIME=1 may take three runs to show them, as the hardware tests allow. A
`.toml` file named in an environment assignment is taken from the repository's root.
Exit status 0, or 3 for doctor and calibrate ("a problem found"), counts as success.
With VBOARD_MIRROR=1 (vboard/ci.sh: linux-gpib's own library over the virtual board) a
GPIB_SIM_CONFIG assignment also sets GPIB_VBOARD_CONFIG, which the virtual board reads.
"""

import os
import re
import shlex
import subprocess
import sys

MARK = "<!-- compat/ci.sh runs this transcript on the hardware path -->"

# The repository's root: configuration files the transcripts name are relative to it.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def blocks(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    out, prev, i = [], "", 0
    while i < len(lines):
        m = re.match(r"^\s*```(\w*)", lines[i])
        if m:
            start, body = i + 1, []
            i += 1
            while i < len(lines) and lines[i].strip() != "```":
                body.append(lines[i])
                i += 1
            if prev.strip() == MARK:
                out.append((start, m.group(1), body))
            prev = ""
        elif lines[i].strip():
            prev = lines[i]
        i += 1
    return out


def shape(line):
    """A line with every number (a bound such as `<0.0001` too) as `#` and runs of spaces
    as one."""
    return " ".join(re.sub(r"<?[+-]?[0-9]+(?:\.[0-9]+)?", "#", line).split())


def check(diag, path, start, body):
    steps = []
    for l in body:
        if l.startswith("$ "):
            steps.append((l[2:], []))
        elif steps:
            steps[-1][1].append(l)
        else:
            return f"{path}:{start}: a transcript starts with `$ COMMAND`"
    for cmd, shown in steps:
        words = shlex.split(cmd, comments=True)
        env = dict(os.environ)
        while words and re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):
            k, v = words.pop(0).split("=", 1)
            # A configuration file named from the repository's root (the transcripts
            # run in a directory of their own).
            if v.endswith(".toml") and not os.path.isabs(v) and os.path.exists(os.path.join(ROOT, v)):
                v = os.path.join(ROOT, v)
            env[k] = v
            # Under linux-gpib's own library the virtual board reads its bus from
            # GPIB_VBOARD_CONFIG (vboard/ci.sh sets VBOARD_MIRROR=1).
            if k == "GPIB_SIM_CONFIG" and os.environ.get("VBOARD_MIRROR") == "1":
                env["GPIB_VBOARD_CONFIG"] = v
        if not words or words[0] != "gpib-diag":
            return f"{path}:{start}: `{cmd}` does not run gpib-diag"
        # A command timed on the wall clock runs up to three times, as the hardware
        # tests do: a shared machine's slow stretch can move one run's figures past a
        # line the document shows (calibrate's 5 %, a doctor's 25 % note).
        runs = RUNS if env.get("GPIB_SIM_REALTIME") == "1" else 1
        for run in range(1, runs + 1):
            e = run_once(diag, words, env, shown)
            if e is None:
                break
        if e is not None:
            return f"{path}:{start}: `{cmd}`{e}"
        again = f" (on run {run} of {runs})" if run > 1 else ""
        print(f"{path}:{start}: `{cmd}`: {len(shown)} lines as shown{again}")
    return None


# The most runs of a command timed on the wall clock.
RUNS = 3


def run_once(diag, words, env, shown):
    """None when one run of `words` printed the lines `shown`, else what went wrong."""
    p = subprocess.run([diag] + words[1:], env=env, capture_output=True, text=True, timeout=300)
    ok = p.returncode == 0 or (p.returncode == 3 and words[1] in ("doctor", "calibrate"))
    if not ok:
        return f" exited {p.returncode}: {p.stderr}"
    got = [shape(l) for l in p.stdout.split("\n")]
    at = 0
    for want in shown:
        w = shape(want)
        while at < len(got) and got[at] != w:
            at += 1
        if at == len(got):
            return (f": line not in the output (in order, numbers aside):\n"
                    f"  {want}\noutput:\n{p.stdout}")
        at += 1
    return None


def main():
    diag, docs = sys.argv[1], sys.argv[2:]
    found, failures = 0, []
    for d in docs:
        for start, lang, body in blocks(d):
            found += 1
            if lang != "text":
                failures.append(f"{d}:{start}: a marked block must be `text`")
                continue
            e = check(diag, d, start, body)
            if e:
                failures.append(e)
    if not found:
        sys.exit("no block is marked " + MARK)
    if failures:
        sys.exit("\n\n".join(failures))
    print(f"{found} hardware-path transcript(s) ran as shown")


if __name__ == "__main__":
    main()
