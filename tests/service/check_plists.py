#!/usr/bin/env python3
"""Checks codexd's launchd property lists (packaging/macos/*.plist): they parse, the label
matches the file name, the program is an absolute path (launchd does no PATH search we want
to rely on), the mode flags are right, and launchd restarts the daemon after a crash but
not after a clean exit. A built-in bad plist must be rejected, so the checks can fail."""

import argparse
import os
import plistlib
import sys


def check(name, plist, mode):
    errors = []

    def expect(condition, message):
        if not condition:
            errors.append(f"{name}: {message}")

    expect(plist.get("Label") == os.path.splitext(name)[0], f"Label {plist.get('Label')!r} differs from the file name")
    args = plist.get("ProgramArguments")
    expect(isinstance(args, list) and args, "ProgramArguments missing")
    if not (isinstance(args, list) and args):
        return errors
    expect(args[0].startswith("/") and args[0].endswith("/codexd"), f"program {args[0]!r} is not an absolute codexd path")
    expect("Program" not in plist, "Program and ProgramArguments both set")
    pairs = list(zip(args[1:], args[2:]))
    expect(("--mode", mode) in pairs, f"ProgramArguments lack --mode {mode}")
    keep_alive = plist.get("KeepAlive")
    expect(isinstance(keep_alive, dict) and keep_alive.get("SuccessfulExit") is False,
           f"KeepAlive={keep_alive!r}: want {{SuccessfulExit: false}} (restart on failure only)")
    expect(plist.get("RunAtLoad") is True, "RunAtLoad is not true")
    expect(isinstance(plist.get("ExitTimeOut"), int) and plist["ExitTimeOut"] >= 10,
           "ExitTimeOut too short for the daemon to end its sessions")
    if mode == "system":
        expect(plist.get("UserName", "root") == "root", "a LaunchDaemon for system mode must run as root")
        listen = [b for a, b in pairs if a == "--listen"]
        expect(listen == ["unix:/var/run/codexd/codexd.sock"], f"--listen {listen}: macOS has no /run")
        config = [b for a, b in pairs if a == "--config"]
        expect(len(config) == 1 and config[0].startswith("/"), "--config must name an absolute file")
    else:
        expect("UserName" not in plist, "a LaunchAgent runs as its user; UserName must not be set")
    return errors


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", required=True)
    args = parser.parse_args()
    directory = os.path.join(args.source, "packaging", "macos")
    errors = []
    for name, mode in (("dev.codexd.daemon.plist", "system"), ("dev.codexd.agent.plist", "user")):
        try:
            with open(os.path.join(directory, name), "rb") as f:
                plist = plistlib.load(f)
        except Exception as e:  # a parse error is a test failure, with the reason
            errors.append(f"{name}: does not parse: {e}")
            continue
        errors += check(name, plist, mode)

    bad = {"Label": "other", "ProgramArguments": ["codexd", "--mode", "system"], "KeepAlive": True}
    if len(check("dev.codexd.daemon.plist", bad, "system")) < 4:
        errors.append("self-test: the checker accepted a bad plist")

    for error in errors:
        print("FAIL:", error)
    if errors:
        return 1
    print("ok: 2 launchd plists checked; self-test rejected a bad one")
    return 0


if __name__ == "__main__":
    sys.exit(main())
