#!/usr/bin/env bash
# pyvisa-sim (pinned, in a venv under target/) against our simulator's pyvisa-sim
# devices: net/pyvisa_sim_diff.py sends the same queries to both through PyVISA and
# compares every answer, for pyvisa-sim's default.yaml and the YAML files of its test
# suite (the installed package ships them under pyvisa_sim/testsuite/fixtures).
# Needs python3 with venv and pip, and PyPI (or a pip mirror).
set -euo pipefail
cd "$(dirname "$0")/.."
PYVISA=1.15.0
PYVISA_PY=0.8.0
PYVISA_SIM=0.7.1
VENV=target/pyvisa-sim-venv
if ! "$VENV/bin/python" -c "import pyvisa_sim, pyvisa_py, sys; sys.exit(pyvisa_sim.__version__ != '$PYVISA_SIM')" 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q "pyvisa==$PYVISA" "pyvisa-py==$PYVISA_PY" "pyvisa-sim==$PYVISA_SIM"
fi
cargo build --release -q -p gpib-diag
PKG=$("$VENV/bin/python" -c "import os, pyvisa_sim; print(os.path.dirname(pyvisa_sim.__file__))")
mapfile -t FILES < <(find "$PKG" -name '*.yaml' | sort)
[[ ${#FILES[@]} -gt 0 ]] || { echo "no YAML files in $PKG" >&2; exit 1; }
"$VENV/bin/python" net/pyvisa_sim_diff.py target/release/gpib-diag "${FILES[@]}"
