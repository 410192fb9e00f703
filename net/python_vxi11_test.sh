#!/usr/bin/env bash
# python-vxi11 (pinned, in a venv under target/) against `gpib-diag serve`'s VXI-11
# gateway: every method of its InterfaceDevice on gpib0, its Instrument on gpib0,22
# and inst0, and list_devices. Starts the server on free ports (the
# portmapper too: python-vxi11 asks it for the core port), parses the ports it prints,
# runs net/python_vxi11_test.py, stops the server.
#
# GPIB_DIAG: the gpib-diag to run (default: built here, release).
# Needs python3 with venv and pip, and PyPI (or a pip mirror).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON_VXI11=0.9
VENV=target/python-vxi11-venv
if ! "$VENV/bin/python" -c "import vxi11, sys; sys.exit(vxi11.__version__ != '$PYTHON_VXI11')" 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q "python-vxi11==$PYTHON_VXI11"
  # python-vxi11 imports xdrlib, which Python 3.13 removed: its copy from PyPI.
  if ! "$VENV/bin/python" -c "import xdrlib" 2>/dev/null; then
    "$VENV/bin/pip" install -q "standard-xdrlib==3.13.0"
  fi
fi
if [[ -z "${GPIB_DIAG:-}" ]]; then
  cargo build --release -q -p gpib-diag
  GPIB_DIAG=target/release/gpib-diag
fi
OUT=$(mktemp)
"$GPIB_DIAG" serve --bus bench --default-device 22 --port 0 --vxi11-port 0 --portmap-port 0 --hislip-port 0 >"$OUT" &
PID=$!
trap 'kill -INT $PID 2>/dev/null; wait $PID 2>/dev/null; rm -f "$OUT"' EXIT
for _ in $(seq 100); do grep -q '^serving ' "$OUT" && break; sleep 0.1; done
LINE=$(grep '^serving ' "$OUT") || { echo "gpib-diag serve printed no ports" >&2; exit 1; }
PORTMAP=$(sed -n 's/.* portmap=\([^ ]*\).*/\1/p' <<<"$LINE")
echo "$LINE"
"$VENV/bin/python" -W ignore::DeprecationWarning net/python_vxi11_test.py "${PORTMAP%:*}" "${PORTMAP##*:}"
