#!/bin/bash
# Builds the libFuzzer targets in BUILD_DIR (clang, -DCODEXD_FUZZ=ON) and runs each for an
# equal share of SECONDS, seeded from its checked-in corpus (tests/fuzz/corpus/<target>; the
# Starlark targets also from every rules file the repository ships or tests with). New inputs
# go to BUILD_DIR/fuzz-corpus/<target>, findings to BUILD_DIR/fuzz-artifacts. Prints one
# summary line per target (seconds, executions) and exits non-zero on a finding.
# Usage: tests/fuzz/run_fuzzers.sh BUILD_DIR SECONDS [TARGET...]
set -euo pipefail
BUILD_DIR=${1:?usage: run_fuzzers.sh BUILD_DIR SECONDS [TARGET...]}
mkdir -p "$BUILD_DIR"
BUILD_DIR=$(cd "$BUILD_DIR" && pwd)  # absolute: the fuzzers run from inside it
SECONDS_TOTAL=${2:?usage: run_fuzzers.sh BUILD_DIR SECONDS [TARGET...]}
shift 2
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CORPUS="$ROOT/tests/fuzz/corpus"
TARGETS=(fuzz_starlark_parse fuzz_starlark_eval fuzz_rules_load fuzz_shell_split fuzz_http2_guard
         fuzz_config_load fuzz_request_validation fuzz_mcp_input fuzz_exec_relay)
[ $# -gt 0 ] && TARGETS=("$@")

CC=clang CXX=clang++ cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCODEXD_FUZZ=ON \
  -DCODEXD_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD_DIR" --target "${TARGETS[@]}" -j2

# Every rules file we ship or test with, for the Starlark targets besides their own seeds.
RULES="$BUILD_DIR/fuzz-seeds/rules"
mkdir -p "$RULES" "$BUILD_DIR/fuzz-artifacts"
cp "$ROOT"/policies/default.rules "$RULES/"
find "$ROOT/tests/conformance/execpolicy/rules" -name '*.rules' -exec cp {} "$RULES/" \;

PER_TARGET=$(( SECONDS_TOTAL / ${#TARGETS[@]} ))
[ "$PER_TARGET" -lt 1 ] && PER_TARGET=1
status=0
summary=()
for t in "${TARGETS[@]}"; do
  seeds=("$CORPUS/$t")
  case "$t" in fuzz_starlark_*|fuzz_rules_load) seeds+=("$RULES") ;; esac
  work="$BUILD_DIR/fuzz-corpus/$t"; mkdir -p "$work"
  log="$BUILD_DIR/fuzz-artifacts/$t.log"
  echo "== $t for ${PER_TARGET}s"
  started=$(date +%s)
  result=ok
  if ! (cd "$BUILD_DIR" && "./tests/fuzz/$t" -max_total_time="$PER_TARGET" -timeout=10 -rss_limit_mb=2048 \
        -max_len=4096 -print_final_stats=1 -artifact_prefix="$BUILD_DIR/fuzz-artifacts/$t-" \
        "$work" "${seeds[@]}" >"$log" 2>&1); then
    result="FAILED (input and log in $BUILD_DIR/fuzz-artifacts)"
    status=1
  fi
  tail -n 12 "$log"
  executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  summary+=("$(printf '%-24s %4ss %10s executions  %s' "$t" $(( $(date +%s) - started )) "${executions:-?}" "$result")")
done
echo "== fuzzing summary"
printf '%s\n' "${summary[@]}"
exit $status
