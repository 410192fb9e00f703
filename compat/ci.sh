#!/usr/bin/env bash
# compat/ci.sh -- the linux-gpib backend tested end to end against libgpib.so.0 built
# from the simulator (compat/), with no hardware and no real linux-gpib:
#
#   1. build the compatibility library and lay it out as libgpib.so.0 + libgpib.so;
#   2. check it exports every symbol of include/gpib/ib.h (what C programs and
#      linux-gpib-rs, through which the gpib crate's backend calls it, link against);
#   3. compile compat/tests/find_and_idn.c against the header, link it against the
#      library, run it and compare its output; the same in Python through ctypes, and
#      through linux-gpib's Python API when a `gpib` module (or gpib-ctypes) is there;
#   4. build the `linux-gpib` feature against the library (in its own target dir, the
#      library's directory given by GPIB_LIBGPIB_DIR, which gpib/build.rs turns into
#      the link directive), lint it, and
#      run the gpib unit tests, the hardware tests (on the simulated bench), the
#      examples (examples/*.rs with GPIB0 resource strings) and the shared integration
#      tests on the linux-gpib backend; serve two linux-gpib boards with
#      `gpib-diag serve --backend linux-gpib` and run PyVISA's checks through it
#      (net/pyvisa_test.sh);
#   5. linux-gpib-rs (bench/peers/linux-gpib-rs, a package of its own): its high-level API
#      against the library, the same answer as the gpib crate's; and what Device over
#      LinuxGpibBoard costs beside raw ibwrt/ibrd calls through the same library
#      (cargo bench --bench linux_gpib_overhead; informational).
#
# Needs only the Rust toolchain (with clippy), gcc and python3 (no libclang: with
# NO_LOCAL_LIB=1 linux-gpib-sys never runs bindgen). Target dirs: target-compat
# (library, C program) and target-linux-gpib (the feature build); override with
# COMPAT_TARGET_DIR / LINUX_GPIB_TARGET_DIR.
#
# Time: the release and lint (check) builds share their dependencies with the default
# build's through cargo's build-dir (SHARED_BUILD_DIR, default target/, where .ci/run's
# builds keep theirs): `shared cargo ...` below. Only the intermediate files are
# shared; each build's binaries and libraries stay in its own target dir. Test builds
# keep their own build-dir: tests/examples.rs finds the examples beside the test
# binary, which with a shared build-dir would be the build-dir's.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
export CARGO_TERM_COLOR=never
SHARED_BUILD_DIR="${SHARED_BUILD_DIR:-$ROOT/target}"
shared() { CARGO_BUILD_BUILD_DIR="$SHARED_BUILD_DIR" "$@"; }

section() { printf '\n== compat [%4d s]: %s\n' "$SECONDS" "$*"; }
fail() {
  printf 'compat/ci.sh: FAILED: %s\n' "$*" >&2
  exit 1
}

COMPAT_TARGET="${COMPAT_TARGET_DIR:-$ROOT/target-compat}"
LG_TARGET="${LINUX_GPIB_TARGET_DIR:-$ROOT/target-linux-gpib}"
LIBDIR="$COMPAT_TARGET/libgpib"
OUT="$COMPAT_TARGET/c"
mkdir -p "$LIBDIR" "$OUT"

section "build libgpib.so.0 (cargo build --release -p gpib-compat)"
CARGO_TARGET_DIR="$COMPAT_TARGET" shared cargo build --release -p gpib-compat
cp -f "$COMPAT_TARGET/release/libgpib.so" "$LIBDIR/libgpib.so.0"
ln -sf libgpib.so.0 "$LIBDIR/libgpib.so"
echo "installed $LIBDIR/libgpib.so.0 (and the libgpib.so link)"

section "exported symbols and soname"
soname="$(objdump -p "$LIBDIR/libgpib.so.0" | awk '$1 == "SONAME" { print $2 }')"
[[ "$soname" == "libgpib.so.0" ]] || fail "soname is '$soname', not libgpib.so.0"
nm -D --defined-only "$LIBDIR/libgpib.so.0" | awk '{ print $NF }' | sort -u >"$OUT/exported.txt"
python3 - "$ROOT/compat/include/gpib/ib.h" "$OUT/exported.txt" <<'PY'
import re, sys
header = open(sys.argv[1]).read()
exported = set(open(sys.argv[2]).read().split())
functions = set(re.findall(r"^extern\s+[\w\s\*]*?\b(\w+)\s*\(", header, re.M))
globals_ = set(re.findall(r"^extern\s+volatile\s+\w+(?:\s+\w+)?\s+(\w+)\s*;", header, re.M))
wanted = functions | globals_
missing = sorted(wanted - exported)
print(f"ib.h declares {len(functions)} functions and {len(globals_)} globals; "
      f"the library exports {len(wanted & exported)} of them, {len(exported - wanted)} other symbol(s)")
if len(functions) != 81 or len(globals_) != 4:
    sys.exit("unexpected count in ib.h (81 functions and 4 globals expected)")
if missing:
    sys.exit("missing: " + " ".join(missing))
PY

section "C: compat/tests/find_and_idn.c (gcc -std=c99 -Wall -Wextra -Wpedantic -Werror)"
gcc -std=c99 -Wall -Wextra -Wpedantic -Werror -I "$ROOT/compat/include" \
  "$ROOT/compat/tests/find_and_idn.c" -L "$LIBDIR" -lgpib -o "$OUT/find_and_idn"
objdump -p "$OUT/find_and_idn" | grep -q 'NEEDED *libgpib\.so\.0' ||
  fail "find_and_idn does not ask for libgpib.so.0"
export LD_LIBRARY_PATH="$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

echo "-- on compat/tests/idn_bench.toml (SCPI instruments at 5 and 22):"
GPIB_SIM_CONFIG="$ROOT/compat/tests/idn_bench.toml" "$OUT/find_and_idn" | tee "$OUT/find_and_idn.out"
diff -u "$ROOT/compat/tests/find_and_idn.expected" "$OUT/find_and_idn.out" ||
  fail "find_and_idn printed something else than compat/tests/find_and_idn.expected"

echo "-- on the default bench (the HP3565 at 11 has no *IDN?: the read times out, EABO = 6):"
set +e
"$OUT/find_and_idn" >"$OUT/bench.out" 2>"$OUT/bench.err"
status=$?
set -e
cat "$OUT/bench.err"
[[ $status -eq 1 ]] || fail "find_and_idn on bench exited $status, expected 1"
[[ "$(cat "$OUT/bench.err")" == "error: ibrd iberr=6" ]] || fail "unexpected error on bench"
[[ ! -s "$OUT/bench.out" ]] || fail "find_and_idn printed before failing on bench"

section "C: compat/tests/ibfind_gpib_conf.c (ibfind by the names of linux-gpib's example gpib.conf, IB_CONFIG)"
gcc -std=c99 -Wall -Wextra -Wpedantic -Werror -I "$ROOT/compat/include" \
  "$ROOT/compat/tests/ibfind_gpib_conf.c" -L "$LIBDIR" -lgpib -o "$OUT/ibfind_gpib_conf"
IB_CONFIG="$ROOT/gpib/configs/gpib.conf.example" GPIB_SIM_CONFIG="$ROOT/gpib/configs/gpib-conf-sim.toml" \
  "$OUT/ibfind_gpib_conf" | tee "$OUT/ibfind_gpib_conf.out"
diff -u "$ROOT/compat/tests/ibfind_gpib_conf.expected" "$OUT/ibfind_gpib_conf.out" ||
  fail "ibfind_gpib_conf printed something else than compat/tests/ibfind_gpib_conf.expected"

section "Python: compat/tests/find_and_idn.py (ctypes, by soname)"
GPIB_SIM_CONFIG="$ROOT/compat/tests/idn_bench.toml" python3 "$ROOT/compat/tests/find_and_idn.py" |
  diff -u "$ROOT/compat/tests/find_and_idn.expected" - ||
  fail "find_and_idn.py printed something else than compat/tests/find_and_idn.expected"
echo "same output as the C program"

section "gpib-ctypes 0.3.0 (linux-gpib's Python \`gpib\` API over ctypes) in a venv"
VENV="$COMPAT_TARGET/venv"
[[ -x "$VENV/bin/python" ]] || python3 -m venv "$VENV"
"$VENV/bin/pip" install -q --disable-pip-version-check gpib-ctypes==0.3.0
PYTHON="$VENV/bin/python"

section "Python: compat/tests/python_bindings.py (linux-gpib's \`gpib\` module, or gpib-ctypes)"
set +e
GPIB_SIM_CONFIG="$ROOT/compat/tests/idn_bench.toml" "$PYTHON" "$ROOT/compat/tests/python_bindings.py" >"$OUT/bindings.out"
status=$?
set -e
if [[ $status -eq 77 ]]; then
  echo "skipped: no Python module \`gpib\` nor gpib_ctypes here (pip install gpib-ctypes to run it)"
else
  [[ $status -eq 0 ]] || fail "python_bindings.py exited $status"
  diff -u "$ROOT/compat/tests/find_and_idn.expected" "$OUT/bindings.out" ||
    fail "python_bindings.py printed something else than compat/tests/find_and_idn.expected"
  echo "same output as the C program"
fi

section "compat/README.md's marked blocks as written: install into ~/gpib-sim, the C program, Python (HOME is a scratch folder)"
# Checked by diag/tests/docs.rs to be here: the README's set-up commands and what it shows
# them printing are run, not copied.
README_HOME="$OUT/readme-home"
rm -rf "$README_HOME"
mkdir -p "$README_HOME"
python3 "$ROOT/compat/scripts/readme_blocks.py" "$ROOT/compat/README.md" "$OUT/readme.sh" "$OUT/readme.expected"
(
  unset CARGO_TARGET_DIR GPIB_SIM_CONFIG LD_LIBRARY_PATH
  # rustup and cargo keep their homes under the real HOME.
  export RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}" CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}"
  # The README's release build into target/ with the shared build-dir: the library
  # built above, copied, instead of a second build of it.
  export CARGO_BUILD_BUILD_DIR="$SHARED_BUILD_DIR"
  HOME="$README_HOME" PYTHON="$PYTHON" bash "$OUT/readme.sh"
) >"$OUT/readme.out"
rm -f "$ROOT/find_and_idn"
diff -u "$OUT/readme.expected" "$OUT/readme.out" ||
  fail "compat/README.md's blocks printed something else than the README shows"
echo "the README's blocks ran and printed what it shows ($(wc -l <"$OUT/readme.out") lines)"

section "linux-gpib feature against libgpib.so.0 (CARGO_TARGET_DIR=$LG_TARGET)"
# linux-gpib-rs's sys crate with NO_LOCAL_LIB: its shipped bindings (no bindgen, no
# libclang, no installed linux-gpib) and no link directive of its own, so the library
# is named here. linux-gpib-sys caches that choice per build dir: these (this target
# dir and the shared build-dir) only ever build it with NO_LOCAL_LIB=1.
export NO_LOCAL_LIB=1
# The README names the library with RUSTFLAGS; here gpib/build.rs does, from
# GPIB_LIBGPIB_DIR (`-L native=DIR -l dylib=gpib` for gpib and all that links it):
# RUSTFLAGS would change every dependency's fingerprint, and none of the default
# build's could be reused.
export GPIB_LIBGPIB_DIR="$LIBDIR"
# rustdoc takes no -l: doc tests get the library as a trailing linker argument.
export RUSTDOCFLAGS="-L native=$LIBDIR -C link-arg=-lgpib"
# A target dir of its own: with the workspace's, cargo would swap the binaries and
# examples of the two feature sets under one name and call the other's fresh (an
# example built here would then need libgpib.so.0 where the workspace's tests run it).
export CARGO_TARGET_DIR="$LG_TARGET"

section "cargo clippy -p gpib -p gpib-suite --features linux-gpib --all-targets -- -D warnings"
shared cargo clippy -p gpib --features linux-gpib --all-targets -- -D warnings
shared cargo clippy -p gpib-suite --features linux-gpib --all-targets -- -D warnings

section "gpib-diag --features linux-gpib: clippy, CLI tests, io-test through libgpib"
shared cargo clippy -p gpib-diag --features linux-gpib --all-targets -- -D warnings
# The unit tests and the test binaries that exercise the feature (their sources test
# linux-gpib: cfg(feature = "linux-gpib"), --backend linux-gpib). The others (network,
# sigrok, trace_*, discover, hostile, ...) never reach the backend: with the feature
# they repeated the README's test command's run of them (about 100 s).
cargo test -p gpib-diag --features linux-gpib --bins --test cli --test docs --test doctor --test hardware_path
shared cargo build --release -p gpib-diag --features linux-gpib
echo "-- the documents' hardware-path transcripts: doctor and calibrate through libgpib in real time (numbers vary; words, units and lines as shown)"
mkdir -p "$OUT/transcripts"
(cd "$OUT/transcripts" && python3 "$ROOT/compat/scripts/hardware_transcripts.py" "$LG_TARGET/release/gpib-diag" "$ROOT/README.md" "$ROOT"/docs/*.md) ||
  fail "a hardware-path transcript of the documents printed something else"
echo "-- docs/gateway.md's install command, into a scratch root (the release build above is reused)"
shared cargo install --locked --path diag --features linux-gpib --root "$OUT/install" 2>&1 | tail -n 2
# (Not `tee /dev/stderr`: where standard error is a file, that reopens and truncates it.)
installed="$("$OUT/install/bin/gpib-diag" --version)"
echo "$installed"
grep -q '(features: linux-gpib)' <<<"$installed" ||
  fail "the installed gpib-diag does not have the linux-gpib feature"
echo "-- gpib-diag io-test --backend linux-gpib 400000 (GPIB_SIM_CONFIG=hp9000-350: linux-gpib-rs -> libgpib.so.0 -> simulator; every write is read back and compared)"
GPIB_SIM_CONFIG=hp9000-350 "$LG_TARGET/release/gpib-diag" io-test --backend linux-gpib 400000 | tee "$OUT/io_test_linux_gpib.txt"
grep -c '^transfer size: 400000$' "$OUT/io_test_linux_gpib.txt" | grep -qx 2 ||
  fail "io-test through linux-gpib did not move 400000 bytes each way"
echo "-- PyVISA through gpib-diag serve --backend linux-gpib --board 0,1 (pyvisa-py -> VXI-11, HiSLIP and Prologix -> serve -> linux-gpib backend -> libgpib.so.0 -> simulator; the shared checks of net/pyvisa_test.py on gpib0 and gpib1)"
GPIB_SIM_CONFIG="$ROOT/compat/tests/two_boards.toml" GPIB_DIAG="$LG_TARGET/release/gpib-diag" PYVISA_BOARDS=0,1 \
  PYVISA_IDN='gpib1,7=ACME,COUNTER-7,1,1.0;gpib0,5=ACME,SCOPE-5,1234,2.1' \
  net/pyvisa_test.sh --backend linux-gpib --board 0,1 --default-device 22 2>&1 | tee "$OUT/serve_linux_gpib.txt"
grep -q '^gpib-diag serve: gpib0 = linux-gpib GPIB0::INTFC, gpib1 = linux-gpib GPIB1::INTFC' "$OUT/serve_linux_gpib.txt" ||
  fail "gpib-diag serve did not serve linux-gpib's boards 0 and 1"
grep -c 'all checks passed' "$OUT/serve_linux_gpib.txt" | grep -qx 6 ||
  fail "PyVISA's checks did not all pass through serve --backend linux-gpib (Prologix, VXI-11 gpib0 and gpib1, HiSLIP hislip_gpib0_22, hislip_gpib1_22 and hislip0)"
echo "-- gpib-diag io-test --backend linux-gpib --device voltmeter (a name from linux-gpib's example gpib.conf, IB_CONFIG)"
IB_CONFIG="$ROOT/gpib/configs/gpib.conf.example" "$LG_TARGET/release/gpib-diag" io-test --backend linux-gpib \
  --device voltmeter 4096 | grep -c '^transfer size: 4096$' | grep -qx 2 ||
  fail "io-test --device voltmeter through gpib.conf did not move 4096 bytes each way"
echo "-- compat/README.md's real-time io-test (GPIB_SIM_REALTIME=1: the modelled time passes as wall time)"
GPIB_SIM_CONFIG=hp9000-350 GPIB_SIM_REALTIME=1 cargo run -p gpib-diag --features linux-gpib -- io-test --backend linux-gpib --device 11 4000 |
  tee "$OUT/io_test_realtime.txt"
grep -c '^transfer size: 4000$' "$OUT/io_test_realtime.txt" | grep -qx 2 ||
  fail "the real-time io-test through linux-gpib did not move 4000 bytes each way"
echo "-- the hardware path behaves like hardware: the 1988 machine's programmed I/O keeps a core busy, in the modelled time"
GPIB_SIM_CONFIG=hp9000-350 GPIB_SIM_REALTIME=1 "$LG_TARGET/release/gpib-diag" io-test --backend linux-gpib \
  --device 11 --format json 4000 >"$OUT/realtime.json"
"$LG_TARGET/release/gpib-diag" io-test --bus hp9000-350 --format json 4000 >"$OUT/virtual.json"
python3 - "$OUT/realtime.json" "$OUT/virtual.json" <<'PY' || fail "the real-time hardware path does not behave like the model"
import json, sys
real = json.load(open(sys.argv[1]))["records"]
model = json.load(open(sys.argv[2]))["records"]
for r, m in zip(real, model):
    ratio = r["seconds"] / m["seconds"]
    print(f'{r["direction"]}: {r["seconds"]:.4f} s wall against {m["seconds"]:.4f} s modelled '
          f'({ratio:.3f}x), CPU {100 * r["cpu_utilisation"]:.0f} % of one core (modelled {100 * m["cpu_utilisation"]:.0f} %)')
    # Wall time: the modelled time, plus what the machine adds (shared and noisy here).
    assert 0.98 <= ratio <= 1.5, ratio
    # Programmed I/O: the calling thread is busy for the transfer, as a real driver's is.
    assert r["cpu_utilisation"] >= 0.5, r["cpu_utilisation"]
PY
echo "-- gpib-diag contention --backend linux-gpib (measured: wall clock, /proc/stat; two devices of the bench)"
GPIB_SIM_CONFIG=bench "$LG_TARGET/release/gpib-diag" contention --backend linux-gpib --devices 0:22,0:11 \
  --seconds 0.3 --format json > "$OUT/contention_linux_gpib.json"
python3 - "$OUT/contention_linux_gpib.json" <<'PY' || fail "contention through linux-gpib gave no curve"
import json, sys
d = json.load(open(sys.argv[1]))
pts = d["points"]
assert [p["devices"] for p in pts] == [1, 2], pts
assert all(p["aggregate_bytes_per_second"] > 0 for p in pts), pts
assert all(0.0 <= p["cpu_utilisation"] <= 1.0 for p in pts), pts
print("contention through linux-gpib:", [round(p["aggregate_bytes_per_second"]) for p in pts], "B/s")
PY

section "cargo doc -p gpib --features linux-gpib (warnings are errors)"
RUSTDOCFLAGS="-D warnings" shared cargo doc -p gpib --features linux-gpib --no-deps

section "cargo test -p gpib --features linux-gpib (unit and doc tests; hardware tests skip)"
cargo test -p gpib --features linux-gpib

section "hardware tests on the simulated bench (GPIB_HW_BOARD=0, then gpib0; GPIB_HW_ADDRESS=22)"
GPIB_HW_BOARD=0 GPIB_HW_ADDRESS=22 cargo test -p gpib --features linux-gpib --lib hardware
GPIB_HW_BOARD=gpib0 GPIB_HW_ADDRESS=22 cargo test -p gpib --features linux-gpib --lib hardware

section "the examples with --features linux-gpib through libgpib (GPIB0::N::INSTR, the library's default bench)"
# tests/examples.rs runs each example program with a GPIB0 resource string, which
# ResourceManager opens on linux-gpib's board 0: this library, on its default bench in
# real time (GPIB_SIM_REALTIME=1). GPIB_SIM_CONFIG is left unset for them (with it,
# from_env would open the in-process simulator instead).
cargo build --features linux-gpib --examples
GPIB_REQUIRE_EXAMPLES=1 cargo test --test tests --features linux-gpib examples::examples_run_on_linux_gpib -- --nocapture

section "shared integration tests on the linux-gpib backend (cargo test --test tests --features linux-gpib linux_gpib open::)"
# The bodies' linux_gpib variants, linux_gpib_rs:: and the gpib.conf and gpib::open tests
# the feature adds or changes; the rest of the binary (the simulator's and the network
# backends', about 45 s) is the README's test command's, unchanged by the feature. The
# example gpib.conf needs IB_CONFIG: below.
cargo test --test tests --features linux-gpib -- linux_gpib open:: --skip gpib_conf::linux_gpib_opens_the_example_by_name

section "linux-gpib backend on linux-gpib's example gpib.conf (IB_CONFIG; devices opened by name)"
IB_CONFIG="$ROOT/gpib/configs/gpib.conf.example" GPIB_SIM_CONFIG="$ROOT/gpib/configs/gpib-conf-sim.toml" \
  cargo test --test tests --features linux-gpib gpib_conf::linux_gpib_opens_the_example_by_name -- --exact --nocapture 2>&1 |
  tee "$OUT/gpib_conf_linux_gpib.txt"
grep -q '^test gpib_conf::linux_gpib_opens_the_example_by_name ... ok$' "$OUT/gpib_conf_linux_gpib.txt" ||
  fail "the example gpib.conf test did not run and pass on the linux-gpib backend"

section "linux-gpib-rs against libgpib.so.0 (bench/peers/linux-gpib-rs: NO_LOCAL_LIB=1, its own target dir)"
# NO_LOCAL_LIB=1 (set above) as for the feature build; a target dir of its own (a
# package outside the workspace, with its own lock file), the shared build-dir: its
# release profile is the workspace's, so the dependencies the release builds above
# made are reused (the bench profile's fat LTO took 48 s of CI to build; that build is
# bench/targets/3-hw-path.sh's, where the figures count).
PEER=(--manifest-path "$ROOT/bench/peers/linux-gpib-rs/Cargo.toml")
export CARGO_TARGET_DIR="$LG_TARGET/peer"
GPIB_HW_BOARD=0 GPIB_HW_ADDRESS=22 shared cargo test "${PEER[@]}" --profile release -- --nocapture 2>&1 | tee "$OUT/peer_linux_gpib_rs.txt"
grep -q '^test linux_gpib_rs_and_the_gpib_crate_get_the_same_answer ... ok$' "$OUT/peer_linux_gpib_rs.txt" ||
  fail "linux-gpib-rs's high-level API did not run against the library"
grep -q 'skipped' "$OUT/peer_linux_gpib_rs.txt" && fail "the linux-gpib-rs test skipped"

section "wrapper overhead: Device over LinuxGpibBoard vs raw ibwrt/ibrd, both through this libgpib (informational)"
# Prints the table (ratio = our time per op / raw time per op); nothing is asserted
# about the ratios. About 15 s of timed runs, on the release build above (without the
# bench profile's link-time optimisation: bench/compare.sh's target 3 has those figures).
shared cargo bench "${PEER[@]}" --profile release --bench linux_gpib_overhead -- --json "$OUT/linux_gpib_overhead.json"

section "done"
