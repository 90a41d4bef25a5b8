#!/bin/bash
# Builds the .deb, installs it on this machine, runs the installed daemon in system mode the
# way codexd.service would (no systemd needed), talks to it with the installed codexctl, stops
# it with SIGTERM, and removes and purges the package again.
#
#   packaging/smoke_test_deb.sh BUILD_DIR
#
# Needs root (dpkg -i). Exit codes: 0 passed, 1 failed, 77 skipped (reason printed).
# The daemon runs with the unit's NoNewPrivileges and CapabilityBoundingSet (applied with
# setpriv, read from the installed unit), so a capability the daemon needs but the unit drops
# fails here rather than on a production machine.
set -euo pipefail

BUILD_DIR=${1:?usage: smoke_test_deb.sh BUILD_DIR}
SOCKET=/run/codexd/codexd.sock
CONFIG=/etc/codexd/codexd.toml
UNIT=/lib/systemd/system/codexd.service
START_TIMEOUT_S=${START_TIMEOUT_S:-20}
STOP_TIMEOUT_S=${STOP_TIMEOUT_S:-30}

log() { printf 'smoke: %s\n' "$*"; }
fail() { printf 'smoke: FAIL: %s\n' "$*" >&2; exit 1; }
skip() { printf 'smoke: SKIP: %s\n' "$*"; exit 77; }

[ "$(id -u)" = 0 ] || skip "needs root (dpkg -i, a system-mode daemon)"
command -v dpkg >/dev/null || skip "not a dpkg system"
if dpkg-query -W -f='${Status}' codexd 2>/dev/null | grep -q 'ok installed'; then
  skip "a codexd package is already installed; not replacing it"
fi
[ -e "$SOCKET" ] && skip "$SOCKET exists: another codexd is running"

daemon_pid=""
smoke_user=""
group_existed=no
getent group codexd >/dev/null && group_existed=yes
workdir=$(mktemp -d /tmp/codexd-smoke.XXXXXX)
daemon_log="$workdir/daemon.log"

cleanup() {
  local rc=$?
  if [ -n "$daemon_pid" ] && kill -0 "$daemon_pid" 2>/dev/null; then
    kill -KILL "$daemon_pid" 2>/dev/null || true
    wait "$daemon_pid" 2>/dev/null || true
  fi
  if [ -n "$smoke_user" ]; then userdel "$smoke_user" >/dev/null 2>&1 || true; fi
  if dpkg-query -W -f='${Status}' codexd 2>/dev/null | grep -q 'installed'; then
    dpkg --purge codexd >/dev/null 2>&1 || true
  fi
  if [ "$group_existed" = no ] && getent group codexd >/dev/null; then groupdel codexd 2>/dev/null || true; fi
  if [ $rc -ne 0 ] && [ $rc -ne 77 ] && [ -s "$daemon_log" ]; then
    echo "--- daemon log ---" >&2
    cat "$daemon_log" >&2
  fi
  rm -rf "$workdir"
  exit $rc
}
trap cleanup EXIT

# --- build and inspect -------------------------------------------------------------------------
log "building the package in $BUILD_DIR"
cmake --build "$BUILD_DIR" --target package -j"${JOBS:-2}" >"$workdir/build.log" 2>&1 ||
  { tail -40 "$workdir/build.log" >&2; fail "cmake --build --target package"; }
arch=$(dpkg --print-architecture)
shopt -s nullglob
debs=("$BUILD_DIR"/codexd_*_"$arch".deb)
[ ${#debs[@]} -eq 1 ] || fail "want exactly one codexd_*_$arch.deb in $BUILD_DIR, found ${#debs[@]}"
deb=${debs[0]}
log "package: $deb"
contents=$(dpkg-deb -c "$deb")
for path in ./usr/bin/codexd ./usr/bin/codexctl \
            ./usr/libexec/codexd/codexd-sandbox-helper ./usr/libexec/codexd/codexd-shim \
            ./usr/share/doc/codexd/copyright ./usr/share/doc/codexd/changelog.gz \
            ./usr/share/lintian/overrides/codexd \
            ./lib/systemd/system/codexd.service ./lib/systemd/system/codexd.socket \
            ./usr/lib/systemd/user/codexd.service ./usr/lib/systemd/user/codexd.socket \
            ./usr/lib/tmpfiles.d/codexd.conf ./etc/codexd/codexd.toml ./etc/codexd/rules/00-default.rules \
            ./usr/share/codexd/default.rules ./etc/logrotate.d/codexd \
            ./usr/share/man/man1/codexctl.1.gz ./usr/share/man/man8/codexd.8.gz ./usr/share/man/man5/codexd.toml.5.gz \
            ./usr/share/bash-completion/completions/codexctl ./usr/share/zsh/vendor-completions/_codexctl \
            ./usr/share/fish/vendor_completions.d/codexctl.fish; do
  grep -q " $path\$" <<<"$contents" || fail "package lacks $path"
done
# Only what a person runs is on $PATH.
for internal in codexd-sandbox-helper codexd-shim; do
  ! grep -q " ./usr/bin/$internal\$" <<<"$contents" || fail "package puts the internal $internal in /usr/bin"
done

# --- install -------------------------------------------------------------------------------------
log "dpkg -i"
dpkg -i "$deb" >"$workdir/dpkg.log" 2>&1 || { cat "$workdir/dpkg.log" >&2; fail "dpkg -i"; }
getent group codexd >/dev/null || fail "postinst did not create group codexd"
[ "$(stat -c '%U:%G %a' /etc/codexd)" = "root:root 755" ] || fail "/etc/codexd is $(stat -c '%U:%G %a' /etc/codexd)"
[ "$(stat -c '%U:%G %a' $CONFIG)" = "root:root 644" ] || fail "$CONFIG is $(stat -c '%U:%G %a' $CONFIG)"
conffiles=$(dpkg-query -W -f='${Conffiles}' codexd)
grep -q "$CONFIG" <<<"$conffiles" || fail "$CONFIG is not a conffile"
grep -q /etc/codexd/rules/00-default.rules <<<"$conffiles" || fail "00-default.rules is not a conffile"
grep -q /etc/logrotate.d/codexd <<<"$conffiles" || fail "the logrotate file is not a conffile"
command -v logrotate >/dev/null || fail "logrotate is not installed (scripts/deps.sh installs it)"
logrotate --debug /etc/logrotate.d/codexd >"$workdir/logrotate.log" 2>&1 ||
  { cat "$workdir/logrotate.log" >&2; fail "logrotate rejects /etc/logrotate.d/codexd"; }
log "logrotate accepts /etc/logrotate.d/codexd"
/usr/bin/codexd --check-config --config "$CONFIG" >"$workdir/check.log" 2>&1 ||
  { cat "$workdir/check.log" >&2; fail "installed config does not pass --check-config"; }

# --- run the installed daemon as the unit would ----------------------------------------------
start=(/usr/bin/codexd --config "$CONFIG")
# The unit's seccomp filters (SystemCallFilter=, RestrictAddressFamilies=), applied last, as
# systemd does (they need no_new_privs, which setpriv sets first).
if /usr/bin/python3 -c 'import seccomp' 2>/dev/null; then
  start=(/usr/bin/python3 "$(dirname "$0")/unit_syscall_filter.py" "$UNIT" -- "${start[@]}")
  log "unit syscall filter applied (packaging/unit_syscall_filter.py)"
else
  fail "python3-seccomp is missing (scripts/deps.sh installs it): the unit's syscall filter cannot be applied"
fi
if command -v setpriv >/dev/null; then
  caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$UNIT" | tr ' ' '\n' | sed -n 's/^CAP_\(.*\)/+\L\1/p' | paste -sd,)
  [ -n "$caps" ] || fail "no CapabilityBoundingSet in $UNIT"
  start=(setpriv --no-new-privs --inh-caps=-all --bounding-set="-all,$caps" -- "${start[@]}")
  log "unit limits applied: no_new_privs, bounding set $caps"
else
  log "setpriv missing: daemon runs without the unit's capability limits"
fi
# PrivateMounts= and ProtectHostname=: the unit's own mount (slave) and UTS namespaces.
grep -qx 'PrivateMounts=yes' "$UNIT" || fail "$UNIT lacks PrivateMounts=yes"
grep -qx 'ProtectHostname=yes' "$UNIT" || fail "$UNIT lacks ProtectHostname=yes"
start=(unshare --mount --propagation slave --uts -- "${start[@]}")
log "unit namespaces applied: own mount namespace (slave propagation), own UTS namespace"
(umask 0022; exec "${start[@]}") >"$daemon_log" 2>&1 &
daemon_pid=$!
log "daemon pid $daemon_pid; waiting up to ${START_TIMEOUT_S}s for $SOCKET"
for ((i = 0; i < START_TIMEOUT_S * 10; i++)); do
  [ -S "$SOCKET" ] && break
  kill -0 "$daemon_pid" 2>/dev/null || { wait "$daemon_pid" || true; fail "daemon exited before creating $SOCKET"; }
  sleep 0.1
done
[ -S "$SOCKET" ] || fail "no socket after ${START_TIMEOUT_S}s"
[ "$(stat -c '%U:%G %a' $SOCKET)" = "root:codexd 660" ] || fail "socket is $(stat -c '%U:%G %a' $SOCKET)"
[ "$(stat -c '%U:%G %a' /run/codexd)" = "root:codexd 750" ] || fail "/run/codexd is $(stat -c '%U:%G %a' /run/codexd)"

ctl=(timeout 60 /usr/bin/codexctl --socket "$SOCKET")
status_out=$("${ctl[@]}" status 2>&1) || fail "codexctl status: $status_out"
log "status: $(head -1 <<<"$status_out")"
grep -q "(system mode)" <<<"$status_out" || fail "daemon is not in system mode: $status_out"
# Where bwrap works on this machine, the unit's limits must not push the daemon to Landlock.
if setpriv --reuid=65534 --regid=65534 --clear-groups -- bwrap --unshare-user --unshare-pid \
     --ro-bind / / --proc /proc true >/dev/null 2>&1; then
  grep -q "^sandbox: *linux-bwrap" <<<"$status_out" ||
    fail "bwrap works here but the daemon did not choose it under the unit's limits: $status_out"
  log "sandbox: linux-bwrap under the unit's limits"
fi

exec_out=$(cd "$workdir" && "${ctl[@]}" exec --no-prompt -- /bin/echo ok 2>&1) || fail "codexctl exec: $exec_out"
[ "$(tr -d '\r' <<<"$exec_out")" = "ok" ] || fail "exec printed '$exec_out', want 'ok'"
log "exec -- /bin/echo ok: ok"

# A caller that is not root, only in group codexd: reaches the socket, runs as itself.
if command -v useradd >/dev/null && command -v setpriv >/dev/null; then
  smoke_user="codexd-smoke-$$"
  useradd --system --no-create-home --shell /usr/sbin/nologin --groups codexd "$smoke_user"
  uid=$(id -u "$smoke_user")
  chmod 0755 "$workdir"
  as_user=(setpriv --reuid="$uid" --regid="$(id -g "$smoke_user")" --init-groups)
  id_out=$(cd /tmp && "${as_user[@]}" "${ctl[@]}" exec --no-prompt -- /usr/bin/id -u 2>&1) ||
    fail "exec as $smoke_user: $id_out"
  [ "$(tr -d '\r' <<<"$id_out")" = "$uid" ] || fail "command of uid $uid ran as '$id_out'"
  log "exec as $smoke_user (uid $uid): ran as uid $id_out"
else
  log "useradd/setpriv missing: the non-root caller check is skipped"
fi

# --- upgrade: postinst restarts the running daemon in place, its sessions kept ---------------------
session_out=$(cd "$workdir" && "${ctl[@]}" exec --detach --no-prompt -- /bin/sleep 600 2>/dev/null) ||
  fail "codexctl exec --detach: $session_out"
session_id=$(tr -d '[:space:]' <<<"$session_out")
[[ "$session_id" =~ ^[0-9]+$ ]] || fail "exec --detach printed '$session_out', want a session id"
log "session $session_id (sleep 600) runs; reinstalling the package (postinst configure <old version>)"
dpkg -i "$deb" >"$workdir/dpkg.log" 2>&1 || { cat "$workdir/dpkg.log" >&2; fail "dpkg -i (upgrade)"; }
! grep -q "did not restart" "$workdir/dpkg.log" || { cat "$workdir/dpkg.log" >&2; fail "postinst could not restart the daemon"; }
kill -0 "$daemon_pid" 2>/dev/null || fail "the daemon (pid $daemon_pid) is gone after the upgrade; a restart in place keeps its pid"
sessions_out=$("${ctl[@]}" sessions 2>&1) || fail "codexctl sessions after the upgrade: $sessions_out"
grep -Eq "^ *$session_id +.*running" <<<"$sessions_out" ||
  fail "session $session_id did not survive the upgrade: $sessions_out"
log "upgrade: same daemon pid $daemon_pid, session $session_id still running"
"${ctl[@]}" kill "$session_id" >/dev/null 2>&1 || fail "codexctl kill $session_id"

# --- stop ----------------------------------------------------------------------------------------
log "SIGTERM"
kill -TERM "$daemon_pid"
# `wait` returns when the daemon exits; the watchdog bounds it.
( sleep "$STOP_TIMEOUT_S"; kill -KILL "$daemon_pid" 2>/dev/null ) &
watchdog=$!
rc=0
wait "$daemon_pid" || rc=$?
kill "$watchdog" 2>/dev/null || true
daemon_pid=""
[ $rc -eq 0 ] || fail "daemon exited with $rc after SIGTERM"
[ ! -e "$SOCKET" ] || fail "daemon left $SOCKET behind"
log "daemon exited 0 and removed its socket"

# --- remove and purge --------------------------------------------------------------------------
dpkg -r codexd >"$workdir/dpkg.log" 2>&1 || { cat "$workdir/dpkg.log" >&2; fail "dpkg -r"; }
[ ! -e /usr/bin/codexd ] || fail "dpkg -r left /usr/bin/codexd"
[ -e "$CONFIG" ] || fail "dpkg -r removed the conffile $CONFIG (only purge may)"
dpkg --purge codexd >"$workdir/dpkg.log" 2>&1 || { cat "$workdir/dpkg.log" >&2; fail "dpkg --purge"; }
[ ! -e /etc/codexd ] || fail "purge left /etc/codexd"
[ ! -e /var/lib/codexd ] || fail "purge left /var/lib/codexd (the private /tmp directories)"
for state in /var/lib/systemd/deb-systemd-helper-enabled /var/lib/systemd/deb-systemd-helper-masked; do
  leftover=$(find "$state" -name 'codexd*' 2>/dev/null || true)
  [ -z "$leftover" ] || fail "purge left deb-systemd-helper state: $leftover"
done
log "removed and purged"
log "PASS"
