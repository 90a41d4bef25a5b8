#!/bin/bash
# Builds the .deb and runs lintian on it: any error or warning fails (overrides, each with its
# reason, are in packaging/debian/lintian-overrides; an override that no longer matches fails
# too, so none outlives its cause). Informational tags are printed, not failed on.
#
#   packaging/lintian_check.sh BUILD_DIR
#
# Exit codes: 0 passed, 1 failed, 77 skipped (reason printed).
set -euo pipefail

BUILD_DIR=${1:?usage: lintian_check.sh BUILD_DIR}
log() { printf 'lintian: %s\n' "$*"; }
fail() { printf 'lintian: FAIL: %s\n' "$*" >&2; exit 1; }

command -v lintian >/dev/null || { log "SKIP: lintian is not installed (apt-get install lintian)"; exit 77; }
cmake --build "$BUILD_DIR" --target package -j"${JOBS:-2}" >/dev/null
arch=$(dpkg --print-architecture)
shopt -s nullglob
debs=("$BUILD_DIR"/codexd_*_"$arch".deb)
[ ${#debs[@]} -eq 1 ] || fail "want exactly one codexd_*_$arch.deb in $BUILD_DIR, found ${#debs[@]}"

# lintian warns when it runs as root; it needs no privilege, so it runs as nobody on a copy.
workdir=$(mktemp -d /var/tmp/codexd-lintian.XXXXXX)
trap 'rm -rf "$workdir"' EXIT
cp "${debs[0]}" "$workdir/"
chmod 0755 "$workdir"
chmod 0644 "$workdir"/*.deb
run=(lintian --tag-display-limit 0)
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  run=(setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$workdir" "${run[@]}")
fi
deb="$workdir/$(basename "${debs[0]}")"
rc=0
out=$("${run[@]}" --fail-on "error,warning" "$deb" 2>&1) || rc=$?
printf '%s\n' "$out"
if grep -Eq '^[EW]: |mismatched-override|unused-override' <<<"$out"; then
  fail "lintian reports errors, warnings or stale overrides (above)"
fi
[ $rc -eq 0 ] || fail "lintian exited $rc"
# What is overridden, for the log (lintian exits 2 when it shows overridden errors: not a verdict).
overridden=$("${run[@]}" --show-overrides "$deb" 2>&1 | grep '^O: ' || true)
printf '%s\n' "$overridden"
log "PASS: $(basename "$deb"): no errors, no warnings; $(grep -c '^O: ' <<<"$overridden") overridden (packaging/debian/lintian-overrides says why)"
