#!/bin/bash
# Builds the libFuzzer targets in BUILD_DIR (clang, -DCODEXD_FUZZ=ON) and runs each for a
# share of SECONDS, seeded from the repository's rules files. Exits non-zero on a finding.
# Usage: tests/fuzz/run_fuzzers.sh BUILD_DIR SECONDS
set -euo pipefail
BUILD_DIR=${1:?usage: run_fuzzers.sh BUILD_DIR SECONDS}
mkdir -p "$BUILD_DIR"
BUILD_DIR=$(cd "$BUILD_DIR" && pwd)  # absolute: the fuzzers run from inside it
SECONDS_TOTAL=${2:?usage: run_fuzzers.sh BUILD_DIR SECONDS}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TARGETS=(fuzz_starlark_parse fuzz_starlark_eval fuzz_rules_load fuzz_shell_split fuzz_http2_guard)

CC=clang CXX=clang++ cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCODEXD_FUZZ=ON \
  -DCODEXD_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD_DIR" --target "${TARGETS[@]}" -j2

# Seed corpora: every rules file we ship or test with; shell scripts for the splitter.
SEEDS="$BUILD_DIR/fuzz-seeds"
mkdir -p "$SEEDS/rules" "$SEEDS/shell" "$SEEDS/http2"
cp "$ROOT"/policies/default.rules "$SEEDS/rules/"
find "$ROOT/tests/conformance/execpolicy/rules" -name '*.rules' -exec cp {} "$SEEDS/rules/" \;
i=0
# shellcheck disable=SC2016 # the seeds are shell text, not expansions
for s in 'ls -la && git status' "echo 'a b' | wc -l; pwd" 'rg -g"*.py" x || true' 'gh run view 1 > /tmp/log && echo saved' \
         'FOO=1 make 2>&1 # c' 'echo $(id) `x` ${y}' 'cat <<EOF
x
EOF' '(ls) & { a; }'; do
  printf '%s' "$s" > "$SEEDS/shell/seed$i"; i=$((i + 1))
done

# HTTP/2 client streams: the preface, SETTINGS, a header block in HEADERS + CONTINUATION, DATA.
printf 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\4\0\0\0\0\0\0\0\x0a\1\0\0\0\0\1aaaaaaaaaa\0\0\x05\x09\4\0\0\0\1bbbbb\0\0\x05\0\1\0\0\0\1\0\0\0\0\0' \
  > "$SEEDS/http2/seed0"

PER_TARGET=$(( SECONDS_TOTAL / ${#TARGETS[@]} ))
[ "$PER_TARGET" -lt 1 ] && PER_TARGET=1
status=0
for t in "${TARGETS[@]}"; do
  seed="$SEEDS/rules"; [ "$t" = fuzz_shell_split ] && seed="$SEEDS/shell"; [ "$t" = fuzz_http2_guard ] && seed="$SEEDS/http2"
  work="$BUILD_DIR/fuzz-corpus/$t"; mkdir -p "$work"
  echo "== $t for ${PER_TARGET}s"
  if ! (cd "$BUILD_DIR" && "./tests/fuzz/$t" -max_total_time="$PER_TARGET" -timeout=10 -rss_limit_mb=2048 \
        -max_len=4096 -print_final_stats=1 "$work" "$seed" 2>&1 | tail -n 12); then
    status=1
  fi
done
exit $status
