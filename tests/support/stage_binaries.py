#!/usr/bin/env python3
"""The tests' stage (cmake/TestStage.cmake): copies the programs that other uids and sandboxed
commands execute out of the build tree into a directory of this build's own.

  stage_binaries.py setup STAGE SRC=DEST...   STAGE made afresh (0755, owned by this user),
                                              each SRC copied to STAGE/DEST
  stage_binaries.py cleanup STAGE             STAGE removed (and its parent, when empty)

The daemon trusts its sandbox helper only when the helper and every directory above it belong
to root (or the daemon's uid) and nobody else may write them (a sticky directory such as
/var/tmp excepted), and other users must be able to reach the programs: setup refuses a STAGE
that breaks either, saying which directory.
"""

import os
import shutil
import stat
import sys


def fail(message):
    print("stage_binaries.py: " + message, file=sys.stderr)
    sys.exit(1)


def check_directory(path):
    """Why `path` cannot hold the staged programs, or None (also when it does not exist yet)."""
    if not os.path.lexists(path):
        return None
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        return path + " is not a directory"
    if st.st_uid not in (0, os.geteuid()):
        return "%s belongs to uid %d (must be root or uid %d)" % (path, st.st_uid, os.geteuid())
    if st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX:
        return "%s is writable by group or others (mode %o)" % (path, stat.S_IMODE(st.st_mode))
    if not st.st_mode & stat.S_IXOTH:
        return "%s is not searchable by other users (mode %o)" % (path, stat.S_IMODE(st.st_mode))
    return None


def make_directory(path):
    os.makedirs(path, mode=0o755, exist_ok=True)
    if os.lstat(path).st_uid == os.geteuid():
        os.chmod(path, 0o755)


def refuse_unsafe(directory, stage):
    """Exits saying why when `directory` or one above it cannot hold the stage."""
    directory = os.path.realpath(directory)  # macOS: /var is a link to /private/var
    while True:
        problem = check_directory(directory)
        if problem:
            fail("cannot stage the test programs in %s: %s" % (stage, problem))
        if directory == "/":
            return
        directory = os.path.dirname(directory)


def setup(stage, copies):
    os.umask(0o022)
    parent = os.path.dirname(stage)
    refuse_unsafe(os.path.dirname(parent), stage)  # before anything is made there
    make_directory(parent)
    refuse_unsafe(parent, stage)
    if os.path.lexists(stage):
        shutil.rmtree(stage)  # programs still running from an earlier stage keep their files
    make_directory(stage)
    for copy in copies:
        source, _, destination = copy.partition("=")
        target = os.path.join(stage, destination)
        make_directory(os.path.dirname(target))
        shutil.copyfile(source, target)
        os.chmod(target, 0o755 if os.stat(source).st_mode & 0o111 else 0o644)
        print("staged %s -> %s" % (source, target))


def cleanup(stage):
    if os.path.lexists(stage):
        shutil.rmtree(stage)
    try:
        os.rmdir(os.path.dirname(stage))
    except OSError:
        pass  # another build's stage is still there
    print("removed " + stage)


def main(argv):
    if len(argv) >= 3 and argv[1] == "setup":
        setup(argv[2], argv[3:])
    elif len(argv) == 3 and argv[1] == "cleanup":
        cleanup(argv[2])
    else:
        fail("usage: stage_binaries.py setup STAGE SRC=DEST... | cleanup STAGE")


if __name__ == "__main__":
    main(sys.argv)
