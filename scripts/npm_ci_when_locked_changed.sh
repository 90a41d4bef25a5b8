#!/bin/sh
# Installs a directory's locked npm dependencies (npm ci) when its package-lock.json changed
# since the last install here, and does nothing otherwise: the npm-based test suites call it
# before each run, and a clean `npm ci` costs seconds each time.
# Usage: npm_ci_when_locked_changed.sh DIR
set -eu
cd "${1:?usage: npm_ci_when_locked_changed.sh DIR}"
stamp=node_modules/.codexd-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  npm ci --no-audit --no-fund --loglevel=error
  echo "$want" > "$stamp"
fi
