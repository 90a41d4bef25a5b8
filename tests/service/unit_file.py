"""A small reader for systemd unit files (the subset codexd ships): [Section] headers,
Key=Value lines, comments (# and ;), backslash line continuations, repeated keys kept in
order. Enough to assert what the units say without systemd."""

import re


class UnitFile:
    def __init__(self, path, text):
        self.path = path
        self.sections = {}  # name -> list of (key, value)
        self._parse(text)

    @classmethod
    def load(cls, path):
        with open(path, encoding="utf-8") as f:
            return cls(path, f.read())

    def _parse(self, text):
        current = None
        pending = ""
        for number, raw in enumerate(text.splitlines(), start=1):
            line = pending + raw.strip()
            pending = ""
            if line.endswith("\\"):
                pending = line[:-1] + " "
                continue
            if not line or line[0] in "#;":
                continue
            header = re.fullmatch(r"\[([A-Za-z0-9-]+)\]", line)
            if header:
                current = header.group(1)
                self.sections.setdefault(current, [])
                continue
            if current is None:
                raise ValueError(f"{self.path}:{number}: key outside a section: {line!r}")
            if "=" not in line:
                raise ValueError(f"{self.path}:{number}: not Key=Value: {line!r}")
            key, value = line.split("=", 1)
            key = key.strip()
            if not re.fullmatch(r"[A-Za-z0-9]+", key):
                raise ValueError(f"{self.path}:{number}: bad key {key!r}")
            self.sections[current].append((key, value.strip()))
        if pending:
            raise ValueError(f"{self.path}: file ends inside a line continuation")

    def values(self, section, key):
        """Every value of `key` in `section`, in order (an empty assignment resets the list,
        as systemd does for list-valued keys)."""
        out = []
        for k, v in self.sections.get(section, []):
            if k == key:
                out = [] if v == "" else out + [v]
        return out

    def get(self, section, key):
        """The effective (last) value, or None."""
        found = [v for k, v in self.sections.get(section, []) if k == key]
        return found[-1] if found else None

    def words(self, section, key):
        return [w for v in self.values(section, key) for w in v.split()]
