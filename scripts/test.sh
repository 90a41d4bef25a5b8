#!/usr/bin/env bash
# Runs every test: installs what is needed, builds twice (normal, and ASan+UBSan), runs the
# whole CTest suite in both (unit, integration, sandbox escape, approvals, system-mode,
# service-file and conformance tests), the libFuzzer targets for a bounded time, and the
# .deb install smoke test and lintian. Exits non-zero on any failure. CI runs exactly this (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
FUZZ_SECONDS=${FUZZ_SECONDS:-96}  # 12 s for each of the 8 fuzz targets
start=$(date +%s)

# Any checkout works, /tmp or a directory other users cannot reach included: the programs that
# other uids and sandboxed commands execute run from copies the tests make (cmake/TestStage.cmake).
step() { printf '\n==== %s (%ds)\n' "$1" $(( $(date +%s) - start )); }

step "dependencies"
./scripts/deps.sh

step "build (Release)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$JOBS"

step "tests (Release)"
ctest --test-dir build -j "$JOBS" --output-on-failure --timeout 600

step "build (ASan + UBSan)"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCODEXD_SANITIZE=ON -DCODEXD_BUILD_BENCH=OFF >/dev/null
cmake --build build-asan -j "$JOBS"

step "tests (ASan + UBSan)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan -j "$JOBS" --output-on-failure --timeout 900

step "fuzzing (${FUZZ_SECONDS}s)"
tests/fuzz/run_fuzzers.sh build-fuzz "$FUZZ_SECONDS"

step "debian package install smoke test"
packaging/smoke_test_deb.sh build

step "debian package: lintian"
packaging/lintian_check.sh build

step "all tests passed"
