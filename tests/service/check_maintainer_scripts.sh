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
for script in prerm postrm; do
  if ! grep -q '\[ -d /run/systemd/system \]' "$dir/$script" || ! grep -q 'systemctl stop codexd.service' "$dir/$script"; then
    echo "FAIL: $script does not stop the service when systemd runs"
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
