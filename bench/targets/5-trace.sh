#!/usr/bin/env bash
# Target 5: recording a trace costs at most 2x an unrecorded run of the same workload,
# with memory bounded; VCD export of the 400,000-byte transfer at >= 50 MB/s of VCD.
set -euo pipefail
queries=20000; [[ "$QUICK" == 1 ]] && queries=5000
"$BIN/sim_trace" --json --runs "$RUNS" --queries "$queries" >"$OUT/trace.json"
# The recorder's own work in instructions (callgrind, N2 minus N1 queries over N2 - N1,
# recorded into a writer that writes nothing, and unrecorded): steady where the wall
# ratio moves with where the writing thread runs.
: >"$OUT/callgrind_trace.txt"
if command -v valgrind >/dev/null; then
  for kind in plain recorded; do
    for n in 2000 12000; do
      valgrind --tool=callgrind --callgrind-out-file="$OUT/callgrind_trace.$kind.$n" \
        "$BIN/sim_trace" --profile "$kind" "$n" >/dev/null 2>&1
      echo "$kind $n $(sed -n 's/^summary: //p' "$OUT/callgrind_trace.$kind.$n")" >>"$OUT/callgrind_trace.txt"
    done
  done
fi
"$BIN/gpib-diag" trace record --bus hp9000-350 --workload read --size 400000 -o "$OUT/io-test.trace" >&2
"$PY" - "$OUT/trace.json" "$BIN/gpib-diag" "$OUT" "$RUNS" "$OUT/callgrind_trace.txt" <<'PY'
import json, os, statistics, subprocess, sys, time
from line import emit
t = json.load(open(sys.argv[1]))
diag, out, runs = sys.argv[2], sys.argv[3], int(sys.argv[4])
r = statistics.median(t["ratio"])
emit("5.1", f"recorded vs unrecorded run ({t['queries']} queries + 64 KiB blocks)", "s", t["traced_s"],
     "<= 2x (median)", r <= 2, peer=t["plain_s"], ratio=r)
# Where the time goes: the same run recorded into a writer that writes nothing (the
# recorder's own work on the program's thread, without the file system's).
nr = statistics.median(t["nowhere_ratio"])
emit("5.1", "the same run recorded into nothing (the recorder's own work, wall; the file system's left out)",
     "s", t["nowhere_s"], "none (the wall ratio above is the goal)", True, peer=t["plain_s"], ratio=nr,
     informational=True)
counts = {}
for line in open(sys.argv[5]):
    kind, n, count = (line.split() + ["", "", ""])[:3]
    if count.isdigit():
        counts.setdefault(kind, {})[int(n)] = int(count)
per = {k: (c[12000] - c[2000]) / 10000 for k, c in counts.items() if set(c) == {2000, 12000}}
if len(per) == 2:
    emit("5.1", "the same workload per query in instructions, recorded vs unrecorded (callgrind; the "
         "recorder's own work, the file system's left out)", "instructions", [per["recorded"]],
         "none (the wall ratio above is the goal)", True, peer=[per["plain"]],
         ratio=per["recorded"] / per["plain"], informational=True)
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
