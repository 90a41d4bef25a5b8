#!/bin/bash
# Whole-process time of `codexctl policy check` vs `codex execpolicy check` on the same rules
# files, printed as a ratio. Uses $CODEX or a `codex` on PATH; skips (exit 0) without one.
# Usage: bench/policy/compare_codex.sh CODEXCTL [RUNS]
set -euo pipefail
CODEXCTL=${1:?usage: compare_codex.sh path/to/codexctl [RUNS]}
RUNS=${2:-20}
CODEX_BIN=${CODEX:-$(command -v codex || true)}
if [ -z "$CODEX_BIN" ] || [ ! -x "$CODEX_BIN" ]; then
  echo "compare_codex: no codex binary (set CODEX or put codex on PATH); skipping"
  exit 0
fi
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export HOME="$WORK/home"; mkdir -p "$HOME"

python3 - "$WORK/large.rules" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(10000):
        f.write('prefix_rule(pattern=["tool%d", ["sub%d", "alt"], "x"], decision="%s")\n'
                % (i % 2001, i % 7, ("allow", "prompt", "forbidden")[i % 3]))
PY

# Runs a command RUNS times; prints the mean wall time in milliseconds.
time_ms() {
  python3 - "$RUNS" "$@" <<'PY'
import subprocess, sys, time
runs = int(sys.argv[1]); cmd = sys.argv[2:]
start = time.perf_counter()
for _ in range(runs):
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
print("%.2f" % ((time.perf_counter() - start) * 1000 / runs))
PY
}

printf '%-34s %12s %12s %8s\n' "rules file" "codexctl ms" "codex ms" "ratio"
for rules in "$ROOT/policies/default.rules" "$ROOT/tests/conformance/execpolicy/rules/v09_large.rules" "$WORK/large.rules"; do
  ours=$(time_ms "$CODEXCTL" policy check --rules "$rules" -- tool1 sub1 x)
  theirs=$(time_ms "$CODEX_BIN" execpolicy check --rules "$rules" -- tool1 sub1 x)
  ratio=$(python3 -c "print('%.3f' % ($ours / $theirs))")
  printf '%-34s %12s %12s %8s\n' "$(basename "$rules")" "$ours" "$theirs" "$ratio"
done
echo "(ratio = codexctl / codex; lower is faster)"
