#!/bin/sh
# Installs the locked npm dependencies (again only when package-lock.json changed), generates
# the types, compiles, and runs the tests against CODEXD_BIN_DIR/codexd (CTest: node_client).
set -eu
cd "$(dirname "$0")"
../../scripts/npm_ci_when_locked_changed.sh .
npm run --silent build
exec node --test dist/test/client.test.js
