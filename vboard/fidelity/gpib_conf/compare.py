#!/usr/bin/env python3
"""gpib.conf: the project's parser (compat's libgpib) against linux-gpib's (its own
libgpib over the virtual board), on the files of corpus/ and gpib/configs/gpib.conf.example.

For each file: linux-gpib's side runs gpib_config for each interface section's minor
(as a user's system does), then confdump ibfind()s every name of the file and prints
ibask() of every option; compat's side runs confdump on the same file. Refused files
must be refused by both (gpib_config fails / compat reports the file on stderr, and
every ibfind fails). Differences the allow-list (allow.txt beside this file: one regex a
line, matched against "FILE: REAL || COMPAT") explains are counted, not failed.

Environment: REAL_LIBDIR, COMPAT_LIBDIR, VBOARD_SO, GPIB_CONFIG_BIN.
"""

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))


def strip_comments(text):
    return re.sub(r"/\*.*?(\*/|$)", " ", text, flags=re.S)


def names_of(text):
    body = strip_comments(text)
    names = re.findall(r"\bname\s*=\s*\"?([A-Za-z0-9_\-]+)\"?", body)
    out = []
    for n in names + ["nosuch"]:
        if n not in out:
            out.append(n)
    return out


def minors_of(text):
    body = strip_comments(text)
    minors = []
    for block in re.findall(r"\binterface\s*\{(.*?)\}", body, flags=re.S):
        m = re.search(r"\bminor\s*=\s*(\d+)", block)
        if m and int(m.group(1)) not in minors:
            minors.append(int(m.group(1)))
    return minors


def dump_lines(out):
    return [line[2:] for line in out.splitlines() if line.startswith("= ")]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="the confdump program")
    ap.add_argument("--allow", default=os.path.join(HERE, "allow.txt"))
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("files", nargs="*")
    args = ap.parse_args()
    env_in = {k: os.environ.get(k) for k in ("REAL_LIBDIR", "COMPAT_LIBDIR", "VBOARD_SO", "GPIB_CONFIG_BIN")}
    if not all(env_in.values()):
        print("compare.py: REAL_LIBDIR, COMPAT_LIBDIR, VBOARD_SO and GPIB_CONFIG_BIN are needed", file=sys.stderr)
        return 2
    allow = []
    if os.path.exists(args.allow):
        with open(args.allow) as f:
            allow = [re.compile(x.strip()) for x in f if x.strip() and not x.startswith("#")]
    files = args.files or sorted(glob.glob(os.path.join(HERE, "corpus", "*.conf"))) + [
        os.path.join(ROOT, "gpib", "configs", "gpib.conf.example")
    ]
    base = dict(os.environ)
    for k in ("LD_PRELOAD", "GPIB_SIM_CONFIG", "GPIB_VBOARD_CONFIG", "GPIB_VBOARD_STATE", "LD_LIBRARY_PATH"):
        base.pop(k, None)
    base["GPIB_SIM_REALTIME"] = "0"
    n_names = n_settings = n_diff = n_allowed = n_refused = 0
    failed = []
    work = tempfile.mkdtemp(prefix="gpib-conf-cmp-")
    try:
        for path in files:
            label = os.path.basename(path)
            with open(path, errors="replace") as f:
                text = f.read()
            names, minors = names_of(text), minors_of(text)
            state = os.path.join(work, label + ".state")
            os.makedirs(state)
            real_env = dict(
                base,
                IB_CONFIG=path,
                LD_LIBRARY_PATH=env_in["REAL_LIBDIR"],
                LD_PRELOAD=env_in["VBOARD_SO"],
                GPIB_VBOARD_STATE=state,
                # Bare boards: only linux-gpib's parser reads the file on this side.
                GPIB_VBOARD_CONFIG=os.path.join(HERE, "boards.toml"),
            )
            compat_env = dict(base, IB_CONFIG=path, LD_LIBRARY_PATH=env_in["COMPAT_LIBDIR"])
            real_refused = False
            for m in minors or [0]:
                p = subprocess.run(
                    [env_in["GPIB_CONFIG_BIN"], "-f", path, "--minor", str(m)],
                    env=real_env, capture_output=True, text=True, errors="replace",
                )
                if p.returncode != 0:
                    real_refused = True
            r = subprocess.run([args.bin] + names, env=real_env, capture_output=True, text=True, errors="replace")
            c = subprocess.run([args.bin] + names, env=compat_env, capture_output=True, text=True, errors="replace")
            rl, cl = dump_lines(r.stdout), dump_lines(c.stdout)
            ok_r = [x for x in rl if x.endswith(" ibfind ok")]
            ok_c = [x for x in cl if x.endswith(" ibfind ok")]
            compat_refused = "every call fails" in c.stderr or (not ok_c and bool(names[:-1]))
            real_refused = real_refused or (not ok_r and bool(names[:-1]))
            if real_refused:
                n_refused += 1
            diffs = []
            n_names += len(names)
            if real_refused != compat_refused:
                # One difference: the settings of a file one side refused mean nothing.
                diffs.append(f"refused: real {real_refused} || compat {compat_refused}")
                rl, cl = [], []
            for i in range(max(len(rl), len(cl))):
                a = rl[i] if i < len(rl) else "<missing>"
                b = cl[i] if i < len(cl) else "<missing>"
                if not a.endswith((" ibfind ok",)) and "ibfind" not in a:
                    n_settings += 1
                if a != b:
                    diffs.append(f"{a} || {b}")
            if r.returncode != 0 or c.returncode != 0:
                diffs.append(f"confdump exit real {r.returncode} compat {c.returncode}")
            for d in diffs:
                line = f"{label}: {d}"
                if any(rx.fullmatch(line) for rx in allow):
                    n_allowed += 1
                    if args.verbose:
                        print(f"  allowed {line}")
                else:
                    n_diff += 1
                    failed.append(line)
            if args.verbose:
                print(f"{label}: minors {minors} names {names} refused real {real_refused} compat {compat_refused}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for line in failed:
        print("DIFFERENCE " + line)
    print(
        f"gpib.conf: {len(files)} files ({n_refused} refused by linux-gpib), {n_names} names, "
        f"{n_settings} settings compared, {n_diff} unexplained difference(s), {n_allowed} allowed"
    )
    return 1 if n_diff else 0


if __name__ == "__main__":
    sys.exit(main())
