#!/usr/bin/env python3
"""Differential fidelity of compat's libgpib against linux-gpib's own libgpib (issue 29).

Runs N random sequences of linux-gpib calls (fidelity.c) from a seed through both
libraries on the same simulated bench, compares the transcripts line by line (each
call's answer, then what it put on the bus: the simulated bus's events), shrinks
each differing sequence that the allow-list does not explain to a minimal call list, and
prints it so that it can be replayed (`fidelity run FILE` on each library).

Environment: REAL_LIBDIR (linux-gpib's libgpib.so.0), COMPAT_LIBDIR (compat's),
VBOARD_SO (libgpib_vboard.so), GPIB_CONFIG_BIN (linux-gpib's gpib_config).
Exit status: 0 when every difference is allowed, 1 otherwise, 2 on a setup error.
"""

import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def load_allow(path):
    """The allow-list: blocks of `call REGEX`, `real REGEX`, `compat REGEX` lines (each
    matched against the whole call line of the respective transcript) and optionally
    `rest ignored`, a `# name` line before each. A differing pair of lines is allowed
    when one block matches all three; with `rest ignored`, the rest of the sequence is
    not compared."""
    rules, cur = [], {}
    with open(path) as f:
        for raw in f:
            line = raw.rstrip("\n")
            if not line.strip():
                if not any(k in cur for k in ("call", "real", "compat")):
                    cur = {}
                continue
            if line.startswith("#"):
                # A comment after a block's regexes starts the next block; its first
                # line names it.
                if any(k in cur for k in ("call", "real", "compat")):
                    rules.append(cur)
                    cur = {}
                cur.setdefault("name", line.lstrip("# ").strip())
                continue
            key, _, rx = line.partition(" ")
            if key == "rest":
                # `rest ignored`: the sequence's later lines follow from the difference
                # (a board at another address answers otherwise) and are not compared.
                cur["rest"] = True
                continue
            if key not in ("call", "real", "compat"):
                raise SystemExit(f"{path}: bad line: {line}")
            cur[key] = re.compile(rx.strip())
    if any(k in cur for k in ("call", "real", "compat")):
        rules.append(cur)
    for r in rules:
        for k in ("call", "real", "compat"):
            r.setdefault(k, re.compile(".*"))
    return rules


def call_of(line):
    return line.split(" ->", 1)[0].split("!!", 1)[0]


def allowed(rules, real, compat):
    for r in rules:
        if (
            r["call"].fullmatch(call_of(real))
            and r["real"].fullmatch(real)
            and r["compat"].fullmatch(compat)
        ):
            return r
    return None


ATN_EVENT = re.compile(r"bus board (\d+)  ATN(.*)")


def parse(text):
    """Transcript text -> {sequence label: [lines]}. Consecutive command events of a
    board are one line: what reaches the instruments is the bytes sent under ATN, however
    a library groups them into driver calls (linux-gpib's sends addressing and SDC in one
    IBCMD, compat in two)."""
    seqs, cur = {}, None
    for line in text.splitlines():
        if line.startswith("## "):
            cur = line[3:]
            seqs[cur] = []
        elif cur is not None and seqs[cur] and ATN_EVENT.fullmatch(line):
            prev = ATN_EVENT.fullmatch(seqs[cur][-1])
            if prev and prev.group(1) == ATN_EVENT.fullmatch(line).group(1):
                seqs[cur][-1] += ATN_EVENT.fullmatch(line).group(2)
            else:
                seqs[cur].append(line)
        elif cur is not None:
            # A child's abnormal end is printed on the line of the call it died in.
            if line.startswith("!!") and seqs[cur]:
                seqs[cur][-1] += line
            else:
                seqs[cur].append(line)
    return seqs


def compare(rules, real, compat, used=None):
    """The first difference not allowed, as (index, real line, compat line), or None."""
    n = max(len(real), len(compat))
    for i in range(n):
        a = real[i] if i < len(real) else "<missing>"
        b = compat[i] if i < len(compat) else "<missing>"
        if a == b:
            continue
        rule = allowed(rules, a, b)
        if rule is None:
            return (i, a, b)
        if used is not None:
            used[rule["name"]] = used.get(rule["name"], 0) + 1
        if rule.get("rest"):
            return None
    return None


class Libs:
    def __init__(self, args, work):
        self.bin = args.bin
        self.work = work
        base = dict(os.environ)
        for k in ("LD_PRELOAD", "GPIB_SIM_CONFIG", "GPIB_VBOARD_CONFIG", "GPIB_VBOARD_STATE"):
            base.pop(k, None)
        base["GPIB_SIM_REALTIME"] = "0"
        # What reached the bus is compared too: both libraries print the simulated
        # bus's events (GPIB_SIM_TRACE), which fidelity.c puts after each call as
        # "bus ..." lines (FIDELITY_BUS).
        base["GPIB_SIM_TRACE"] = "1"
        base["FIDELITY_BUS"] = "1"
        base["IB_CONFIG"] = args.conf
        self.state = os.path.join(work, "state")
        self.real_env = dict(
            base,
            LD_LIBRARY_PATH=args.real_libdir,
            LD_PRELOAD=args.vboard,
            GPIB_VBOARD_CONFIG=args.sim,
            GPIB_VBOARD_STATE=self.state,
            FIDELITY_STATE_COPY="1",
        )
        self.compat_env = dict(base, LD_LIBRARY_PATH=args.compat_libdir, GPIB_SIM_CONFIG=args.sim)
        self.gpib_config = args.gpib_config

    def configure(self):
        """gpib_config --minor 0 through the virtual board, as a user's system does at
        boot."""
        os.makedirs(self.state, exist_ok=True)
        env = dict(self.real_env)
        env.pop("FIDELITY_STATE_COPY")
        p = subprocess.run(
            [self.gpib_config, "--minor", "0"], env=env, capture_output=True, text=True
        )
        if p.returncode != 0:
            raise SystemExit(f"gpib_config failed ({p.returncode}): {p.stderr}")

    def env(self, which):
        return self.real_env if which == "real" else self.compat_env

    def run(self, which, argv, timeout=600):
        p = subprocess.run(
            [self.bin] + argv,
            env=self.env(which),
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
        )
        if p.returncode != 0:
            raise RuntimeError(f"{which} {argv}: exit {p.returncode}: {p.stderr[-500:]}")
        return p.stdout

    def replay(self, calls):
        fd, path = tempfile.mkstemp(dir=self.work, suffix=".calls")
        with os.fdopen(fd, "w") as f:
            f.write("".join(c + "\n" for c in calls))
        with concurrent.futures.ThreadPoolExecutor(2) as ex:
            fr = ex.submit(self.run, "real", ["run", path], 120)
            fc = ex.submit(self.run, "compat", ["run", path], 120)
            r, c = fr.result(), fc.result()
        os.unlink(path)
        return parse(r).get("replay", []), parse(c).get("replay", [])


def shrink(libs, rules, calls, match=None):
    """Delta debugging: drop chunks of calls while an unexplained difference remains
    (or, with `match`, while a line of either transcript matches that regex)."""

    def fails(cs):
        r, c = libs.replay(cs)
        if match:
            return any(re.search(match, x) for x in r + c)
        return compare(rules, r, c) is not None

    n = 2
    while len(calls) >= 2:
        chunk = max(1, len(calls) // n)
        reduced = False
        for start in range(0, len(calls), chunk):
            cand = calls[:start] + calls[start + chunk :]
            if cand and fails(cand):
                calls, n, reduced = cand, max(n - 1, 2), True
                break
        if not reduced:
            if chunk == 1:
                break
            n = min(len(calls), n * 2)
    return calls


def signature(diff):
    """What kind of difference: the call's name and the fields that differ."""
    _, a, b = diff
    if a.startswith("bus ") or b.startswith("bus "):
        # What reached the bus: the kinds of event on each side ("ATN", "write", ...,
        # or "call" where one side had no event there).
        def kind(x):
            m = re.match(r"bus board \d+\s+(\S+)", x)
            return m.group(1) if m else "call"

        return f"bus:{kind(a)}/{kind(b)}"
    name = call_of(a).split(" ")[0]
    fa = dict(re.findall(r"(\w+)=(\S+)", a.split(" ->", 1)[-1]))
    fb = dict(re.findall(r"(\w+)=(\S+)", b.split(" ->", 1)[-1]))
    keys = sorted(k for k in set(fa) | set(fb) if fa.get(k) != fb.get(k))
    if "!!" in a or "!!" in b:
        keys.append("abnormal")
    return name + ":" + ",".join(keys)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=int(os.environ.get("FIDELITY_SEED", "1")))
    ap.add_argument("--count", type=int, default=int(os.environ.get("FIDELITY_SEQUENCES", "10000")))
    ap.add_argument("--chunk", type=int, default=250)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--bin", required=True, help="the fidelity program")
    ap.add_argument("--conf", default=os.path.join(HERE, "bench.conf"))
    ap.add_argument("--sim", default=os.path.join(HERE, "bench-sim.toml"), help="the simulated host, for both")
    ap.add_argument("--allow", default=os.path.join(HERE, "allow.txt"))
    ap.add_argument("--shrink", type=int, default=8, help="shrink at most this many kinds of difference")
    ap.add_argument("--real-libdir", default=os.environ.get("REAL_LIBDIR"))
    ap.add_argument("--compat-libdir", default=os.environ.get("COMPAT_LIBDIR"))
    ap.add_argument("--vboard", default=os.environ.get("VBOARD_SO"))
    ap.add_argument("--gpib-config", default=os.environ.get("GPIB_CONFIG_BIN"))
    ap.add_argument("--match", help="shrink while a transcript line matches this regex")
    ap.add_argument("--only", type=int, help="run (and shrink) only this sequence of the seed")
    ap.add_argument("--keep", help="write both transcripts into this folder")
    args = ap.parse_args()
    for k in ("real_libdir", "compat_libdir", "vboard", "gpib_config"):
        if not getattr(args, k):
            print(f"run.py: --{k.replace('_', '-')} (or its environment variable) is needed", file=sys.stderr)
            return 2
    rules = load_allow(args.allow)
    work = tempfile.mkdtemp(prefix="gpib-fidelity-")
    t0 = time.monotonic()
    try:
        libs = Libs(args, work)
        libs.configure()
        tasks = []
        if args.only is not None:
            args.count, args.chunk = args.only + 1, args.only + 1
        for first in range(0, args.count, args.chunk):
            n = min(args.chunk, args.count - first)
            if args.only is not None:
                first, n = args.only, 1
            for which in ("real", "compat"):
                tasks.append((which, first, n))
        out = {"real": {}, "compat": {}}
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
            futs = {
                ex.submit(libs.run, w, ["gen", str(args.seed), str(f), str(n)]): w
                for (w, f, n) in tasks
            }
            for fut in concurrent.futures.as_completed(futs):
                out[futs[fut]].update(parse(fut.result()))
        t_run = time.monotonic() - t0
        if args.keep:
            os.makedirs(args.keep, exist_ok=True)
            for w in out:
                with open(os.path.join(args.keep, w + ".txt"), "w") as f:
                    for i in range(args.count):
                        lbl = f"seq {i}"
                        f.write(f"## {lbl}\n" + "".join(x + "\n" for x in out[w].get(lbl, [])))
        used, failing, calls_run, bus_run = {}, {}, 0, 0
        for i in [args.only] if args.only is not None else range(args.count):
            lbl = f"seq {i}"
            r, c = out["real"].get(lbl), out["compat"].get(lbl)
            if r is None or c is None:
                print(f"run.py: {lbl} missing from a transcript", file=sys.stderr)
                return 2
            n_bus = sum(1 for x in r if x.startswith("bus "))
            calls_run += len(r) - n_bus
            bus_run += n_bus
            d = compare(rules, r, c, used)
            if d is not None:
                failing.setdefault(signature(d), []).append((i, d))
        n_fail = sum(len(v) for v in failing.values())
        for sig, items in sorted(failing.items(), key=lambda kv: -len(kv[1]))[: args.shrink]:
            i, (k, a, b) = items[0]
            print(f"\nDIFFERENCE {sig}: {len(items)} sequence(s), first seq {i} of seed {args.seed}")
            print(f"  real:   {a}\n  compat: {b}")
            calls = libs.run("compat", ["list", str(args.seed), str(i)]).splitlines()
            small = shrink(libs, rules, calls, args.match)
            r, c = libs.replay(small)
            print(f"  minimal sequence ({len(small)} of {len(calls)} calls; replay: fidelity run FILE):")
            for x, y in zip(r + ["<missing>"] * (len(c) - len(r)), c + ["<missing>"] * (len(r) - len(c))):
                mark = "   " if x == y else " ! "
                print(f"   {mark}real   {x}")
                if x != y:
                    print(f"   {mark}compat {y}")
        for sig, items in sorted(failing.items(), key=lambda kv: -len(kv[1]))[args.shrink :]:
            print(f"DIFFERENCE {sig}: {len(items)} sequence(s), first seq {items[0][0]} (not shrunk)")
        elapsed = time.monotonic() - t0
        allowed_txt = ", ".join(f"{k}: {v}" for k, v in sorted(used.items())) or "none"
        print(f"\nallowed differences (lines): {allowed_txt}")
        print(
            f"fidelity: seed {args.seed}, {args.count} sequences, {calls_run} calls, "
            f"{bus_run} bus events, "
            f"{n_fail} sequence(s) with an unexplained difference in {len(failing)} kind(s), "
            f"{sum(used.values())} allowed line difference(s); run {t_run:.1f}s, total {elapsed:.1f}s"
        )
        # The differences not yet judged (compat/README.md, "Still open"): at most
        # FIDELITY_OPEN_MAX sequences of them pass, so that a new one fails CI while the
        # known ones are worked through.
        open_max = int(os.environ.get("FIDELITY_OPEN_MAX", "0"))
        if failing and n_fail <= open_max:
            print(f"fidelity: {n_fail} sequence(s) still open, within FIDELITY_OPEN_MAX={open_max}")
            return 0
        return 1 if failing else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
