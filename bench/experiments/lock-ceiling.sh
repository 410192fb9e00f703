#!/usr/bin/env bash
# The most any lock design could give target 1.2 (simulated *IDN? against pyvisa-sim).
#
# Builds sim_speed three times from one commit: as it is ("locked"); with the bus's
# std::sync::Mutex replaced by an unsynchronised cell ("no-bus-lock":
# lock-ceiling-bus.patch, what folding the bus's lock into the host's could give at
# most); and with the simulated host's too ("no-locks": lock-ceiling-host.patch on top;
# a query takes no lock at all). The patches are sound for one thread only, so never
# for use. Then runs the builds in turn with pyvisa-sim's '?IDN', one run each, as
# bench/targets/1-2-sim-speed.sh runs 1.2, and prints each build's median rate,
# pyvisa-sim's, and the median and range of the per-run ratios.
#
#   bench/experiments/lock-ceiling.sh [ROUNDS]      # 8 rounds: about 3 minutes
#
# The patches apply to REV below, whatever is checked out, so the figures of one run
# compare with another's. It needs compare.sh's venv (run bench/compare.sh once) and
# the whole history (not a shallow clone). Builds go to target/lock-ceiling/.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
REV=25b7581
ROUNDS=${1:-8}
[[ $ROUNDS =~ ^[1-9][0-9]{0,2}$ ]] || { echo "lock-ceiling: ROUNDS is a count from 1 to 999, not '$ROUNDS'" >&2; exit 2; }
PY=$ROOT/target/bench-venv/bin/python3
[[ -x $PY ]] || { echo "lock-ceiling: no $PY; run bench/compare.sh once (it makes the venv)" >&2; exit 1; }
git -C "$ROOT" cat-file -e "$REV^{commit}" 2>/dev/null ||
  { echo "lock-ceiling: commit $REV is not in this clone (a shallow clone?)" >&2; exit 1; }

OUT=$ROOT/target/lock-ceiling
SRC=$OUT/src
mkdir -p "$OUT"
git -C "$ROOT" worktree remove --force "$SRC" 2>/dev/null || rm -rf "$SRC"
git -C "$ROOT" worktree add -q --detach "$SRC" "$REV"
trap 'git -C "$ROOT" worktree remove --force "$SRC" 2>/dev/null || true' EXIT

# One target directory per build: cargo would take the second tree's sources as fresh
# against the first's artifacts when their files are older.
build() { # $1: the build's name; prints the bench binary's path
  if ! (cd "$SRC" && CARGO_TARGET_DIR=$OUT/$1 nice -n 10 cargo bench -q -p gpib --features sim \
    --bench sim_speed --no-run --message-format=json >"$OUT/$1.json" 2>"$OUT/$1.log"); then
    echo "lock-ceiling: the $1 build failed (its messages: $OUT/$1.log)" >&2
    exit 1
  fi
  "$PY" -c 'import json, sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "sim_speed" and m.get("executable"):
        print(m["executable"])' <"$OUT/$1.json"
}
NAMES=(locked no-bus-lock no-locks)
declare -A BIN
echo "building sim_speed at $REV three times ..." >&2
BIN[locked]=$(build locked)
git -C "$SRC" apply "$ROOT/bench/experiments/lock-ceiling-bus.patch"
BIN[no-bus-lock]=$(build no-bus-lock)
git -C "$SRC" apply "$ROOT/bench/experiments/lock-ceiling-host.patch"
BIN[no-locks]=$(build no-locks)
for name in "${NAMES[@]}"; do
  [[ -x ${BIN[$name]} ]] || { echo "lock-ceiling: the $name build failed" >&2; exit 1; }
done

: >"$OUT/turns.txt"
for round in $(seq "$ROUNDS"); do
  for name in "${NAMES[@]}"; do
    "${BIN[$name]}" --queries-only --runs 1 --budget-ms 300 --json "$OUT/ours.json" >/dev/null
    "$PY" "$ROOT/bench/peers/pyvisa_sim_query.py" --runs 1 --seconds 0.5 >"$OUT/peer.json"
    "$PY" -c 'import json, sys
print(sys.argv[1], json.load(open(sys.argv[2]))["query_runs"][0], json.load(open(sys.argv[3]))["queries_per_second"][0])' \
      "$name" "$OUT/ours.json" "$OUT/peer.json" >>"$OUT/turns.txt"
  done
  echo "round $round of $ROUNDS" >&2
done
"$PY" - "$OUT/turns.txt" <<'PY'
import statistics as st, sys
runs = {}
for line in open(sys.argv[1]):
    name, ours, peer = line.split()
    runs.setdefault(name, []).append((float(ours), float(peer)))
for name in ("locked", "no-bus-lock", "no-locks"):
    v = runs[name]
    r = [o / p for o, p in v]
    print(f"{name:11} ours {st.median(o for o, _ in v) / 1e6:.2f} M/s  pyvisa-sim {st.median(p for _, p in v) / 1e3:.1f} k/s"
          f"  ratio {st.median(r):.1f}x ({min(r):.0f}-{max(r):.0f}x, {len(r)} runs)")
PY
