#!/usr/bin/env bash
# bench/limits/run.sh BUILD_DIR [ITERATIONS]
#
# What a command's cgroup adds to its spawn, on this machine's cgroup layout (v2, hybrid or
# v1): medians and ratios of posix_spawn, codexd's spawn_process, and spawn_process in a
# group taken from the agent's stock (cgroup_pool.h), in one made on the spot as before the
# stock ("unpooled"), and in an agent's first one. Needs root or a delegated cgroup. Asserts
# nothing.
set -euo pipefail
BUILD_DIR=${1:?usage: bench/limits/run.sh BUILD_DIR [ITERATIONS]}
ITERATIONS=${2:-300}
BENCH=$(cd "$BUILD_DIR" && pwd)/bin/limits_bench
[[ -x $BENCH ]] || { echo "missing $BENCH (build the limits_bench target)" >&2; exit 1; }
echo "codexd limits bench ($(nproc) CPUs, $(uname -r))"
"$BENCH" --iterations "$ITERATIONS"
