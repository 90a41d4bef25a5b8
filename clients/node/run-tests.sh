#!/bin/sh
# Installs the locked npm dependencies (again only when package-lock.json changed), generates
# the types, compiles, and runs the tests against CODEXD_BIN_DIR/codexd (CTest: node_client).
set -eu
cd "$(dirname "$0")"
stamp=node_modules/.codexd-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  npm ci --no-audit --no-fund --loglevel=error
  echo "$want" > "$stamp"
fi
npm run --silent build
exec node --test dist/test/client.test.js
