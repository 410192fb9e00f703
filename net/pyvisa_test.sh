#!/usr/bin/env bash
# PyVISA + pyvisa-py (pinned, in a venv under target/) against `gpib-diag serve`,
# through its Prologix, VXI-11 and HiSLIP services. Starts the server on free ports,
# parses the ports it prints, runs net/pyvisa_test.py, stops the server.
#
#   net/pyvisa_test.sh                      # serves the simulated bench
#   net/pyvisa_test.sh SERVE-OPTIONS...     # serves what the options say, e.g.
#                                           # --backend linux-gpib --board 0,1
#
# GPIB_DIAG: the gpib-diag to run (default: built here, release); PYVISA_BOARDS: the
# served boards the VXI-11 checks run on (default 0); PYVISA_IDN: more checks, each
# `DEVICE=IDN` (`gpib1,7=ACME,COUNTER-7,1,1.0`), separated by `;`.
# Needs python3 with venv and pip, and PyPI (or a pip mirror).
set -euo pipefail
cd "$(dirname "$0")/.."
PYVISA=1.15.0
PYVISA_PY=0.8.0
VENV=target/pyvisa-venv
if ! "$VENV/bin/python" -c "import pyvisa, pyvisa_py, sys; sys.exit(pyvisa.__version__ != '$PYVISA')" 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q "pyvisa==$PYVISA" "pyvisa-py==$PYVISA_PY"
fi
if [[ -z "${GPIB_DIAG:-}" ]]; then
  cargo build --release -q -p gpib-diag
  GPIB_DIAG=target/release/gpib-diag
fi
if [[ $# -eq 0 ]]; then
  set -- --bus bench --default-device 22
fi
OUT=$(mktemp)
"$GPIB_DIAG" serve "$@" --port 0 --vxi11-port 0 --hislip-port 0 --no-portmap >"$OUT" &
PID=$!
trap 'kill -INT $PID 2>/dev/null; wait $PID 2>/dev/null; rm -f "$OUT"' EXIT
for _ in $(seq 100); do grep -q '^serving ' "$OUT" && break; sleep 0.1; done
LINE=$(grep '^serving ' "$OUT") || { echo "gpib-diag serve printed no ports" >&2; exit 1; }
PROLOGIX=$(sed -n 's/.* prologix=\([^ ]*\).*/\1/p' <<<"$LINE")
VXI11=$(sed -n 's/.* vxi11=\([^ ]*\).*/\1/p' <<<"$LINE")
HISLIP=$(sed -n 's/.* hislip=\([^ ]*\).*/\1/p' <<<"$LINE")
echo "$LINE"
"$VENV/bin/python" net/pyvisa_test.py "$PROLOGIX" "$VXI11" 22 "${PYVISA_BOARDS:-0}" "${PYVISA_IDN:-}" "$HISLIP"
