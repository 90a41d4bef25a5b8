#!/usr/bin/env python3
"""Renders codexd's man pages, each from one source so that it cannot drift.

  render_man.py cli    --program BIN --name NAME --section N --version V --template T.in
                       [--also "SUB NESTED"]... --output PAGE.gz
  render_man.py config --markdown docs/configuration.md --version V --template T.in --output PAGE.gz

A template is roff written by hand (NAME, SYNOPSIS, DESCRIPTION, EXIT STATUS, ENVIRONMENT,
FILES, EXAMPLES, SEE ALSO) with markers on lines of their own, replaced here:
  @VERSION@          the version (also inside a line)
  @CLI_OPTIONS@      the program's own `--help`
  @CLI_COMMANDS@     one subsection per subcommand, nested ones too, from each one's `--help`
  @CONFIG@           docs/configuration.md: every table and paragraph, as roff
So every flag and subcommand comes from the binary itself and every config key from the one
document the daemon's tests check against; only the prose around them is written here.
"""
import argparse
import gzip
import re
import subprocess
import sys


def escape(text: str) -> str:
    """roff-safe text: backslashes, lines that would start a request, and characters beyond
    ASCII as named code points (a page must not depend on preconv)."""
    text = text.replace("\\", "\\e")
    text = "".join(c if ord(c) < 128 else f"\\[u{ord(c):04X}]" for c in text)
    return "\n".join("\\&" + line if line.startswith((".", "'")) else line for line in text.split("\n"))


def run_help(program: str, name: str, args: list[str]) -> str:
    done = subprocess.run([program, *args, "--help"], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"render_man: {program} {' '.join(args)} --help failed ({done.returncode}): {done.stderr}")
    # Usage lines name the build-tree path; the page names the installed program.
    return done.stdout.replace(f"Usage: {program}", f"Usage: {name}")


def subcommands(help_text: str) -> list[str]:
    """CLI11 lists subcommands as "  name   description" after a "Subcommands:" line."""
    at = help_text.find("Subcommands:\n")
    if at < 0:
        return []
    return re.findall(r"^  ([a-z][a-z0-9-]*)\s", help_text[at:], flags=re.M)


def preformatted(text: str) -> str:
    return ".PP\n.nf\n" + escape(text.rstrip("\n")) + "\n.fi\n"


def cli_commands(program: str, name: str, also: list[str]) -> str:
    out = []
    queue = [[sub] for sub in subcommands(run_help(program, name, []))]
    queue += [extra.split() for extra in also]
    seen = set()
    while queue:
        path = queue.pop(0)
        if tuple(path) in seen:
            continue
        seen.add(tuple(path))
        text = run_help(program, name, path)
        out.append(f'.SS "{name} {" ".join(path)}"\n' + preformatted(text))
        queue[0:0] = [path + [sub] for sub in subcommands(text)]  # nested ones right after their parent
    return "".join(out)


# -- Markdown (the subset docs/configuration.md uses) to roff --

def inline(text: str) -> str:
    """`code` and **bold** in bold, *emphasis* in italics, [text](link) as its text."""
    parts = re.split(r"(`[^`]*`)", text)
    out = []
    for part in parts:
        if part.startswith("`") and part.endswith("`") and len(part) >= 2:
            # Literal in bold; a long one may break after a comma (\\: is a break point).
            out.append("\\fB" + escape(part[1:-1]).replace("-", "\\-").replace(",", ",\\:") + "\\fR")
            continue
        part = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", part)
        part = escape(part)
        part = re.sub(r"\*\*([^*]+)\*\*", r"\\fB\1\\fR", part)
        part = re.sub(r"(?<![\w*])\*([^*\s][^*]*)\*(?![\w*])", r"\\fI\1\\fR", part)
        out.append(part)
    return "".join(out)


def table_cells(line: str) -> list[str]:
    """The cells of a Markdown table row; a | inside `code` or escaped as \\| stays in its cell."""
    cells, cell, in_code, i = [], "", False, 0
    body = line.strip()
    body = body[1:] if body.startswith("|") else body
    body = body[:-1] if body.endswith("|") and not body.endswith("\\|") else body
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body) and body[i + 1] == "|":
            cell += "|"
            i += 2
            continue
        if c == "`":
            in_code = not in_code
        if c == "|" and not in_code:
            cells.append(cell.strip())
            cell = ""
        else:
            cell += c
        i += 1
    cells.append(cell.strip())
    return cells


def config_roff(markdown: str) -> str:
    out = []
    lines = markdown.split("\n")
    i = 0
    paragraph = []

    def flush():
        if paragraph:
            out.append(".PP\n" + inline(" ".join(paragraph)) + "\n")
            paragraph.clear()

    while i < len(lines):
        line = lines[i]
        if line.startswith("# "):  # the document's title: the page has its own
            i += 1
            continue
        if line.startswith("#"):
            flush()
            level = len(line) - len(line.lstrip("#"))
            title = inline(line.lstrip("#").strip()).replace('"', "\\(dq")
            out.append((".SH" if level == 2 else ".SS") + f' "{title}"\n')
        elif line.startswith("```"):
            flush()
            block = []
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                block.append(lines[i])
                i += 1
            out.append(".PP\n.RS 4\n.nf\n" + escape("\n".join(block)) + "\n.fi\n.RE\n")
        elif line.startswith("|"):
            flush()
            header = table_cells(line)
            i += 2  # the header and the |---| row
            while i < len(lines) and lines[i].startswith("|"):
                cells = table_cells(lines[i])
                row = dict(zip(header, cells))
                key = row.get("key", cells[0])
                out.append(".TP\n" + inline(key) + "\n")
                if "default" in row:
                    out.append("Default: " + inline(row["default"]) + ".\n.br\n")
                meaning = row.get("meaning", cells[-1])
                out.append(inline(meaning) + "\n")
                i += 1
            continue
        elif re.match(r"^\s*[-*] ", line):
            flush()
            item = [re.sub(r"^\s*[-*] ", "", line)]
            while i + 1 < len(lines) and lines[i + 1].startswith("  ") and not re.match(r"^\s*[-*] ", lines[i + 1]):
                i += 1
                item.append(lines[i].strip())
            out.append(".IP \\(bu 2\n" + inline(" ".join(item)) + "\n")
        elif line.strip() == "":
            flush()
        else:
            paragraph.append(line.strip())
        i += 1
    flush()
    return "".join(out)


def write_page(template_path: str, replacements: dict[str, str], version: str, output: str) -> None:
    with open(template_path, encoding="utf-8") as f:
        template = f.read()
    page = []
    for line in template.split("\n"):
        marker = line.strip()
        page.append(replacements[marker].rstrip("\n") if marker in replacements else line.replace("@VERSION@", version))
    text = "\n".join(page)
    leftover = re.findall(r"@[A-Z_]+@", text)
    if leftover:
        sys.exit(f"render_man: {template_path}: unknown markers {leftover}")
    with gzip.GzipFile(output, "wb", mtime=0) as f:  # mtime 0: the same bytes every build
        f.write(text.encode("utf-8"))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("kind", choices=["cli", "config"])
    parser.add_argument("--program")
    parser.add_argument("--name")
    parser.add_argument("--markdown")
    parser.add_argument("--version", required=True)
    parser.add_argument("--template", required=True)
    parser.add_argument("--also", action="append", default=[])
    parser.add_argument("--output", required=True)
    args = parser.parse_args()
    if args.kind == "cli":
        replacements = {
            "@CLI_OPTIONS@": preformatted(run_help(args.program, args.name, [])),
            "@CLI_COMMANDS@": cli_commands(args.program, args.name, args.also),
        }
    else:
        with open(args.markdown, encoding="utf-8") as f:
            replacements = {"@CONFIG@": config_roff(f.read())}
    write_page(args.template, replacements, args.version, args.output)


if __name__ == "__main__":
    main()
