#!/usr/bin/env bash
# Target 8.1: what linking the library costs an app. A crate that depends on `gpib`
# with its default features (the typed layer and the network backends) and calls
# gpib::open + query, against a crate that
# depends on thiserror and log (the core's own dependencies), each built in release
# from an empty target folder, in turn: <= 4x (median of per-run ratios). (8.2, the
# real-time mode, is measured in 3-hw-path.sh.)
set -euo pipefail
ROOT=$PWD
APPS=$OUT/apps
rm -rf "$APPS"
mkdir -p "$APPS/with-gpib/src" "$APPS/baseline/src"
cat >"$APPS/with-gpib/Cargo.toml" <<TOML
[package]
name = "with-gpib"
version = "0.1.0"
edition = "2021"
[dependencies]
gpib = { path = "$ROOT/gpib" }
[workspace]
TOML
cat >"$APPS/with-gpib/src/main.rs" <<'RS'
fn main() -> Result<(), gpib::Error> {
    let arg = std::env::args().nth(1).unwrap_or_else(|| "GPIB0::22::INSTR".into());
    let dmm = gpib::open(&arg)?;
    println!("{}", dmm.query("*IDN?")?);
    Ok(())
}
RS
cat >"$APPS/baseline/Cargo.toml" <<'TOML'
[package]
name = "baseline"
version = "0.1.0"
edition = "2021"
[dependencies]
thiserror = "2"
log = "0.4"
[workspace]
TOML
cat >"$APPS/baseline/src/main.rs" <<'RS'
#[derive(Debug, thiserror::Error)]
#[error("no instrument at {0}")]
struct NotFound(String);
fn main() -> Result<(), NotFound> {
    log::info!("starting");
    Err(NotFound(std::env::args().nth(1).unwrap_or_default()))
}
RS
runs=2
[[ "$QUICK" == 1 ]] && runs=1
: >"$OUT/build_times.txt"
for _ in $(seq "$runs"); do
  for app in with-gpib baseline; do
    rm -rf "$APPS/$app/target"
    start=$EPOCHREALTIME
    (cd "$APPS/$app" && CARGO_TARGET_DIR="$APPS/$app/target" cargo build -q --release >&2)
    echo "$app $(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }')" >>"$OUT/build_times.txt"
  done
done
# The app runs: with the default features (no simulator, no linux-gpib) a GPIB
# resource is refused with a typed error that says which feature opens it.
"$APPS/with-gpib/target/release/with-gpib" GPIB0::22::INSTR >"$OUT/with_gpib.out" 2>&1 && exit 1
cat "$OUT/with_gpib.out" >&2
packages=$(cd "$APPS/with-gpib" && cargo tree -q -e normal,build --prefix none | sort -u | wc -l)
"$PY" - "$OUT/build_times.txt" "$packages" <<'PY'
import statistics, sys
from line import emit
t = {}
for l in open(sys.argv[1]):
    app, s = l.split()
    t.setdefault(app, []).append(float(s))
ratios = [a / b for a, b in zip(t["with-gpib"], t["baseline"])]
r = statistics.median(ratios)
emit("8.1", f"clean release build of an app on gpib (default features; {sys.argv[2]} packages) vs thiserror + log",
     "s", t["with-gpib"], "<= 4x (median of per-run ratios)", r <= 4, peer=t["baseline"], ratio=r)
PY
