#!/bin/sh
# Runs the escape probes under `codex sandbox` and under codexd's sandbox (both backends),
# workspace-write with the network off, and prints one line per probe: exit status and the
# probe's own first line for each. Exit 0 means the attempt SUCCEEDED (an escape, or the
# intended behaviour for the control rows marked "(control)").
#
#   compare_with_codex.sh BUILD_DIR [CODEX_BIN]
# CODEX_BIN defaults to /opt/codex-ref/node_modules/.bin/codex; HOME for Codex must lie
# outside /tmp (CODEX_HOME_DIR, default /opt/codex-home).
set -u
build=${1:?usage: compare_with_codex.sh BUILD_DIR [CODEX_BIN]}
codex=${2:-/opt/codex-ref/node_modules/.bin/codex}
codex_home=${CODEX_HOME_DIR:-/opt/codex-home}
exec_tool=$build/tests/sandbox/sandbox_exec
ws=$(mktemp -d /tmp/codexd-compare-XXXXXX)
probe=$ws.probe
cp "$build/tests/sandbox/sandbox_probe" "$probe"
trap 'rm -rf "$ws" "$probe"' EXIT
cd "$ws" && git init -q . && mkdir src
python3 -c "import socket,os,sys; s=socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind('$ws/host-dgram.sock'); os.set_inheritable(s.fileno(), False); sys.stdin.read()" </dev/zero >/dev/null 2>&1 &
dgram_pid=$!
trap 'kill $dgram_pid 2>/dev/null; rm -rf "$ws" "$probe"' EXIT
while [ ! -S "$ws/host-dgram.sock" ]; do sleep 0.05; done

run() {  # runner-name probe-args...
  name=$1; shift
  case $name in
    codex) out=$(HOME=$codex_home "$codex" sandbox -P :workspace -C "$ws" -- "$probe" "$@" 2>&1) ;;
    bwrap) out=$("$exec_tool" --backend=bwrap -- "$probe" "$@" 2>&1) ;;
    landlock) out=$("$exec_tool" --backend=landlock -- "$probe" "$@" 2>&1) ;;
  esac
  printf '%s' "$? $(printf '%s' "$out" | head -n1 | cut -c1-40)"
}

printf '%-44s | %-46s | %-46s | %s\n' probe codex codexd-bwrap codexd-landlock
while read -r line; do
  [ -z "$line" ] && continue
  # shellcheck disable=SC2086
  printf '%-44s | %-46s | %-46s | %s\n' "$line" "$(run codex $line)" "$(run bwrap $line)" "$(run landlock $line)"
done <<PROBES
write $ws/src/control-write
socketpair-send
rewrite /proc/sys/kernel/printk_ratelimit
rewrite /proc/sys/kernel/core_pattern
unix-dgram $ws/host-dgram.sock sendmsg
unix-dgram $ws/host-dgram.sock socketpair
unix-dgram $ws/host-dgram.sock sendto
unshare-user
clone-newuser
keyctl
perf
personality
x32-getpid
unfiltered-process
write $ws/.git/config
mkdir $ws/.codex
caps
PROBES
