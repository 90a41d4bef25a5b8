#!/usr/bin/env python3
"""The shipped /etc/codexd/codexd.toml (packaging/codexd.toml) must pass
`codexd --check-config`, and so must the same file with every commented `key = value` line
and `[table]` header uncommented: the commented defaults are real keys with valid values.
A copy with a misspelt key must fail, so the check can fail."""

import argparse
import os
import re
import subprocess
import sys
import tempfile

COMMENTED_SETTING = re.compile(r"^# ?((\[[a-z_.]+\])|([A-Za-z_]+ = .*))$")


def uncomment(text):
    out = []
    for line in text.splitlines():
        match = COMMENTED_SETTING.match(line)
        out.append(match.group(1) if match else line)
    return "\n".join(out) + "\n"


def check(codexd, text, name):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        result = subprocess.run([codexd, "--check-config", "--config", path], capture_output=True, text=True)
        return result.returncode, (result.stdout + result.stderr).strip()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--codexd", required=True)
    parser.add_argument("--source", required=True)
    args = parser.parse_args()
    with open(os.path.join(args.source, "packaging", "codexd.toml"), encoding="utf-8") as f:
        shipped = f.read()
    expanded = uncomment(shipped)
    uncommented = sum(1 for a, b in zip(shipped.splitlines(), expanded.splitlines()) if a != b)
    failures = []
    for text, name, want_ok in ((shipped, "codexd.toml", True),
                                (expanded, "uncommented.toml", True),
                                (shipped.replace('mode = "system"', 'mdoe = "system"'), "typo.toml", False)):
        rc, output = check(args.codexd, text, name)
        if (rc == 0) != want_ok:
            failures.append(f"{name}: codexd --check-config exited {rc}, want {'0' if want_ok else 'non-zero'}:\n{output}")
        if want_ok and 'mode = "system"' in text and "/run/codexd/codexd.sock" not in output:
            failures.append(f"{name}: not a system-mode config (socket line missing):\n{output}")
    if uncommented < 30:
        failures.append(f"only {uncommented} commented settings found; the pattern no longer matches the file")
    for failure in failures:
        print("FAIL:", failure)
    if failures:
        return 1
    print(f"ok: shipped config and its {uncommented} commented settings pass --check-config; a typo fails")
    return 0


if __name__ == "__main__":
    sys.exit(main())
