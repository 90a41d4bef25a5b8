#!/usr/bin/env bash
# bench/limits/run.sh BUILD_DIR [ITERATIONS]
#
# What a command's cgroup adds to its spawn, on this machine's cgroup layout (v2, hybrid or
# v1): medians and ratios of posix_spawn, codexd's spawn_process, and spawn_process inside a
# freshly created cgroup (limits written, joined before exec, removed after). Needs root or a
# delegated cgroup. Asserts nothing.
set -euo pipefail
BUILD_DIR=${1:?usage: bench/limits/run.sh BUILD_DIR [ITERATIONS]}
ITERATIONS=${2:-300}
BENCH=$(cd "$BUILD_DIR" && pwd)/bin/limits_bench
[[ -x $BENCH ]] || { echo "missing $BENCH (build the limits_bench target)" >&2; exit 1; }
echo "codexd limits bench ($(nproc) CPUs, $(uname -r))"
"$BENCH" --iterations "$ITERATIONS"
