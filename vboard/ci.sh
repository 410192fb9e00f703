#!/usr/bin/env bash
# vboard/ci.sh -- linux-gpib's own library as the judge of the hardware path:
#
#   1. build linux-gpib's user library (libgpib.so.0, gpib_config, ibtest, ibterm) from
#      the shared sources as they are (../shared/linux-gpib/linux-gpib-user.tar.gz);
#   2. build the virtual board (libgpib_vboard.so) and bring board 0 up with linux-gpib's
#      own gpib_config on vboard/tests/gpib.conf, as a user's system does;
#   3. the same C program on both libraries: compat's libgpib.so.0 and linux-gpib's over
#      the virtual board, the same output;
#   4. the gpib crate's linux-gpib backend (linux-gpib-rs -> linux-gpib's libgpib ->
#      virtual board): every shared integration test body, the hardware tests, the
#      examples, io-test, doctor and calibrate;
#   5. the differential fidelity run and the gpib.conf comparison
#      (vboard/fidelity/ci.sh), when present.
#
# Runs after compat/ci.sh, whose linux-gpib feature build (target-linux-gpib, linked
# against compat's library by soname) it reuses: the same binaries, with linux-gpib's
# library found first at run time. Needs the Debian packages autoconf automake libtool
# flex bison (installed when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
export CARGO_TERM_COLOR=never

section() { printf '\n== vboard [%4d s]: %s\n' "$SECONDS" "$*"; }
fail() {
  printf 'vboard/ci.sh: FAILED: %s\n' "$*" >&2
  exit 1
}

COMPAT_TARGET="${COMPAT_TARGET_DIR:-$ROOT/target-compat}"
LG_TARGET="${LINUX_GPIB_TARGET_DIR:-$ROOT/target-linux-gpib}"
WORK="${VBOARD_WORK_DIR:-$ROOT/target-vboard}"
SHARED="${SHARED_DIR:-$ROOT/../shared}"
# The release builds share their dependencies with the default build's (and with
# compat/ci.sh's) through cargo's build-dir; binaries stay in each target dir.
SHARED_BUILD_DIR="${SHARED_BUILD_DIR:-$ROOT/target}"
ARCHIVE="$SHARED/linux-gpib/linux-gpib-user.tar.gz"
mkdir -p "$WORK"

section "linux-gpib's user library from $ARCHIVE"
[[ -f "$ARCHIVE" ]] || fail "no $ARCHIVE: linux-gpib's sources are needed to test against its library"
missing=()
for tool in autoconf automake libtoolize flex bison; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if ((${#missing[@]})); then
  sudo=""
  if [[ "$(id -u)" -ne 0 ]]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq autoconf automake libtool flex bison >/dev/null
fi
LG="$WORK/linux-gpib-user"
stamp="$(sha256sum "$ARCHIVE" | cut -c1-16)"
if [[ ! -f "$LG/.built-$stamp" ]]; then
  rm -rf "$LG"
  tar -xzf "$ARCHIVE" -C "$WORK"
  (
    cd "$LG"
    ./bootstrap >/dev/null 2>&1
    ./configure --disable-guile-binding --disable-perl-binding --disable-php-binding \
      --disable-python-binding --disable-tcl-binding --disable-documentation >/dev/null
    make -j2 -C include >/dev/null
    make -j2 -C lib >/dev/null 2>&1
    make -j2 -C examples >/dev/null 2>&1
  )
  touch "$LG/.built-$stamp"
fi
REAL="$LG/lib/.libs"
GPIB_CONFIG="$LG/lib/gpib_config/.libs/gpib_config"
for f in "$REAL/libgpib.so.0" "$GPIB_CONFIG" "$LG/examples/ibtest" "$LG/examples/ibterm"; do
  [[ -x "$f" || -f "$f" ]] || fail "the build of linux-gpib left no $f"
done
echo "linux-gpib $(awk -F'[][]' '/AC_INIT/ { print $4; exit }' "$LG/configure.ac"): $REAL/libgpib.so.0"

section "the virtual board (cargo build --release -p gpib-vboard)"
CARGO_TARGET_DIR="$COMPAT_TARGET" CARGO_BUILD_BUILD_DIR="$SHARED_BUILD_DIR" cargo build --release -p gpib-vboard
VBOARD="$COMPAT_TARGET/release/libgpib_vboard.so"
COMPAT="$COMPAT_TARGET/libgpib"
[[ -f "$COMPAT/libgpib.so.0" ]] || fail "no compat library in $COMPAT: run compat/ci.sh first"

# On linux-gpib's library over the virtual board: what every command below runs with.
export GPIB_VBOARD_STATE="$WORK/state" IB_CONFIG="$ROOT/vboard/tests/gpib.conf"
rm -rf "$GPIB_VBOARD_STATE"
real() { LD_LIBRARY_PATH="$REAL" LD_PRELOAD="$VBOARD" "$@"; }

OUT="$WORK/out"
mkdir -p "$OUT"
gcc -std=c99 -Wall -Wextra -Werror -I "$LG/include" "$ROOT/compat/tests/find_and_idn.c" \
  -L "$REAL" -lgpib -o "$OUT/find_and_idn"

section "docs/linux-gpib-programs.md's commands: linux-gpib's gpib_config, then a program, over the virtual board"
(
  cd "$OUT"
  export PATH="$(dirname "$GPIB_CONFIG"):$PATH" LD_LIBRARY_PATH="$REAL"
  export LD_PRELOAD="$VBOARD" GPIB_SIM_CONFIG="$ROOT/compat/tests/idn_bench.toml"
  gpib_config --minor 0
  ./find_and_idn >"$OUT/real.out"
) || fail "gpib_config or find_and_idn failed on linux-gpib's library"
grep -qx 'online 1' "$GPIB_VBOARD_STATE/gpib0" || fail "gpib_config did not bring board 0 online"
grep -qx 'interface ni_pci' "$GPIB_VBOARD_STATE/gpib0" || fail "gpib_config did not set the board type"
echo "board 0 online: $(tr '\n' ' ' <"$GPIB_VBOARD_STATE/gpib0")"

section "bad arguments: the errno linux-gpib's kernel layer gives, never a crash (vboard/tests/bad_arguments.c)"
gcc -std=c99 -D_DEFAULT_SOURCE -Wall -Wextra -Werror -I "$LG/include" "$ROOT/vboard/tests/bad_arguments.c" -o "$OUT/bad_arguments"
GPIB_VBOARD_CONFIG=bench LD_PRELOAD="$VBOARD" "$OUT/bad_arguments" >"$OUT/bad_arguments.txt" ||
  { cat "$OUT/bad_arguments.txt"; fail "a bad argument got a wrong answer"; }
echo "$(grep -c '^ok ' "$OUT/bad_arguments.txt") checks: $(tail -n 1 "$OUT/bad_arguments.txt")"

section "C: compat/tests/find_and_idn.c on both libraries (compiled against linux-gpib's own ib.h)"
(unset IB_CONFIG; LD_LIBRARY_PATH="$COMPAT" GPIB_SIM_CONFIG="$ROOT/compat/tests/idn_bench.toml" "$OUT/find_and_idn") >"$OUT/compat.out" ||
  fail "find_and_idn failed on compat"
diff -u "$ROOT/compat/tests/find_and_idn.expected" "$OUT/real.out" ||
  fail "find_and_idn on linux-gpib's library printed something else than compat/tests/find_and_idn.expected"
diff -u "$OUT/compat.out" "$OUT/real.out" || fail "the two libraries disagree"
cat "$OUT/real.out"
echo "the same output on both libraries"

section "linux-gpib's own Python extension (language/python, built here) on both libraries: compat/tests/python_bindings.py"
PYB="$LG/language/python"
if [[ ! -f "$LG/.python-built-$stamp" ]]; then
  (cd "$PYB" && python3 setup.py -q build_ext --inplace >/dev/null 2>&1) && touch "$LG/.python-built-$stamp"
fi
if ls "$PYB"/gpib*.so >/dev/null 2>&1; then
  PYTHONPATH="$PYB" GPIB_VBOARD_CONFIG="$ROOT/compat/tests/idn_bench.toml" real python3 "$ROOT/compat/tests/python_bindings.py" >"$OUT/python-real.txt" ||
    fail "linux-gpib's Python extension failed on its library"
  (unset IB_CONFIG; PYTHONPATH="$PYB" LD_LIBRARY_PATH="$COMPAT" GPIB_SIM_CONFIG="$ROOT/compat/tests/idn_bench.toml" python3 "$ROOT/compat/tests/python_bindings.py") >"$OUT/python-compat.txt" ||
    fail "linux-gpib's Python extension failed on compat"
  diff -u "$ROOT/compat/tests/find_and_idn.expected" "$OUT/python-real.txt" || fail "the Python extension printed something else on linux-gpib's library"
  diff -u "$OUT/python-compat.txt" "$OUT/python-real.txt" || fail "the Python extension printed something else on the two libraries"
  echo "linux-gpib's gpib module: the same output on both libraries, as find_and_idn"
else
  echo "skipped: linux-gpib's Python extension did not build here (python3 headers or setuptools missing)"
fi

section "linux-gpib's own programs through a terminal: ibtest and ibterm (vboard/tests/drive_programs.py) on both libraries"
EXAMPLES="$LG/examples/.libs"
GPIB_VBOARD_CONFIG=bench real python3 "$ROOT/vboard/tests/drive_programs.py" "$EXAMPLES" >"$OUT/programs-real.txt" ||
  fail "ibtest or ibterm failed on linux-gpib's library: $(tail -n 5 "$OUT/programs-real.txt")"
(unset IB_CONFIG; LD_LIBRARY_PATH="$COMPAT" GPIB_SIM_CONFIG=bench python3 "$ROOT/vboard/tests/drive_programs.py" "$EXAMPLES") \
  >"$OUT/programs-compat.txt" || fail "ibtest or ibterm failed on compat: $(tail -n 5 "$OUT/programs-compat.txt")"
diff -u "$OUT/programs-compat.txt" "$OUT/programs-real.txt" || fail "ibtest or ibterm printed something else on the two libraries"
for want in "received string: 'SIMULATED,SCPI-DMM,0,1.0" "REN on" "ibterm>SIMULATED,SCPI-DMM,0,1.0" "ibterm: Done."; do
  grep -qF -- "$want" "$OUT/programs-real.txt" || fail "the programs' transcript has no '$want'"
done
echo "ibtest (a device and the board) and ibterm: $(wc -l <"$OUT/programs-real.txt") lines, the same on both libraries"

# The linux-gpib feature's binaries, built by compat/ci.sh against compat's library (by
# soname): the same files run here with linux-gpib's library found first. The same
# environment as there (GPIB_LIBGPIB_DIR: gpib/build.rs's link directive), or cargo
# would rebuild them.
lg_cargo() {
  NO_LOCAL_LIB=1 GPIB_LIBGPIB_DIR="$COMPAT" RUSTDOCFLAGS="-L native=$COMPAT -C link-arg=-lgpib" \
    CARGO_TARGET_DIR="$LG_TARGET" cargo "$@"
}
# test_binary ARGS...: the path of the test executable `cargo test ARGS --no-run` builds.
test_binary() {
  lg_cargo test "$@" --no-run --message-format=json 2>/dev/null |
    python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        print(m["executable"])' | tail -n 1
}
# run_tests NAME BINARY ARGS...: runs a test binary on linux-gpib's library and checks it
# ran tests and passed.
run_tests() {
  local name="$1" bin="$2" log
  shift 2
  log="$OUT/$name.txt"
  [[ -x "$bin" ]] || fail "no test binary for $name"
  if ! real "$bin" "$@" >"$log" 2>&1; then
    tail -n 60 "$log" >&2
    fail "$name failed on linux-gpib's library"
  fi
  grep -E '^test result: ok\. [1-9][0-9]* passed' "$log" | tail -n 1 | sed "s/^/$name: /"
}

section "the gpib crate's linux-gpib backend through linux-gpib's library: every shared test body (tests/ on board 0, the bench)"
# The shared bodies run on the simulator and on linux-gpib's board 0; here board 0 is the
# virtual board over the bench (GPIB_VBOARD_CONFIG), in real time. The example-gpib.conf
# test needs a board set up from that file: it runs on its own below.
export GPIB_VBOARD_CONFIG=bench
TESTS="$(test_binary --test tests --features linux-gpib)"
# Only the tests that reach libgpib (the rest of the binary is the simulator's, run by
# the README's test command). In real time, as a board runs, all but the two 10 MB
# block round trips (40 s of wall time at the bench's 1 MB/s); then every body once
# more with the bus in virtual time (GPIB_SIM_REALTIME=0), those two included.
run_tests shared-tests "$TESTS" linux_gpib --skip gpib_conf::linux_gpib_opens_the_example_by_name \
  --skip blocks::definite_blocks_round_trip --skip blocks::hp3565_binary_blocks
GPIB_SIM_REALTIME=0 run_tests shared-tests-virtual-time "$TESTS" linux_gpib \
  --skip gpib_conf::linux_gpib_opens_the_example_by_name

section "hardware tests of the gpib crate (GPIB_HW_BOARD=0 and gpib0, GPIB_HW_ADDRESS=22)"
UNIT="$(test_binary -p gpib --features linux-gpib --lib)"
GPIB_HW_BOARD=0 GPIB_HW_ADDRESS=22 run_tests hardware-0 "$UNIT" hardware
GPIB_HW_BOARD=gpib0 GPIB_HW_ADDRESS=22 run_tests hardware-gpib0 "$UNIT" hardware

section "the examples through linux-gpib's library (GPIB0::N::INSTR resource strings)"
lg_cargo build -q --features linux-gpib --examples
GPIB_REQUIRE_EXAMPLES=1 run_tests examples "$TESTS" examples::examples_run_on_linux_gpib --nocapture

section "linux-gpib's example gpib.conf: gpib_config, then devices by name"
(
  export IB_CONFIG="$ROOT/gpib/configs/gpib.conf.example" GPIB_VBOARD_CONFIG="$ROOT/gpib/configs/gpib-conf-sim.toml"
  export GPIB_VBOARD_STATE="$WORK/state-example"
  rm -rf "$GPIB_VBOARD_STATE"
  real "$GPIB_CONFIG" --minor 0 || fail "gpib_config failed on the example gpib.conf"
  run_tests example-gpib-conf "$TESTS" gpib_conf::linux_gpib_opens_the_example_by_name --exact
)

section "gpib-diag through linux-gpib's library: io-test, doctor and calibrate"
DIAG="$LG_TARGET/release/gpib-diag"
[[ -x "$DIAG" ]] || CARGO_BUILD_BUILD_DIR="$SHARED_BUILD_DIR" lg_cargo build -q --release -p gpib-diag --features linux-gpib
GPIB_VBOARD_CONFIG=hp9000-350 real "$DIAG" io-test --backend linux-gpib --device 11 4000 | tee "$OUT/io_test.txt"
grep -c '^transfer size: 4000$' "$OUT/io_test.txt" | grep -qx 2 ||
  fail "io-test through linux-gpib's library did not move 4000 bytes each way"
echo "-- doctor and calibrate through linux-gpib's library in real time: the planted causes named, calibrate's held-out sizes as the model predicts them (diag/tests/hardware_path.rs)"
HWP="$(test_binary -p gpib-diag --features linux-gpib --test hardware_path)"
run_tests doctor-calibrate "$HWP" --test-threads 1
echo "-- the documents' hardware-path transcripts (doctor, calibrate) on linux-gpib's library"
mkdir -p "$OUT/transcripts"
(cd "$OUT/transcripts" && VBOARD_MIRROR=1 real python3 "$ROOT/compat/scripts/hardware_transcripts.py" "$DIAG" "$ROOT/README.md" "$ROOT"/docs/*.md) ||
  fail "a hardware-path transcript printed something else on linux-gpib's library"

if [[ -x "$ROOT/vboard/fidelity/ci.sh" ]]; then
  section "differential fidelity of compat against linux-gpib's library, and the gpib.conf comparison"
  # A fixed seed, so that a run is reproducible; every difference of seed 20261205 is
  # judged (compat/README.md), so one more fails.
  REAL_LIBDIR="$REAL" COMPAT_LIBDIR="$COMPAT" VBOARD_SO="$VBOARD" GPIB_CONFIG_BIN="$GPIB_CONFIG" \
    FIDELITY_SEED="${FIDELITY_SEED:-20261205}" FIDELITY_OPEN_MAX="${FIDELITY_OPEN_MAX:-0}" \
    "$ROOT/vboard/fidelity/ci.sh"
fi

section "done"
