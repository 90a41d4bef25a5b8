#!/usr/bin/env bash
# bench/client/run.sh BUILD_DIR [RUNS]
#
# What a codexctl process costs from start to exit, in one run, round-robin (every case sees the
# same machine state), medians over RUNS (default 40):
#   /bin/true                                   the baseline of any process
#   codexctl --help                             start, link, init, CLI, exit: no daemon involved
#   codexctl status                             a trivial RPC (goal: <= 5x /bin/true)
#   codexctl exec -- /bin/true                  against a daemon in sandbox mode
#                                               danger-full-access and one in workspace-write
#   codex sandbox -P :workspace -- /bin/true    when a codex binary is found (goal: the
#                                               workspace-write exec <= 0.25x this)
# and the minor page faults of the child (wait4's rusage) for each. The codex binary is
# $CODEX_BIN, else /opt/codex-ref/node_modules/.bin/codex if present; it runs with
# HOME=$CODEX_HOME_DIR (default /opt/codex-home, which must lie outside /tmp).
# With CODEXD_BENCH_CSV=FILE, appends one row per figure:
#   figure,value,unit,reference,reference_value,ratio,goal
# ("-" where a field does not apply). Asserts nothing.
set -euo pipefail

BUILD_DIR=${1:?usage: bench/client/run.sh BUILD_DIR [RUNS]}
RUNS=${2:-40}
BUILD_DIR=$(cd "$BUILD_DIR" && pwd)
CODEXD=$BUILD_DIR/bin/codexd
CODEXCTL=$BUILD_DIR/bin/codexctl
BENCH=$BUILD_DIR/bin/client_bench
for f in "$CODEXD" "$CODEXCTL" "$BENCH"; do
  [[ -x $f ]] || { echo "missing $f (build the codexd, codexctl and client_bench targets)" >&2; exit 1; }
done
CODEX_BIN=${CODEX_BIN:-}
if [[ -z $CODEX_BIN && -x /opt/codex-ref/node_modules/.bin/codex ]]; then
  CODEX_BIN=/opt/codex-ref/node_modules/.bin/codex
fi
CODEX_HOME_DIR=${CODEX_HOME_DIR:-/opt/codex-home}

TMP=$(mktemp -d /tmp/codexd-client-bench-XXXXXX)
DAEMON_PIDS=()
stop_daemons() {
  local pid
  for pid in "${DAEMON_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${DAEMON_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  DAEMON_PIDS=()
}
trap 'stop_daemons; rm -rf "$TMP"' EXIT

# start_daemon NAME SANDBOX_MODE: a daemon on $TMP/NAME/run/codexd.sock, workspace $TMP/NAME/ws.
start_daemon() {
  local dir=$TMP/$1
  mkdir -p "$dir/ws" "$dir/rules"
  cat >"$dir/codexd.toml" <<TOML
[daemon]
mode = "user"
listen = "unix:$dir/run/codexd.sock"
log_level = "warn"
[policy]
rules_dirs = ["$dir/rules"]
approval_policy = "on-request"
[sandbox]
mode = "$2"
TOML
  "$CODEXD" --config "$dir/codexd.toml" >"$dir/codexd.log" 2>&1 &
  local pid=$!
  DAEMON_PIDS+=("$pid")
  # Readiness: the socket answers (bounded; a bench script, not a test).
  for _ in $(seq 1 400); do
    if "$CODEXCTL" --socket "$dir/run/codexd.sock" status >/dev/null 2>&1; then return 0; fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  echo "codexd ($2) did not start:" >&2
  cat "$dir/codexd.log" >&2
  exit 1
}

start_daemon full danger-full-access
start_daemon workspace workspace-write
CODEX_WS=$TMP/codex-ws
mkdir -p "$CODEX_WS"
git -C "$CODEX_WS" init -q . 2>/dev/null || true

cases=(
  --case true -- /bin/true
  --case help -- "$CODEXCTL" --help
  --case status -- "$CODEXCTL" --socket "$TMP/full/run/codexd.sock" status
  --case exec_full -- "$CODEXCTL" --socket "$TMP/full/run/codexd.sock" exec -C "$TMP/full/ws" -- /bin/true
  --case exec_workspace -- "$CODEXCTL" --socket "$TMP/workspace/run/codexd.sock" exec -C "$TMP/workspace/ws" -- /bin/true
)
if [[ -n $CODEX_BIN ]]; then
  if HOME=$CODEX_HOME_DIR "$CODEX_BIN" sandbox -P :workspace -C "$CODEX_WS" -- /bin/true >"$TMP/codex.out" 2>&1; then
    cases+=(--case codex_sandbox --env "HOME=$CODEX_HOME_DIR" -- "$CODEX_BIN" sandbox -P :workspace -C "$CODEX_WS" -- /bin/true)
  else
    echo "(codex sandbox at $CODEX_BIN failed, leaving it out:)" >&2
    head -n 5 "$TMP/codex.out" >&2
    CODEX_BIN=
  fi
fi

echo "codexctl client bench ($(nproc) CPUs, $(uname -r), build $BUILD_DIR, $RUNS runs round-robin, medians)"
sandbox_backend=$("$CODEXCTL" --socket "$TMP/workspace/run/codexd.sock" status | sed -n 's/^sandbox: *//p' | head -n 1)
"$BENCH" --runs "$RUNS" "${cases[@]}" >"$TMP/results.tsv"

declare -A MS FAULTS FAILED
while IFS=$'\t' read -r name ms faults _ failed; do
  MS[$name]=$ms
  FAULTS[$name]=$faults
  FAILED[$name]=$failed
done <"$TMP/results.tsv"
for name in "${!FAILED[@]}"; do
  if [[ ${FAILED[$name]} != 0 ]]; then echo "warning: $name failed ${FAILED[$name]} of its runs (left out of its median)" >&2; fi
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else printf "-" }'; }

# row FIGURE VALUE UNIT REFERENCE REFERENCE_VALUE GOAL LABEL: prints a table line, appends a CSV row.
row() {
  local r="-"
  [[ $4 != - ]] && r=$(ratio "$2" "$5")
  printf '  %-52s %10s %-6s %8s x %s%s\n' "$7" "$2" "$3" "$r" "$4" "$([[ $6 != - ]] && echo " (goal $6)")"
  if [[ -n ${CODEXD_BENCH_CSV:-} ]]; then
    echo "$1,$2,$3,$4,$5,$r,$6" >>"$CODEXD_BENCH_CSV"
  fi
}

echo "  sandbox backend of the workspace-write daemon: ${sandbox_backend:-?}"
printf '  %-52s %10s %-6s %10s %s\n' figure median unit ratio "vs"
row client_bin_true_ms "${MS[true]}" ms - - - "/bin/true"
row client_help_ms "${MS[help]}" ms client_bin_true_ms "${MS[true]}" - "codexctl --help"
row client_status_ms "${MS[status]}" ms client_bin_true_ms "${MS[true]}" "<=5x" "codexctl status"
row client_exec_full_access_ms "${MS[exec_full]}" ms client_bin_true_ms "${MS[true]}" - "codexctl exec -- /bin/true (danger-full-access)"
if [[ -n $CODEX_BIN ]]; then
  row client_codex_sandbox_ms "${MS[codex_sandbox]}" ms client_bin_true_ms "${MS[true]}" - "codex sandbox -- /bin/true"
  row client_exec_workspace_write_ms "${MS[exec_workspace]}" ms client_codex_sandbox_ms "${MS[codex_sandbox]}" "<=0.25x" \
    "codexctl exec -- /bin/true (workspace-write)"
  row client_exec_full_access_vs_codex_ms "${MS[exec_full]}" ms client_codex_sandbox_ms "${MS[codex_sandbox]}" - \
    "codexctl exec -- /bin/true (danger-full-access)"
else
  row client_exec_workspace_write_ms "${MS[exec_workspace]}" ms client_bin_true_ms "${MS[true]}" - \
    "codexctl exec -- /bin/true (workspace-write)"
  echo "  (no codex binary: set CODEX_BIN for the codex sandbox comparison)"
fi
row client_bin_true_minflt "${FAULTS[true]}" faults - - - "/bin/true minor page faults"
row client_help_minflt "${FAULTS[help]}" faults client_bin_true_minflt "${FAULTS[true]}" - "codexctl --help minor page faults"
row client_status_minflt "${FAULTS[status]}" faults client_bin_true_minflt "${FAULTS[true]}" - "codexctl status minor page faults"
row client_exec_full_access_minflt "${FAULTS[exec_full]}" faults client_bin_true_minflt "${FAULTS[true]}" - \
  "codexctl exec minor page faults"
