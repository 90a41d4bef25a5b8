#!/usr/bin/env bash
# bench/exec_supervision/run.sh BUILD_DIR [EXECS] [--build]
#
# What exec supervision (docs/sandbox.md §4b) adds. Three daemons in one run, alike but for
# [exec] exec_supervision ("off", "audit" (the default) and "enforce", with a rules file of 1,000 prefix rules that
# never match /bin/true, so each exec is looked up for real). In each, `codexctl exec` runs a
# sandboxed shell loop of EXECS (default 2000) `/bin/true` and measures the loop inside the
# sandbox; three alternating rounds, medians printed: the loop's time per exec off and on, the
# difference (the cost per exec) and the ratio. With --build, it also compiles this project's
# policies library with `make -j2` under each daemon (configured once, outside) and prints the
# slowdown. With CODEXD_BENCH_CSV=FILE, a CSV row per figure is appended. Asserts nothing.
set -euo pipefail

BUILD_DIR=${1:?usage: bench/exec_supervision/run.sh BUILD_DIR [EXECS] [--build]}
EXECS=${2:-2000}
WITH_BUILD=${3:-}
BUILD_DIR=$(cd "$BUILD_DIR" && pwd)
SOURCE_DIR=$(cd "$(dirname "$0")/../.." && pwd)
CODEXD=$BUILD_DIR/bin/codexd
CODEXCTL=$BUILD_DIR/bin/codexctl
for f in "$CODEXD" "$CODEXCTL"; do [[ -x $f ]] || { echo "missing $f" >&2; exit 1; }; done

TMP=$(mktemp -d /var/tmp/codexd-supervision-bench-XXXXXX)
chmod 755 "$TMP"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  rm -rf "$TMP"
}
trap cleanup EXIT
mkdir -p "$TMP/rules" "$TMP/ws"
chmod 755 "$TMP/ws"
python3 - "$TMP/rules/many.rules" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(1000):
        f.write(f'prefix_rule(pattern = ["tool{i}", "sub{i}"], decision = "prompt")\n')
PY

start_daemon() {  # name mode
  local dir=$TMP/$1
  mkdir -p "$dir/state" "$dir/sock"
  cat >"$dir/codexd.toml" <<EOT
[daemon]
listen = "unix:$dir/sock/codexd.sock"
state_dir = "$dir/state"
[exec]
exec_supervision = "$2"
[policy]
rules_dirs = ["$TMP/rules"]
EOT
  "$CODEXD" --config "$dir/codexd.toml" --mode user >"$dir/codexd.log" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 1 100); do "$CODEXCTL" --socket "$dir/sock/codexd.sock" status >/dev/null 2>&1 && return; sleep 0.1; done
  echo "daemon $1 did not start" >&2; cat "$dir/codexd.log" >&2; exit 1
}
start_daemon off off
start_daemon audit audit
start_daemon on enforce

# Nanoseconds for the loop, measured inside the sandbox.
loop_ns() {  # name
  (cd "$TMP/ws" && "$CODEXCTL" --socket "$TMP/$1/sock/codexd.sock" exec -- /bin/sh -c \
    "s=\$(date +%s%N); i=0; while [ \$i -lt $EXECS ]; do /bin/true; i=\$((i+1)); done; e=\$(date +%s%N); echo \$((e-s))") | tail -1
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

off=(); audit=(); on=()
for _ in 1 2 3; do
  off+=("$(loop_ns off)")
  audit+=("$(loop_ns audit)")
  on+=("$(loop_ns on)")
done
off_ns=$(printf '%s\n' "${off[@]}" | median)
audit_ns=$(printf '%s\n' "${audit[@]}" | median)
on_ns=$(printf '%s\n' "${on[@]}" | median)
python3 - "$off_ns" "$on_ns" "$EXECS" "$audit_ns" <<'PY'
import sys
off, on, n, audit = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
print(f"exec supervision, {n} execs of /bin/true in a sandboxed sh loop, medians of 3 rounds:")
print(f"  off:     {off / n / 1e3:8.1f} us per exec (the loop's own fork+exec)")
print(f"  audit:   {audit / n / 1e3:8.1f} us per exec, added {(audit - off) / n / 1e3:.1f} us, ratio {audit / off:.2f}x")
print(f"  enforce: {on / n / 1e3:8.1f} us per exec, added {(on - off) / n / 1e3:.1f} us, ratio {on / off:.2f}x")
PY

build_s=
if [[ $WITH_BUILD == --build ]]; then
  cmake -S "$SOURCE_DIR" -B "$TMP/ws/b" -G "Unix Makefiles" -DCMAKE_BUILD_TYPE=Release >/dev/null
  chmod -R a+rwX "$TMP/ws/b"
  build_time() {  # name
    make -C "$TMP/ws/b" clean >/dev/null 2>&1 || true
    local s e
    s=$(date +%s%N)
    (cd "$TMP/ws" && "$CODEXCTL" --socket "$TMP/$1/sock/codexd.sock" exec -- make -C b -j2 codexd_policy >"$TMP/make-$1.log" 2>&1) || { echo "make under the $1 daemon failed:" >&2; tail -20 "$TMP/make-$1.log" >&2; exit 1; }
    e=$(date +%s%N)
    echo $(( (e - s) / 1000000 ))
  }
  b_off=$(build_time off); b_on=$(build_time on)
  b_off2=$(build_time off); b_on2=$(build_time on)
  python3 - "$b_off" "$b_on" "$b_off2" "$b_on2" <<'PY'
import sys
off1, on1, off2, on2 = map(int, sys.argv[1:])
off, on = min(off1, off2), min(on1, on2)
print(f"make -j2 codexd_policy under codexd (best of 2): off {off / 1000:.1f} s, enforce {on / 1000:.1f} s, "
      f"slowdown {100 * (on - off) / off:+.1f}%")
PY
  build_s="$(( b_off < b_off2 ? b_off : b_off2 )),$(( b_on < b_on2 ? b_on : b_on2 ))"
fi
if [[ -n ${CODEXD_BENCH_CSV:-} ]]; then
  python3 - "$off_ns" "$on_ns" "$EXECS" "$build_s" "$audit_ns" >>"$CODEXD_BENCH_CSV" <<'PY'
import sys
off, on, n, build, audit = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
print(f"sandboxed exec of /bin/true with exec supervision audit,{audit / n / 1e3:.1f},us,the same with it off,"
      f"{off / n / 1e3:.1f},{audit / off:.2f},")
print(f"sandboxed exec of /bin/true with exec supervision enforce,{on / n / 1e3:.1f},us,the same with it off,"
      f"{off / n / 1e3:.1f},{on / off:.2f},")
if build:
    b_off, b_on = (int(x) for x in build.split(","))
    print(f"make -j2 codexd_policy with exec supervision enforce,{b_on / 1000:.1f},s,the same with it off,"
          f"{b_off / 1000:.1f},{b_on / b_off:.2f},<=1.05x")
PY
fi
