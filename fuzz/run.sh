#!/usr/bin/env bash
# Builds every fuzz target and runs each for SECONDS (default 20) on its stored corpus,
# FUZZ_JOBS of them at a time (default: one per CPU).
#
#   fuzz/run.sh [SECONDS] [TARGET...]
#   fuzz/run.sh --build-only     (cargo-fuzz if missing, the lock check and the build:
#                                 .ci/run builds in the background, ahead of the run)
#
# The stored seeds (fuzz/corpus/<target>) are read, never written: what the run finds
# goes to fuzz/target/corpus/<target> (kept between runs, ignored by git), crashes to
# fuzz/artifacts/<target>/. The regression inputs in fuzz/crashes/<target>-* run first,
# one by one, with GPIB_FUZZ_STRICT=1 (no tolerance for known defects). Exits non-zero when any target crashes, leaks, times out (-timeout=10)
# or runs out of memory.
#
# The toolchain may be stable: cargo-fuzz needs nightly flags (-Zsanitizer), which
# RUSTC_BOOTSTRAP=1 unlocks. Set FUZZ_SANITIZER=none for a faster build without ASan.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
build_only=""
if [ "${1:-}" = "--build-only" ]; then
    build_only=1
    shift
fi
seconds="${1:-20}"
shift || true
export RUSTC_BOOTSTRAP=1
sanitizer="${FUZZ_SANITIZER:-address}"
nice="nice -n ${FUZZ_NICE:-10}"

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "== installing cargo-fuzz" >&2
    cargo install cargo-fuzz --locked
fi

mkdir -p target
# The lock file must hold every dependency as it is: a stale one would be re-resolved
# (and rewritten) by every build. --locked makes that an error here.
if ! cargo metadata --locked --format-version 1 >/dev/null 2>target/lock-check.log; then
    echo "!! fuzz/Cargo.lock is stale: run 'cargo metadata --manifest-path fuzz/Cargo.toml' and commit it" >&2
    tail -3 target/lock-check.log >&2
    exit 1
fi
rm -f target/lock-check.log

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(cargo fuzz list)
fi

# -a: debug assertions and overflow checks (arithmetic overflow is a defect here).
build=(cargo fuzz build -a --sanitizer "$sanitizer")
echo "== ${build[*]}" >&2
$nice "${build[@]}"
[ -z "$build_only" ] || exit 0

# Each target: its regression inputs, then SECONDS of fuzzing; a line for the summary
# in target/fuzz-<t>.line, and target/fuzz-<t>.failed when it failed (holding the
# regression inputs that failed, if any).
fuzz_one() {
    local t="$1"
    mkdir -p "target/corpus/$t" "artifacts/$t" "corpus/$t"
    local log="target/fuzz-$t.log"
    rm -f "target/fuzz-$t.failed" "target/fuzz-$t.line"
    local run=(cargo fuzz run -a --sanitizer "$sanitizer" "$t")
    # Regression inputs first: each must run clean.
    shopt -s nullglob
    local crashes=(crashes/"$t"-*)
    shopt -u nullglob
    local c
    for c in "${crashes[@]}"; do
        if ! GPIB_FUZZ_STRICT=1 $nice "${run[@]}" "$c" -- -timeout=10 -rss_limit_mb=2048 >"$log.regress" 2>&1; then
            echo "!! $t: regression input $c still fails:" >&2
            grep -m3 -E "panicked|ERROR: libFuzzer|SUMMARY" "$log.regress" >&2 || tail -5 "$log.regress" >&2
            echo "$t: regression $c FAILS" >>"target/fuzz-$t.failed"
        fi
    done
    echo "== $t: ${seconds}s" >&2
    local rc=0
    $nice "${run[@]}" "target/corpus/$t" "corpus/$t" -- \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        >"$log" 2>&1 || rc=$?
    local execs rate units bytes line
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1 || true)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1 || true)
    units=$(find "target/corpus/$t" "corpus/$t" -type f | wc -l)
    bytes=$(find "target/corpus/$t" "corpus/$t" -type f -exec cat {} + | wc -c)
    line="$t: ${execs:-0} executions (${rate:-0}/s), corpus ${units} files / ${bytes} bytes"
    if [ "$rc" -ne 0 ]; then
        local art why
        art=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
        why=$(grep -m1 -E "panicked at|ERROR: libFuzzer: [a-z-]+|ERROR: AddressSanitizer" "$log" || true)
        line="$line -- CRASH (exit $rc): ${why:-see $log} ${art:+[input: $art]}"
        grep -A2 -m1 "panicked at" "$log" >&2 || tail -20 "$log" >&2
        touch "target/fuzz-$t.failed"
    fi
    echo "$line" >&2
    echo "$line" >"target/fuzz-$t.line"
}

# FUZZ_JOBS targets at a time (default: the machine's CPUs): each fuzzes on one core.
jobs="${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}"
running=0
for t in "${targets[@]}"; do
    if [ "$running" -ge "$jobs" ]; then
        wait -n || true
        running=$((running - 1))
    fi
    fuzz_one "$t" &
    running=$((running + 1))
done
wait || true

status=0
summary=()
for t in "${targets[@]}"; do
    if [ -e "target/fuzz-$t.failed" ]; then
        status=1
        while IFS= read -r l; do summary+=("$l"); done <"target/fuzz-$t.failed"
    fi
    [ -e "target/fuzz-$t.line" ] && summary+=("$(cat "target/fuzz-$t.line")")
done

echo
echo "== summary (${seconds}s per target)"
printf '%s\n' "${summary[@]}"
exit "$status"
