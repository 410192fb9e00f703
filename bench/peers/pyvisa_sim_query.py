#!/usr/bin/env python3
"""The peer of target 1: short queries per second on pyvisa-sim.

Asks '?IDN' of GPIB0::8::INSTR in pyvisa-sim's own default.yaml (it answers
"LSG Serial #1234"), the same kind of short query the simulator's bench asks.
Prints one JSON object: {"queries_per_second": [one figure per run]}.

    python3 bench/peers/pyvisa_sim_query.py --runs 5 --seconds 0.5
"""

import argparse
import json
import sys
import time

import pyvisa


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--seconds", type=float, default=0.5, help="wall time per run")
    args = p.parse_args()
    rm = pyvisa.ResourceManager("@sim")
    inst = rm.open_resource("GPIB0::8::INSTR", read_termination="\n", write_termination="\n")
    reply = inst.query("?IDN")
    if "1234" not in reply:
        print(f"unexpected reply from pyvisa-sim: {reply!r}", file=sys.stderr)
        return 1
    rates = []
    for _ in range(max(1, min(args.runs, 30))):
        n, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < args.seconds:
            for _ in range(50):
                inst.query("?IDN")
            n += 50
        rates.append(n / (time.perf_counter() - t0))
    inst.close()
    rm.close()
    print(json.dumps({"queries_per_second": rates}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
