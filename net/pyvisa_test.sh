#!/usr/bin/env bash
# PyVISA + pyvisa-py (pinned, in a venv under target/) against `gpib-diag serve`,
# through its Prologix and VXI-11 services. Starts the server on free ports, parses
# the ports it prints, runs net/pyvisa_test.py, stops the server.
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
cargo build --release -q -p gpib-diag
OUT=$(mktemp)
target/release/gpib-diag serve --bus bench --port 0 --vxi11-port 0 --no-portmap --default-device 22 >"$OUT" &
PID=$!
trap 'kill -INT $PID 2>/dev/null; wait $PID 2>/dev/null; rm -f "$OUT"' EXIT
for _ in $(seq 100); do grep -q '^serving ' "$OUT" && break; sleep 0.1; done
LINE=$(grep '^serving ' "$OUT") || { echo "gpib-diag serve printed no ports" >&2; exit 1; }
PROLOGIX=$(sed -n 's/.* prologix=\([^ ]*\).*/\1/p' <<<"$LINE")
VXI11=$(sed -n 's/.* vxi11=\([^ ]*\).*/\1/p' <<<"$LINE")
echo "$LINE"
"$VENV/bin/python" net/pyvisa_test.py "$PROLOGIX" "$VXI11" 22
