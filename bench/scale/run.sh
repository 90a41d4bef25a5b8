#!/usr/bin/env bash
# bench/scale/run.sh BUILD_DIR [RUNS]
#
# Issue 14 goals 5 and 6, in one run, as a table of medians and ratios (and, with
# CODEXD_BENCH_CSV=FILE, one CSV row per figure appended to FILE):
#   (a) `head -c 256M /dev/zero` through a lossless Attach vs a plain pipe read,
#   (b) the same on a terminal (tty=true, 64 MiB) vs a bare PTY read (openpty + read),
#   (c) one Poll, already waiting, of a command that writes 1 MiB at once: bytes, time,
#   (d) 1,000 concurrent long Polls and 200 Attach streams: the daemon's threads, RSS and open
#       descriptors (/proc/PID/fd) before and while they wait. The ProcessStore keeps at most 64 sessions per uid
#       (exec.max_sessions), and Poll accepts any number of waiting calls on one session, so
#       the calls share 50 sessions running `sleep 600` (20 Polls and 4 Attach streams each)
#       instead of raising the limit,
#   (e) 8, then 32 concurrent clients each running 100 ExecCommand /bin/true under the default
#       "workspace-write" sandbox: commands/s (vs 1 client), errors, and the daemon's threads,
#       RSS and descriptors at their peak during each load and after it.
# (a)-(d) run against a daemon with sandbox "danger-full-access" (the daemon's own cost, not
# bwrap's); (e) against one with the default sandbox. Asserts nothing.
# SCALE_PIPE_MIB, SCALE_PTY_MIB, SCALE_COMMANDS, SCALE_CLIENTS (e.g. "8,32") override the sizes.
set -euo pipefail

BUILD_DIR=${1:?usage: bench/scale/run.sh BUILD_DIR [RUNS]}
RUNS=${2:-3}
BUILD_DIR=$(cd "$BUILD_DIR" && pwd)
CODEXD=${CODEXD:-$BUILD_DIR/bin/codexd}
CODEXCTL=$BUILD_DIR/bin/codexctl
BENCH=$BUILD_DIR/bin/scale_bench
for f in "$CODEXD" "$(dirname "$CODEXD")/codexd-shim" "$(dirname "$CODEXD")/codexd-sandbox-helper" "$CODEXCTL" "$BENCH"; do
  [[ -x $f ]] || { echo "missing $f (build the codexd, codexd-shim, codexd-sandbox-helper, codexctl and scale_bench targets)" >&2; exit 1; }
done

TMP=$(mktemp -d /tmp/codexd-scale-bench-XXXXXX)
DAEMON_PID=
stop_daemon() {
  if [[ -n $DAEMON_PID ]]; then
    kill -TERM "$DAEMON_PID" 2>/dev/null || true
    wait "$DAEMON_PID" 2>/dev/null || true
    DAEMON_PID=
  fi
}
trap 'stop_daemon; rm -rf "$TMP"' EXIT

# start_daemon NAME SANDBOX_MODE: a daemon on $TMP/NAME/run/codexd.sock, workspace $TMP/NAME/ws.
start_daemon() {
  local dir=$TMP/$1
  mkdir -p "$dir/ws" "$dir/rules" "$dir/state"
  cat >"$dir/codexd.toml" <<CONF
[daemon]
mode = "user"
listen = "unix:$dir/run/codexd.sock"
log_level = "warn"
state_dir = "$dir/state"
[policy]
rules_dirs = ["$dir/rules"]
approval_policy = "on-request"
[sandbox]
mode = "$2"
CONF
  "$CODEXD" --config "$dir/codexd.toml" >"$dir/codexd.log" 2>&1 &
  DAEMON_PID=$!
  for _ in $(seq 1 400); do
    if "$CODEXCTL" --socket "$dir/run/codexd.sock" status >/dev/null 2>&1; then return 0; fi
    kill -0 "$DAEMON_PID" 2>/dev/null || break
    sleep 0.05
  done
  echo "codexd did not start:" >&2
  cat "$dir/codexd.log" >&2
  exit 1
}

echo "codexd scale bench ($(nproc) CPUs, $(uname -r), daemon $CODEXD)"
start_daemon plain danger-full-access
"$BENCH" --phase output --socket "$TMP/plain/run/codexd.sock" --workdir "$TMP/plain/ws" --daemon-pid "$DAEMON_PID" \
  --runs "$RUNS" --pipe-mib "${SCALE_PIPE_MIB:-256}" --pty-mib "${SCALE_PTY_MIB:-64}" \
  --label 'sandbox "danger-full-access"'
echo
"$BENCH" --phase waiting --socket "$TMP/plain/run/codexd.sock" --workdir "$TMP/plain/ws" --daemon-pid "$DAEMON_PID" \
  --sessions 50 --polls 1000 --attaches 200 --label 'sandbox "danger-full-access"'
stop_daemon

echo
start_daemon sandboxed workspace-write
"$BENCH" --phase clients --socket "$TMP/sandboxed/run/codexd.sock" --workdir "$TMP/sandboxed/ws" \
  --daemon-pid "$DAEMON_PID" --runs "$RUNS" --clients "${SCALE_CLIENTS:-8,32}" --commands "${SCALE_COMMANDS:-100}" \
  --label 'sandbox "workspace-write" (default)'
"$CODEXCTL" --socket "$TMP/sandboxed/run/codexd.sock" status | sed -n 's/^sandbox: */  backend: /p'
stop_daemon
