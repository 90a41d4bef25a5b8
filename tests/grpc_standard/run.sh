#!/bin/sh
# Installs the locked gRPC packages (again only when package-lock.json changed) and runs the standard-services
# test against CODEXD_BIN_DIR/codexd (CTest: grpc_standard_services).
set -eu
cd "$(dirname "$0")"
stamp=node_modules/.codexd-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  npm ci --no-audit --no-fund --loglevel=error
  echo "$want" > "$stamp"
fi
exec node --test standard_services.test.mjs
