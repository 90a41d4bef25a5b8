#!/usr/bin/env python3
"""Lists functions longer than a limit (default 80 lines) in codexd's product code.

Braces are counted with comments and literals blanked out; a function is a scope whose
header has a parameter list (lambdas and blocks inside it count toward it). Exit 1 when a
function outside the allowlist is over the limit, so it can run as a test.
Usage: function_lengths.py [--limit N] [--all] REPO_ROOT
"""
import argparse
import os
import re
import sys

ROOMS = ["base", "client", "daemon", "platform", "policies", "proto"]
# Registration tables: one entry after another, each small (CLI11 subcommands and options;
# Starlark's builtin functions and methods, each a short lambda registered by name).
ALLOWED = {
    ("client/codexctl_main.cc", "run"),  # the CLI registration table (main only exits with its code)
    ("policies/starlark/builtins.cc", "standard_globals"),
    ("policies/starlark/methods.cc", "string_methods"),
    ("policies/starlark/methods.cc", "list_methods"),
    ("policies/starlark/methods.cc", "dict_methods"),
}


def in_number(text, i):
    """True when text[i] follows a numeric literal's digits (a C++14 digit separator)."""
    j = i
    while j > 0 and (text[j - 1].isalnum() or text[j - 1] in "'."):
        j -= 1
    return j < i and text[j].isdigit()


def strip_code(text):
    """Blanks out comments, string and char literals (keeps newlines), so braces can be counted."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i)); i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j])); i = j
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not (text[i-1].isalnum() or text[i-1] == "_")):
            k = text.find("(", i + 2)
            delim = ")" + text[i + 2:k] + '"'
            j = text.find(delim, k)
            j = n if j < 0 else j + len(delim)
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j])); i = j
        elif c == "'" and in_number(text, i) and i + 1 < n and text[i + 1].isalnum():
            out.append(c); i += 1  # a digit separator (10'000), not a char literal
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                if text[j] == "\\": j += 1
                if j < n and text[j] == "\n": break
                j += 1
            j = min(n, j + 1)
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j])); i = j
        else:
            out.append(c); i += 1
    return "".join(out)


def functions(path):
    with open(path, errors="replace") as f:
        code = strip_code(f.read())
    lines = code.split("\n")
    depth = 0
    stmt_start = 0
    open_line = None
    scopes = []  # stack of (is_function, start_line, header)
    for idx, line in enumerate(lines):
        stripped = line.strip()
        if depth == 0 and stripped == "":
            pass
        for ch in line:
            if ch == "{":
                header = " ".join(l.strip() for l in lines[stmt_start:idx + 1])
                kind = "function"
                h = header.split("{")[0]
                if re.match(r"^\s*(namespace|class|struct|enum|union|extern)\b", h) or "(" not in h or re.search(r"=\s*$", h):
                    kind = "other"
                if scopes and scopes[-1][0] == "function":
                    kind = "inner"
                scopes.append((kind, stmt_start, h))
                depth += 1
            elif ch == "}":
                depth -= 1
                if scopes:
                    kind, start, h = scopes.pop()
                    if kind == "function":
                        m = re.findall(r"([A-Za-z_~][\w:~]*)\s*\(", h)
                        name = m[0] if m else h[:40]
                        yield name, start + 1, idx - start + 1
            elif ch == ";":
                pass
        # the next statement starts after a line that ends a statement or opens/closes a scope
        if stripped.endswith((";", "{", "}", ":")) or stripped.startswith("#") or stripped == "":
            stmt_start = idx + 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=80)
    ap.add_argument("--all", action="store_true", help="also list the allowlisted ones")
    ap.add_argument("root")
    args = ap.parse_args()
    over = []
    for room in ROOMS:
        for dirpath, _, files in os.walk(os.path.join(args.root, room)):
            for name in sorted(files):
                if not name.endswith((".cc", ".h")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, args.root)
                for func, line, length in functions(path):
                    if length > args.limit:
                        short = func.split("::")[-1]
                        allowed = (rel, short) in ALLOWED
                        if allowed and not args.all:
                            continue
                        over.append((length, rel, line, func, allowed))
    for length, rel, line, func, allowed in sorted(over, reverse=True):
        print(f"{rel}:{line}: {func}: {length} lines{' (registration table, allowed)' if allowed else ''}")
    bad = [o for o in over if not o[4]]
    print(f"{len(bad)} function(s) over {args.limit} lines")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
