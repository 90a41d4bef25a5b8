#!/usr/bin/env python3
"""Checks the built man pages (issue 18 item 16): each renders with groff without a warning
about macros, escapes or characters; each has its sections; codexctl(1) documents every
subcommand the binary has, nested ones included; and docs/configuration.md, from which
codexd.toml(5) is made, documents every key the config parser reads.

  check_man_pages.py MAN_DIR CODEXCTL CONFIG_MD CONFIG_CC
"""
import gzip
import re
import subprocess
import sys

SECTIONS = {
    "codexctl.1": ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "COMMANDS", "EXIT STATUS", "ENVIRONMENT", "FILES", "EXAMPLES", "SEE ALSO"],
    "codexd.8": ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "SIGNALS", "EXIT STATUS", "ENVIRONMENT", "FILES", "EXAMPLES", "SEE ALSO"],
    "codexd.toml.5": ["NAME", "SYNOPSIS", "DESCRIPTION", "EXAMPLES", "FILES", "SEE ALSO"],
}


def fail(message: str) -> None:
    print(f"FAIL: {message}")
    global failed
    failed = True


def subcommands(help_text: str) -> list[str]:
    at = help_text.find("Subcommands:\n")
    return [] if at < 0 else re.findall(r"^  ([a-z][a-z0-9-]*)\s", help_text[at:], flags=re.M)


def help_of(codexctl: str, path: list[str]) -> str:
    return subprocess.run([codexctl, *path, "--help"], capture_output=True, text=True, check=True).stdout


failed = False
man_dir, codexctl, config_md, config_cc = sys.argv[1:5]
pages = {}
for page, wanted in SECTIONS.items():
    with gzip.open(f"{man_dir}/{page}.gz", "rt", encoding="utf-8") as f:
        pages[page] = f.read()
    # -Wbreak: notes that a long literal could not be broken or adjusted are typography.
    rendered = subprocess.run(["groff", "-man", "-Tutf8", "-z", "-wmac", "-wescape", "-wchar", "-wreg", "-wdi", "-wel", "-Wbreak"],
                              input=pages[page], capture_output=True, text=True)
    if rendered.returncode != 0 or rendered.stderr.strip():
        fail(f"{page}: groff says: {rendered.stderr.strip()}")
    have = re.findall(r'^\.SH "?([^"\n]+)"?$', pages[page], flags=re.M)
    for section in wanted:
        if section not in have:
            fail(f"{page}: no section {section} (has {have})")

# Every subcommand, nested ones too, and `policy check`, which parses its own flags.
commands = []
queue = [[sub] for sub in subcommands(help_of(codexctl, []))]
while queue:
    path = queue.pop(0)
    commands.append(path)
    queue += [path + [sub] for sub in subcommands(help_of(codexctl, path))]
commands.append(["policy", "check"])
for path in commands:
    if f'.SS "codexctl {" ".join(path)}"' not in pages["codexctl.1"]:
        fail(f"codexctl.1 has no section for `codexctl {' '.join(path)}`")
if "--resolve-host-executables" not in pages["codexctl.1"]:
    fail("codexctl.1 does not show `policy check`'s own flags")
print(f"codexctl.1: {len(commands)} commands documented")

# Every key the parser reads by name is a key of some table in docs/configuration.md (and so
# of codexd.toml(5)).
source = open(config_cc, encoding="utf-8").read()
keys = {k for k in re.findall(r'\bread\w*(?:<[^>]*>)?\((?:r,\s*)?"([a-z_0-9]+)"', source) if not k.endswith("_")}  # "agent_": a prefix
documented = set()
for line in open(config_md, encoding="utf-8"):
    if line.startswith("| `"):
        documented.update(re.findall(r"`([a-z_0-9]+)`", line.split("|")[1]))
for key in sorted(keys - documented):
    fail(f"config key `{key}` (read in {config_cc}) is not in a table of {config_md}")
for key in sorted(keys):
    if not re.search(r"^\.TP\n(?:.*, )?\\fB" + re.escape(key.replace("-", "\\-")) + r"\\fR", pages["codexd.toml.5"], flags=re.M):
        fail(f"codexd.toml.5 has no entry for `{key}`")
print(f"codexd.toml.5: {len(keys)} config keys documented")
sys.exit(1 if failed else 0)
