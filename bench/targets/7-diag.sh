#!/usr/bin/env bash
# Target 7: gpib-diag's wall time on the simulator: io-test 400000 in both 1988
# configurations under 50 ms each, a default sweep under 2 s, doctor under 5 s.
set -euo pipefail
"$PY" - "$BIN/gpib-diag" "$RUNS" <<'PY'
import statistics, subprocess, sys, time
from line import emit
diag, runs = sys.argv[1], int(sys.argv[2])
cases = [
    ("7.1", "io-test 400000 --bus hp9000-350 (the 1988 disc mounted)", ["io-test", "400000", "--bus", "hp9000-350"], 0.05),
    ("7.1", "io-test 400000 --bus hp9000-350 --unmount /disc", ["io-test", "400000", "--bus", "hp9000-350", "--unmount", "/disc"], 0.05),
    ("7.2", "sweep (default)", ["sweep"], 2.0),
    ("7.3", "doctor (default configuration)", ["doctor"], 5.0),
]
# doctor's exit status 3 says it found a problem (the default configuration has some).
ok_status = {"doctor": (0, 3)}
for target, name, args, limit in cases:
    walls = []
    for _ in range(runs):
        t0 = time.perf_counter()
        rc = subprocess.run([diag, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
        if rc not in ok_status.get(args[0], (0,)):
            sys.exit(f"gpib-diag {' '.join(args)} exited with status {rc}")
        walls.append((time.perf_counter() - t0) * 1000)
    m = statistics.median(walls)
    emit(target, name, "ms", walls, f"< {limit * 1000:g} ms (median)", m < limit * 1000)
PY
