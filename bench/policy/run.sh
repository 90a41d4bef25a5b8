#!/bin/bash
# Policy loading figures in one run (issue 14, goal 4):
#   * `codexctl policy check` on a one-rule file (the whole-process floor) and on a
#     10,000-rule file, and `codex execpolicy check` on the same 10,000-rule file:
#     median wall and CPU time over RUNS runs, peak RSS, and the ratio codex/ours (goal >= 5x);
#   * in-process load of the 10,000-rule file and the per-command check with 10 and 10,000
#     rules (policy_bench; the ratio should be ~1: a check looks only at its program's rules);
#   * with CODEXD_BENCH_DAEMON=1, the daemon's reload of the 10,000-rule policy (goal < 20 ms).
# Usage: bench/policy/run.sh BUILD_DIR [CODEX_BIN]   (RUNS from $CODEXD_BENCH_RUNS, default 15)
# When $CODEXD_BENCH_CSV names a file, one row per figure is appended to it:
#   figure,value,unit,reference,reference_value,ratio,goal
# It only measures: no figure fails the run.
set -euo pipefail
BUILD=$(cd "${1:?usage: run.sh BUILD_DIR [CODEX_BIN]}" && pwd)
CODEX_BIN=${2:-${CODEX:-}}
if [ -z "$CODEX_BIN" ]; then
  for candidate in /opt/codex-ref/node_modules/.bin/codex "$(command -v codex || true)"; do
    if [ -n "$candidate" ] && [ -x "$candidate" ]; then CODEX_BIN=$candidate; break; fi
  done
fi
RUNS=${CODEXD_BENCH_RUNS:-15}
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

export CODEXD_BENCH_CSV=${CODEXD_BENCH_CSV:-}
exec python3 "$HERE/run_figures.py" --build "$BUILD" --codex "$CODEX_BIN" --runs "$RUNS" --work "$WORK" \
  --daemon "${CODEXD_BENCH_DAEMON:-0}"
