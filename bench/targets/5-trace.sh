#!/usr/bin/env bash
# Target 5: recording a trace costs at most 2x an unrecorded run of the same workload,
# with memory bounded; VCD export of the 400,000-byte transfer at >= 50 MB/s of VCD.
set -euo pipefail
queries=20000; [[ "$QUICK" == 1 ]] && queries=5000
"$BIN/sim_trace" --json --runs "$RUNS" --queries "$queries" >"$OUT/trace.json"
"$BIN/gpib-diag" trace record --bus hp9000-350 --workload read --size 400000 -o "$OUT/io-test.trace" >&2
"$PY" - "$OUT/trace.json" "$BIN/gpib-diag" "$OUT" "$RUNS" <<'PY'
import json, os, statistics, subprocess, sys, time
from line import emit
t = json.load(open(sys.argv[1]))
diag, out, runs = sys.argv[2], sys.argv[3], int(sys.argv[4])
r = statistics.median(t["ratio"])
emit("5.1", f"recorded vs unrecorded run ({t['queries']} queries + 64 KiB blocks)", "s", t["traced_s"],
     "<= 2x (median)", r <= 2, peer=t["plain_s"], ratio=r)
grow = (t["peak_rss_after_4x"] - t["peak_rss_before"]) / 2**20
emit("5.1", f"peak memory growth over a 4x longer recorded run ({t['trace_bytes_4x'] / 2**20:.0f} MiB of trace)",
     "MiB", [grow], "<= 1 MiB (streamed)", grow <= 1)
vcd = os.path.join(out, "io-test.vcd")
rates = []
for _ in range(runs):
    t0 = time.perf_counter()
    subprocess.run([diag, "trace", "export", "--vcd", vcd, os.path.join(out, "io-test.trace")],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rates.append(os.path.getsize(vcd) / (time.perf_counter() - t0) / 1e6)
m = statistics.median(rates)
emit("5.2", f"VCD export of the 400,000-byte transfer ({os.path.getsize(vcd) / 1e6:.0f} MB), whole command",
     "MB/s", rates, ">= 50 MB/s (median)", m >= 50)
os.remove(vcd)
PY
