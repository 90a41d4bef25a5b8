#!/bin/sh
# Installs the locked gRPC packages (again only when package-lock.json changed) and runs the standard-services
# test against CODEXD_BIN_DIR/codexd (CTest: grpc_standard_services).
set -eu
cd "$(dirname "$0")"
../../scripts/npm_ci_when_locked_changed.sh .
exec node --test standard_services.test.mjs
