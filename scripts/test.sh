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

# codexd refuses to run its sandbox helper from inside a writable root (a sandboxed command
# could replace it), and /tmp and $TMPDIR are writable roots by default: from a checkout
# there, every sandboxed test would be rejected with SANDBOX_UNAVAILABLE.
for tmp in /tmp "${TMPDIR:-/tmp}"; do
  tmp=$(realpath -m "$tmp")
  case "$(pwd -P)/" in
    "$tmp"/*) echo "test.sh: the checkout $(pwd -P) is under $tmp, a default writable root of the sandbox; clone it elsewhere (e.g. /opt/src/codexd)" >&2
              exit 1 ;;
  esac
done
# The system-mode and isolation tests run clients as other users (nobody, created test users):
# they must be able to reach the built binaries.
dir=$(pwd -P)
while [ "$dir" != / ]; do
  if [ "$(( 0$(stat -c %a "$dir") & 1 ))" = 0 ]; then
    echo "test.sh: $dir is not searchable by other users (mode $(stat -c %a "$dir")); the tests run clients as other uids, so clone the repository where every user can reach it (e.g. /opt/src/codexd), or chmod o+x $dir" >&2
    exit 1
  fi
  dir=$(dirname "$dir")
done
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
