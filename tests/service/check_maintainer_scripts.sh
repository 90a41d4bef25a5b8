#!/bin/sh
# Checks packaging/debian: maintainer scripts parse (sh -n), are executable and lint clean
# (with the shellcheck tool), and conffiles name exactly the files installed under /etc.
# Exit 77 (skip) when that tool is missing, after the other checks passed.
set -u
src=${1:?usage: check_maintainer_scripts.sh SOURCE_DIR}
dir="$src/packaging/debian"
status=0

for script in postinst prerm postrm; do
  path="$dir/$script"
  [ -x "$path" ] || { echo "FAIL: $path is not executable"; status=1; }
  sh -n "$path" || { echo "FAIL: $path does not parse"; status=1; }
  head -1 "$path" | grep -qx '#!/bin/sh' || { echo "FAIL: $path must start with #!/bin/sh"; status=1; }
  grep -qx 'set -e' "$path" || { echo "FAIL: $path lacks set -e"; status=1; }
done
grep -q 'addgroup --system codexd' "$dir/postinst" || { echo "FAIL: postinst does not create group codexd"; status=1; }
grep -q 'install -d -o root -g root -m 0755 /etc/codexd' "$dir/postinst" ||
  { echo "FAIL: postinst does not create /etc/codexd root 0755"; status=1; }
if ! grep -q '\[ -d /run/systemd/system \]' "$dir/prerm" || ! grep -q 'deb-systemd-invoke stop codexd.socket codexd.service' "$dir/prerm"; then
  echo "FAIL: prerm does not stop the units through deb-systemd-invoke when systemd runs"
  status=1
fi
grep -q 'deb-systemd-helper purge' "$dir/postrm" || { echo "FAIL: postrm purge does not forget the units' state"; status=1; }
grep -q 'deb-systemd-helper update-state' "$dir/postinst" || { echo "FAIL: postinst does not register the units"; status=1; }
grep -q 'daemon restart' "$dir/postinst" || { echo "FAIL: postinst does not restart a running daemon in place on upgrade"; status=1; }
# Debian wants units started, stopped, enabled and disabled through deb-systemd-*; systemctl
# only reloads units.
for script in postinst prerm postrm; do
  if grep -E '(^|[;&|]|then|do)[[:space:]]*systemctl[[:space:]]' "$dir/$script" | grep -qv 'daemon-reload'; then
    echo "FAIL: $script calls systemctl for more than daemon-reload"
    status=1
  fi
done

want="/etc/codexd/codexd.toml
/etc/codexd/rules/00-default.rules
/etc/logrotate.d/codexd"
[ "$(cat "$dir/conffiles")" = "$want" ] || { echo "FAIL: conffiles differ from: $want"; status=1; }
grep -q "install(FILES codexd.toml DESTINATION /etc/codexd" "$src/packaging/CMakeLists.txt" ||
  { echo "FAIL: packaging/CMakeLists.txt does not install codexd.toml to /etc/codexd"; status=1; }
grep -q "DESTINATION /etc/codexd/rules RENAME 00-default.rules" "$src/packaging/CMakeLists.txt" ||
  { echo "FAIL: packaging/CMakeLists.txt does not install 00-default.rules"; status=1; }

# A self-check: a script with a syntax error must be caught.
bad=$(mktemp)
printf '#!/bin/sh\nset -e\nif then\n' >"$bad"
if sh -n "$bad" 2>/dev/null; then echo "FAIL: self-check: sh -n accepted a broken script"; status=1; fi
rm -f "$bad"

[ $status -eq 0 ] || exit 1
if ! command -v shellcheck >/dev/null; then
  echo "SKIP: shellcheck not installed (apt-get install shellcheck); sh -n and content checks passed"
  exit 77
fi
shellcheck -s sh "$dir/postinst" "$dir/prerm" "$dir/postrm" || exit 1
shellcheck "$src/packaging/smoke_test_deb.sh" "$0" || exit 1
echo "ok: maintainer scripts parse, pass shellcheck, conffiles match"
