#!/bin/sh
# Installs the locked MCP SDK (again only when package-lock.json changed) and runs the MCP
# conformance test against CODEXD_BIN_DIR's codexd and codexctl (CTest: mcp_conformance).
set -eu
cd "$(dirname "$0")"
../../scripts/npm_ci_when_locked_changed.sh .
exec node --test mcp_conformance.test.mjs
