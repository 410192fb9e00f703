#!/usr/bin/env bash
# Runs ours and the peers side by side for every performance target (the table of the
# Performance table of bench/README.md), and prints one line per figure:
#   target N.k  <name>  ours <median> (<min>-<max>) <unit>  peer <median> (<min>-<max>)  ratio <r>  goal <goal>  MET|NOT MET
#
#   bench/compare.sh            full run (a few minutes, most of it the release build)
#   QUICK=1 bench/compare.sh    short smoke run (fewer, shorter runs; about a minute once built)
#   RUNS=n                      runs per figure (default 5; QUICK: 3)
#   ONLY=glob                   run only bench/targets/<glob> (e.g. ONLY='4-*')
#   CI_LOG=file                 the log of a clean-clone .ci/run, for 9.1 (its time)
#
# 1.1 and 4.2 also count instructions with valgrind's callgrind where it is installed
# (apt-get install valgrind): steady figures on a noisy machine.
#
# It makes (or reuses) a venv in target/bench-venv with the pinned Python peers of
# bench/peers/requirements.txt, builds gpib's benches and gpib-diag in release, then
# runs every executable bench/targets/*.sh in name order. Everything is loopback or in
# process and bounded in time. Results: target/bench-results/lines.jsonl (and .log).
# Not run by CI: timings on a shared machine are not pass/fail material.
#
# ---- The line protocol: how a target script reports -------------------------------
# A target script is an executable bench/targets/<N>-<name>.sh. It runs with the repo
# root as working directory and these variables set:
#   PY      the venv's python3 (pyvisa, pyvisa-sim, pyvisa-py installed)
#   BIN     a folder with the release binaries: gpib-diag, sim_speed, sim_contention, sim_trace
#   OUT     a folder for scratch files and results (target/bench-results)
#   RUNS    runs per figure;  QUICK  1 for a smoke run (smaller counts), else 0
#   PYTHONPATH includes bench/lib, so Python code can `from line import emit`
# It prints on stdout one JSON object per line for each figure (other stdout lines and
# all of stderr go to the log):
#   {"target": "1.1", "name": "short queries", "unit": "queries/s",
#    "ours": [..one number per run..], "peer": [..] (optional),
#    "ratio": 123.4 (optional: the figure the goal is about), "goal": ">= 100x",
#    "met": true|false, "note": "..." (optional: what stands in the way),
#    "informational": true (optional: a figure shown with no goal, not counted)}
# The script decides "met" (each goal has its own statistic: a minimum, a median, a
# maximum); compare.sh only prints. A script that exits non-zero, or prints a line that
# breaks the protocol, makes compare.sh exit 1 (after printing the rest); a goal that
# is NOT MET does not.
# ------------------------------------------------------------------------------------
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
export QUICK=${QUICK:-0}
if [[ "$QUICK" == 1 ]]; then export RUNS=${RUNS:-3}; else export RUNS=${RUNS:-5}; fi
export OUT=$ROOT/target/bench-results
export BIN=$OUT/bin
mkdir -p "$OUT" "$BIN"
LOG=$OUT/compare.log
LINES=$OUT/lines.jsonl
: >"$LOG"
: >"$LINES"

VENV=$ROOT/target/bench-venv
if [[ ! -x "$VENV/bin/python3" ]] || ! cmp -s bench/peers/requirements.txt "$VENV/requirements.txt"; then
  echo "== Python peers into $VENV (pip)"
  python3 -m venv "$VENV"
  "$VENV/bin/python3" -m pip install -q --disable-pip-version-check -r bench/peers/requirements.txt
  cp bench/peers/requirements.txt "$VENV/requirements.txt"
fi
export PY=$VENV/bin/python3
export PYTHONPATH=$ROOT/bench/lib${PYTHONPATH:+:$PYTHONPATH}

echo "== release build: gpib's benches, gpib-diag"
copy_executables() { # cargo's JSON messages on stdin: copy each built executable into $BIN
  "$PY" -c '
import json, shutil, sys
for text in sys.stdin:
    m = json.loads(text) if text.startswith("{") else {}
    if m.get("reason") == "compiler-artifact" and m.get("executable"):
        shutil.copy(m["executable"], sys.argv[1] + "/" + m["target"]["name"])
' "$BIN"
}
nice -n 10 cargo build -q --release -p gpib-diag --message-format=json 2>>"$LOG" | copy_executables
nice -n 10 cargo bench -q -p gpib --features sim,serve --no-run --message-format=json \
  --bench sim_speed --bench sim_contention --bench sim_trace 2>>"$LOG" | copy_executables

status=0
for script in bench/targets/${ONLY:-*}; do
  [[ -f "$script" && -x "$script" ]] || continue
  echo "== $script"
  echo "== $script" >>"$LOG"
  start=$EPOCHREALTIME
  rc=0
  "$script" >"$OUT/step.out" 2>>"$LOG" || rc=$?
  cat "$OUT/step.out" >>"$LOG"
  grep '^{' "$OUT/step.out" >>"$LINES" || true
  if [[ $rc != 0 ]]; then
    echo "!! $script failed with status $rc (see $LOG)"
    status=1
  fi
  awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "   %.1f s\n", b - a }'
done

echo
"$PY" bench/lib/line.py report "$LINES" || status=1
# The same figures as bench/README.md's Performance table.
"$PY" bench/lib/line.py markdown "$LINES" >"$OUT/table.md"
echo "the table for bench/README.md: $OUT/table.md"
exit $status
