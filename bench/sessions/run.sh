#!/usr/bin/env bash
# bench/sessions/run.sh BUILD_DIR [SESSIONS] [RUNS]
#
# Durable sessions: per idle session, the daemon's RSS growth plus the shim's RSS and PSS; and
# the time from starting codexd to its first answer with an empty state directory vs after a
# SIGKILL with SESSIONS (default 100) live sessions to adopt. Asserts nothing.
set -euo pipefail
BUILD_DIR=${1:?usage: bench/sessions/run.sh BUILD_DIR [SESSIONS] [RUNS]}
BUILD_DIR=$(cd "$BUILD_DIR" && pwd)
for f in codexd codexd-shim sessions_bench; do
  [[ -x $BUILD_DIR/bin/$f ]] || { echo "missing $BUILD_DIR/bin/$f (build it)" >&2; exit 1; }
done
TMP=$(mktemp -d /var/tmp/codexd-sessions-bench-XXXXXX)
trap 'rm -rf "$TMP"' EXIT
"$BUILD_DIR/bin/sessions_bench" --codexd "$BUILD_DIR/bin/codexd" --dir "$TMP" --sessions "${2:-100}" --runs "${3:-5}"
