#!/usr/bin/env bash
# Targets 1 and 2: short queries on the simulator against pyvisa-sim (>= 100x, the
# minimum of our runs over pyvisa-sim's median), and 1 MiB blocks against memcpy of
# 1 MiB in the same process (>= 0.5x), with the cost per byte from 1 KiB to 64 MiB.
set -euo pipefail
budget=300
[[ "$QUICK" == 1 ]] && budget=100
"$BIN/sim_speed" --runs "$RUNS" --budget-ms "$budget" --json "$OUT/sim_speed.json" >&2
"$PY" bench/peers/pyvisa_sim_query.py --runs "$RUNS" --seconds "0.$((budget / 100 + 2))" >"$OUT/pyvisa_sim.json"
"$PY" - "$OUT/sim_speed.json" "$OUT/pyvisa_sim.json" <<'PY'
import json, statistics, sys
from line import emit
ours = json.load(open(sys.argv[1]))
peer = json.load(open(sys.argv[2]))["queries_per_second"]
q = ours["query_runs"]
r = min(q) / statistics.median(peer)
emit("1.1", "*IDN? queries on the simulator vs pyvisa-sim '?IDN'", "queries/s", q, ">= 100x (our slowest run)",
     r >= 100, peer=peer, ratio=r,
     note=None if r >= 100 else "2.83k instructions a query (callgrind; 4.7k before the last round): two addressing "
     "operations (0.38k each), the write (0.60k) and the read (0.61k), each with its timing, timelines and the "
     "caller's clock; the SCPI model (0.35k); the Bus, Device and SimBoard layers (0.53k)")
ratios = ours["block_to_memcpy_runs"]
emit("2.1", "1 MiB block read (typed layer) vs memcpy 1 MiB", "MB/s", [b / 1e6 for b in ours["block_runs"]],
     ">= 0.5x (median)", statistics.median(ratios) >= 0.5,
     peer=[m / 1e6 for m in ours["memcpy_runs"]], ratio=statistics.median(ratios))
for p in ours["per_byte"]:
    n = p["size"]
    label = f"{n >> 20} MiB" if n >= 1 << 20 else f"{n >> 10} KiB"
    ratio = p["wall_ns_per_byte"] / p["memcpy_ns_per_byte"]
    # Flat: no work per byte beyond the one copy (memcpy of the same size, the floor).
    emit(f"2.2", f"wall ns/byte, {label} block vs memcpy of {label}", "ns/B", [p["wall_ns_per_byte"]],
         "<= 4x memcpy's", ratio <= 4, peer=[p["memcpy_ns_per_byte"]], ratio=ratio,
         note=None if ratio <= 4 else "a block query's fixed cost (two bus operations, the instrument's parser) over few bytes")
PY
