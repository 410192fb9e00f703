# Sourced by bench/targets/*.sh: builds gpib's net_clients bench (release, LTO) in
# the current CARGO_TARGET_DIR and prints the path of its executable.
net_clients_executable() {
  nice -n 10 cargo bench -q -p gpib --features sim,serve --bench net_clients --no-run --message-format=json 2>/dev/null |
    "${PY:-python3}" -c 'import json, sys
for t in sys.stdin:
    m = json.loads(t) if t.startswith("{") else {}
    if m.get("reason") == "compiler-artifact" and m.get("executable"): print(m["executable"])' | tail -1
}
