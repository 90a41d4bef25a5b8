#!/usr/bin/env bash
# bench/core/run.sh BUILD_DIR [ITERATIONS]
#
# Starts codexd in a temporary directory and prints, in one run, medians and ratios of:
#   (a) posix_spawn+wait of /bin/true (the baseline),
#   (b) a gRPC ExecCommand of /bin/true (argv form) round trip,
#   (c) `codexctl exec -- /bin/true`, the whole client process,
#   (d) `head -c 256M /dev/zero` streamed through a lossless Attach vs a plain pipe read,
#   (e) the egress proxy (bench/network/proxy_bench, when built): a 1 GiB download through a
#       CONNECT tunnel and a plain-HTTP GET vs direct on loopback, and the added latency of a
#       proxied connect (PROXY_MIB=N for a smaller download).
# The daemon runs with sandbox mode "danger-full-access" so the numbers measure the daemon, not
# bwrap; (b) is then repeated against a second daemon with the default "workspace-write"
# sandbox and printed separately. Asserts nothing.
set -euo pipefail

BUILD_DIR=${1:?usage: bench/core/run.sh BUILD_DIR [ITERATIONS]}
ITERATIONS=${2:-200}
BUILD_DIR=$(cd "$BUILD_DIR" && pwd)
CODEXD=$BUILD_DIR/bin/codexd
CODEXCTL=$BUILD_DIR/bin/codexctl
BENCH=$BUILD_DIR/bin/core_bench
for f in "$CODEXD" "$CODEXCTL" "$BENCH"; do
  [[ -x $f ]] || { echo "missing $f (build the codexd, codexctl and core_bench targets)" >&2; exit 1; }
done

TMP=$(mktemp -d /tmp/codexd-core-bench-XXXXXX)
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
  mkdir -p "$dir/ws" "$dir/rules"
  cat >"$dir/codexd.toml" <<EOF
[daemon]
mode = "user"
listen = "unix:$dir/run/codexd.sock"
log_level = "warn"
[policy]
rules_dirs = ["$dir/rules"]
approval_policy = "on-request"
[sandbox]
mode = "$2"
EOF
  "$CODEXD" --config "$dir/codexd.toml" >"$dir/codexd.log" 2>&1 &
  DAEMON_PID=$!
  # Readiness: the socket answers (bounded; a bench script, not a test).
  for _ in $(seq 1 400); do
    if "$CODEXCTL" --socket "$dir/run/codexd.sock" status >/dev/null 2>&1; then return 0; fi
    kill -0 "$DAEMON_PID" 2>/dev/null || break
    sleep 0.05
  done
  echo "codexd did not start:" >&2
  cat "$dir/codexd.log" >&2
  exit 1
}

echo "codexd core bench ($(nproc) CPUs, $(uname -r), build $BUILD_DIR)"
start_daemon plain danger-full-access
"$BENCH" --socket "$TMP/plain/run/codexd.sock" --codexctl "$CODEXCTL" --workdir "$TMP/plain/ws" \
  --iterations "$ITERATIONS" --label 'sandbox "danger-full-access" (the daemon alone)'
stop_daemon

start_daemon sandboxed workspace-write
"$BENCH" --socket "$TMP/sandboxed/run/codexd.sock" --workdir "$TMP/sandboxed/ws" --exec-only \
  --iterations "$ITERATIONS" --label 'sandbox "workspace-write" (default backend), for comparison' \
  --figure "sandboxed (warm channel)"
"$CODEXCTL" --socket "$TMP/sandboxed/run/codexd.sock" status | sed -n 's/^sandbox: */  backend: /p'
stop_daemon

PROXY_BENCH=$BUILD_DIR/bin/proxy_bench
if [[ -x $PROXY_BENCH ]]; then
  echo
  "$PROXY_BENCH" --mib "${PROXY_MIB:-1024}" --runs 3 --connects "$ITERATIONS"
else
  echo "(skipping the proxy bench: build the proxy_bench target)"
fi
