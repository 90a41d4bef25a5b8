#!/usr/bin/env bash
# bench/approvals/pending_memory.sh BUILD_DIR [COUNT]
#
# Issue 19 item 5: what a pending approval of a large command costs the daemon. COUNT (default
# 20) clients each run `codexctl exec --no-prompt -- mkdir <1000 arguments of 990 bytes>` (a
# 1 MB argv) against a daemon with approval_policy "untrusted", so each request waits for a
# reviewer; each codexctl also watches the approvals, as a waiting codexctl does. Prints the
# daemon's RSS before and with all of them pending, and the growth per approval as a ratio of
# the command's own size (1.0 would be one copy). With CODEXD_BENCH_CSV=FILE, one CSV row is
# appended. Asserts nothing.
set -euo pipefail

BUILD_DIR=${1:?usage: bench/approvals/pending_memory.sh BUILD_DIR [COUNT]}
COUNT=${2:-20}
BUILD_DIR=$(cd "$BUILD_DIR" && pwd)
CODEXD=${CODEXD:-$BUILD_DIR/bin/codexd}
CODEXCTL=$BUILD_DIR/bin/codexctl
for f in "$CODEXD" "$CODEXCTL"; do
  [[ -x $f ]] || { echo "missing $f" >&2; exit 1; }
done

TMP=$(mktemp -d /tmp/codexd-approvals-bench-XXXXXX)
DAEMON_PID=
cleanup() {
  pkill -f "codexctl --socket $TMP/codexd.sock" 2>/dev/null || true
  if [[ -n $DAEMON_PID ]]; then
    kill -TERM "$DAEMON_PID" 2>/dev/null || true
    wait "$DAEMON_PID" 2>/dev/null || true
  fi
  rm -rf "$TMP"
}
trap cleanup EXIT
mkdir -p "$TMP/state" "$TMP/ws"
cat >"$TMP/codexd.toml" <<EOT
[daemon]
listen = "unix:$TMP/codexd.sock"
state_dir = "$TMP/state"
[policy]
approval_policy = "untrusted"
[approvals]
max_pending_per_uid = $COUNT
EOT
"$CODEXD" --config "$TMP/codexd.toml" >"$TMP/codexd.log" 2>&1 &
DAEMON_PID=$!
pending() { "$CODEXCTL" --socket "$TMP/codexd.sock" status 2>/dev/null | awk '/^approvals:/ {print $2}'; }
for _ in $(seq 1 100); do [[ -S $TMP/codexd.sock ]] && pending >/dev/null && break; sleep 0.1; done
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$DAEMON_PID/status"; }
before=$(rss_kib)

python3 - "$CODEXCTL" "$TMP/codexd.sock" "$TMP/ws" "$COUNT" <<'PY'
import subprocess, sys
codexctl, sock, ws, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
for n in range(count):
    argv = [codexctl, "--socket", sock, "exec", "--no-prompt", "--", "mkdir"]
    argv += [f"{n}-" + chr(97 + i % 26) * 990 for i in range(1000)]
    subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ws)
PY
# Polled: the requests arrive from other processes; the status RPC is the daemon's own count.
n=0
for _ in $(seq 1 300); do n=$(pending); [[ $n == "$COUNT" ]] && break; sleep 0.1; done
# The approvals then reach every watching codexctl: the RSS is read once it has settled
# (unchanged over three readings 200 ms apart, at most 10 s).
after=$(rss_kib)
same=0
for _ in $(seq 1 50); do
  sleep 0.2
  now=$(rss_kib)
  if [[ $now == "$after" ]]; then same=$((same + 1)); else same=0; fi
  after=$now
  [[ $same -ge 3 ]] && break
done
command_kib=$(( (1000 * 993 + 6) / 1024 ))
per=$(( (after - before) / COUNT ))
ratio=$(awk -v p="$per" -v c="$command_kib" 'BEGIN {printf "%.1f", p / c}')
echo "codexd pending-approval memory ($COUNT requests of a ${command_kib} KiB argv, $n pending, each requester watching)"
printf '  daemon RSS before                %8d KiB\n' "$before"
printf '  daemon RSS with all pending      %8d KiB\n' "$after"
printf '  growth per pending approval      %8d KiB   %sx the command'"'"'s size\n' "$per" "$ratio"
if [[ -n ${CODEXD_BENCH_CSV:-} ]]; then
  echo "pending approval of a 1 MB argv: RSS per approval,$per,KiB,the argv itself,$command_kib,$ratio," >>"$CODEXD_BENCH_CSV"
fi
