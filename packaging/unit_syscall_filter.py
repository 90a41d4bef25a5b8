#!/usr/bin/python3
"""Runs a command under a systemd unit's seccomp settings, as systemd would apply them.

    unit_syscall_filter.py UNIT_FILE -- COMMAND [ARG...]

The package smoke test starts the installed daemon with this, so that a syscall the unit
denies but codexd, bwrap or a command needs fails there, not on a production machine. Emulated:
SystemCallFilter= (a "~" deny list of names and @groups, expanded by `systemd-analyze
syscall-filter`, the same table systemd uses), SystemCallErrorNumber= and
RestrictAddressFamilies= (an allow list: socket() of another family fails with EAFNOSUPPORT).
Not emulated: LockPersonality=, RestrictRealtime=, SystemCallArchitectures= (filters that only
take calls away that codexd never makes). Needs no_new_privs (setpriv --no-new-privs) or
CAP_SYS_ADMIN, as seccomp does; uses Debian's python3-seccomp (libseccomp's bindings).
"""
import errno
import os
import socket
import subprocess
import sys

import seccomp


def unit_settings(path):
    """The [Service] assignments of a unit file; repeated keys accumulate, as systemd's lists do."""
    settings = {}
    section = None
    with open(path, encoding="utf-8") as unit:
        for raw in unit:
            line = raw.strip()
            if not line or line.startswith(("#", ";")):
                continue
            if line.startswith("["):
                section = line
                continue
            if section == "[Service]" and "=" in line:
                key, value = line.split("=", 1)
                settings.setdefault(key.strip(), []).append(value.strip())
    return settings


def expand(names):
    """Syscall names for a list of names and @groups (nested groups included)."""
    calls = set()
    for name in names:
        if not name.startswith("@"):
            calls.add(name)
            continue
        listing = subprocess.run(["systemd-analyze", "syscall-filter", name], check=True,
                                 capture_output=True, text=True).stdout
        for line in listing.splitlines()[1:]:
            word = line.strip()
            if word and not word.startswith("#"):
                calls |= expand([word]) if word.startswith("@") else {word}
    return calls


def build_filter(settings):
    action_errno = errno.EPERM
    for value in settings.get("SystemCallErrorNumber", []):
        action_errno = getattr(errno, value)
    rules = seccomp.SyscallFilter(seccomp.ALLOW)
    denied = []
    for value in settings.get("SystemCallFilter", []):
        if not value.startswith("~"):
            sys.exit(f"unit_syscall_filter: only deny lists (~...) are emulated, not '{value}'")
        for call in sorted(expand(value[1:].split())):
            try:
                rules.add_rule(seccomp.ERRNO(action_errno), call)
                denied.append(call)
            except (RuntimeError, ValueError):
                pass  # not a syscall on this architecture (systemd skips those too)
    families = [f for value in settings.get("RestrictAddressFamilies", []) for f in value.split()]
    if families:
        allowed = {int(getattr(socket, name)) for name in families}
        for family in range(0, 64):
            if family not in allowed:
                rules.add_rule(seccomp.ERRNO(errno.EAFNOSUPPORT), "socket", seccomp.Arg(0, seccomp.EQ, family))
    return rules, denied, families


def main():
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        sys.exit("usage: unit_syscall_filter.py UNIT_FILE -- COMMAND [ARG...]")
    settings = unit_settings(sys.argv[1])
    rules, denied, families = build_filter(settings)
    print(f"unit_syscall_filter: {len(denied)} syscalls denied, socket families {' '.join(families) or 'all'}",
          file=sys.stderr, flush=True)
    rules.load()
    os.execvp(sys.argv[3], sys.argv[3:])


if __name__ == "__main__":
    main()
