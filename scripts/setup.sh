#!/usr/bin/env bash
# One command from a fresh Debian 12 machine to a running daemon: installs the dependencies,
# builds codexd and codexctl, and starts codexd in user mode on its default socket with the
# default configuration. Re-running it rebuilds and restarts the daemon.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

./scripts/deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build --target codexd codexctl codexd-sandbox-helper codexd-shim

SOCKET=$(./build/bin/codexd --check-config | sed -n 's/^socket: //p')
STATE="${XDG_STATE_HOME:-$HOME/.local/state}/codexd"
mkdir -p "$STATE"
if [ -S "$SOCKET" ] && ./build/bin/codexctl --socket "$SOCKET" status >/dev/null 2>&1; then
  echo "setup: stopping the running codexd"
  pkill -TERM -f "^$ROOT/build/bin/codexd" || true
  for _ in $(seq 100); do [ -S "$SOCKET" ] || break; sleep 0.1; done
fi
setsid nohup "$ROOT/build/bin/codexd" >>"$STATE/codexd.log" 2>&1 </dev/null &
# Wait until it answers (bounded).
for _ in $(seq 100); do
  if ./build/bin/codexctl --socket "$SOCKET" status >/dev/null 2>&1; then break; fi
  sleep 0.1
done
./build/bin/codexctl --socket "$SOCKET" status
echo
echo "codexd is running (log: $STATE/codexd.log). Try:"
echo "  export PATH=$ROOT/build/bin:\$PATH"
echo "  codexctl exec -- uname -a"
