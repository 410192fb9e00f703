#!/usr/bin/env bash
# Measures our simulator and the peers in one run, and prints the ratios.
#   bench/compare_peers.sh            (needs: python3 -m pip install pyvisa pyvisa-sim)
# Figures go to bench/results/ (ignored by git). Loopback/in-process only; bounded.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=$(pwd)/bench/results
mkdir -p "$OUT"
PEERS=${PEERS:-../shared/bench}

echo "== gpib simulator (cargo bench -p gpib --bench sim_speed)"
cargo bench -q -p gpib --bench sim_speed -- --json "$OUT/gpib_sim.json"

if [[ -f "$PEERS/bench_sim.py" ]] && python3 -c 'import pyvisa, pyvisa_sim' 2>/dev/null; then
  echo "== pyvisa-sim (same machine, same run)"
  timeout 600 python3 "$PEERS/bench_sim.py" --runs 5 --iterations 2000 --block-sizes 1024,16384 \
    --block-iterations 3 --json "$OUT/pyvisa_sim.json" >/dev/null
  python3 - "$OUT/gpib_sim.json" "$OUT/pyvisa_sim.json" <<'PY'
import json, sys
ours = json.load(open(sys.argv[1]))
peer = json.load(open(sys.argv[2]))
q = [r for r in peer["results"] if "query" in r["name"]][0]
peer_qps = q["ops_per_s"]["median"]
print(f"queries/s: gpib sim {ours['queries_per_second']:,.0f}  pyvisa-sim {peer_qps:,.0f}  ratio {ours['queries_per_second'] / peer_qps:.1f}x")
print(f"1 MiB block reads: {ours['block_1mib_bytes_per_second'] / 1e6:,.0f} MB/s = {ours['block_to_memcpy']:.2f} x memcpy (measured in the same process)")
PY
else
  echo "(pyvisa-sim not installed or $PEERS missing: python3 -m pip install pyvisa pyvisa-sim)"
fi
