#!/usr/bin/env bash
# bench/run-all.sh BUILD_DIR [CODEX_BIN]
#
# Every figure of docs/performance.md in one run, each paired with its reference measured in
# the same run (posix_spawn, one unary RPC, bare bwrap with Codex's argv and with codexd's
# profile, `codex sandbox` and `codex execpolicy check` when a codex binary is given or found,
# a plain pipe read, a bare PTY read, /bin/true). Prints the full output of every bench, then a
# table of medians and ratios, and writes into a results folder:
#   results.csv   figure,value,unit,reference,reference_value,ratio,goal
#   table.md      the same as a Markdown table (what docs/performance.md shows)
#   chart.png     each figure's ratio to its reference (gnuplot, when installed)
#   output.txt    everything the benches printed
# RESULTS_DIR=DIR picks the folder (default bench/results/<UTC time>); RUNS=N the iterations of
# the round-trip benches (default 100). Asserts nothing: a bench that fails is reported and the
# others still run.
set -uo pipefail

BUILD_DIR=${1:?usage: bench/run-all.sh BUILD_DIR [CODEX_BIN]}
BUILD_DIR=$(cd "$BUILD_DIR" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
CODEX_BIN=${2:-${CODEX_BIN:-}}
if [[ -z $CODEX_BIN && -x /opt/codex-ref/node_modules/.bin/codex ]]; then CODEX_BIN=/opt/codex-ref/node_modules/.bin/codex; fi
RUNS=${RUNS:-100}
RESULTS_DIR=${RESULTS_DIR:-$HERE/results/$(date -u +%Y%m%d-%H%M%S)}
mkdir -p "$RESULTS_DIR"
RESULTS_DIR=$(cd "$RESULTS_DIR" && pwd)
export CODEXD_BENCH_CSV=$RESULTS_DIR/results.csv
export CODEX_BIN
: >"$CODEXD_BENCH_CSV"
LOG=$RESULTS_DIR/output.txt
: >"$LOG"

failed=()
# run NAME COMMAND...: one bench, its output to the terminal and the log.
run() {
  local name=$1
  shift
  printf '\n==== %s\n' "$name" | tee -a "$LOG"
  if ! "$@" 2>&1 | tee -a "$LOG"; then
    failed+=("$name")
    echo "(bench '$name' failed; the others still run)" | tee -a "$LOG"
  fi
}
# run_if FILE NAME COMMAND...: only when FILE exists (a bench that is not built is said so).
run_if() {
  local file=$1
  shift
  if [[ -e $file ]]; then run "$@"; else echo "(skipping $2: $file is missing)" | tee -a "$LOG"; fi
}

{
  echo "codexd benchmarks, $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "machine: $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), kernel $(uname -r), $(. /etc/os-release && echo "$PRETTY_NAME")"
  echo "build: $BUILD_DIR ($(git -C "$HERE/.." rev-parse --short HEAD 2>/dev/null || echo unknown))"
  echo "codex: ${CODEX_BIN:-none (the Codex reference rows are skipped)}"
} | tee -a "$LOG"

run_if "$BUILD_DIR/bench/sandbox/sandbox_bench" "sandbox launch (cold path)" "$BUILD_DIR/bench/sandbox/sandbox_bench" "$RUNS"
run_if "$BUILD_DIR/bin/core_bench" "daemon round trips and output" env PROXY_MIB="${PROXY_MIB:-256}" "$HERE/core/run.sh" "$BUILD_DIR" "$RUNS"
run_if "$HERE/client/run.sh" "codexctl whole process" "$HERE/client/run.sh" "$BUILD_DIR" "$RUNS"
run_if "$HERE/policy/run.sh" "policy loading" "$HERE/policy/run.sh" "$BUILD_DIR" ${CODEX_BIN:+"$CODEX_BIN"}
run_if "$HERE/scale/run.sh" "scale" "$HERE/scale/run.sh" "$BUILD_DIR"
run_if "$BUILD_DIR/bin/sessions_bench" "durable sessions" "$HERE/sessions/run.sh" "$BUILD_DIR" 100 3
run_if "$HERE/approvals/pending_memory.sh" "pending approval memory" "$HERE/approvals/pending_memory.sh" "$BUILD_DIR" 20
run_if "$HERE/exec_supervision/run.sh" "exec supervision" "$HERE/exec_supervision/run.sh" "$BUILD_DIR" 2000 --build

python3 "$HERE/report.py" "$CODEXD_BENCH_CSV" "$RESULTS_DIR" | tee -a "$LOG"
if ((${#failed[@]})); then
  echo "benches that failed: ${failed[*]}" | tee -a "$LOG"
fi
echo "results: $RESULTS_DIR" | tee -a "$LOG"
