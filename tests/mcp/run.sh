#!/bin/sh
# Installs the locked MCP SDK (again only when package-lock.json changed) and runs the MCP
# conformance test against CODEXD_BIN_DIR's codexd and codexctl (CTest: mcp_conformance).
set -eu
cd "$(dirname "$0")"
stamp=node_modules/.codexd-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  npm ci --no-audit --no-fund --loglevel=error
  echo "$want" > "$stamp"
fi
exec node --test mcp_conformance.test.mjs
