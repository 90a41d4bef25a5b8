"""A real codexd on a temporary socket for the client tests (as tests/support/test_daemon.cc
starts one for the C++ suites): its own config, rules, state directory and HOME, ready when it
says READY=1 on a NOTIFY_SOCKET of ours, stopped with SIGTERM."""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile


class Daemon:
    def __init__(self, codexd: str, rules: str = "", sandbox_mode: str = "danger-full-access",
                 approval_policy: str = "on-request"):
        # Not under /tmp: it is a writable root of the sandbox by default.
        self.dir = tempfile.mkdtemp(prefix="codexd-py-", dir=os.environ.get("CODEXD_TEST_TMP", "/var/tmp"))
        os.chmod(self.dir, 0o755)
        self.workspace = os.path.join(self.dir, "ws")
        self.socket_path = os.path.join(self.dir, "run", "codexd.sock")
        for sub in ("ws", "rules", "home", "state"):
            os.makedirs(os.path.join(self.dir, sub))
        if rules:
            with open(os.path.join(self.dir, "rules", "test.rules"), "w") as f:
                f.write(rules)
        config = os.path.join(self.dir, "codexd.toml")
        with open(config, "w") as f:
            f.write(f'[daemon]\nmode = "user"\nlisten = "unix:{self.socket_path}"\n'
                    f'state_dir = "{self.dir}/state"\n'
                    f'[policy]\nrules_dirs = ["{self.dir}/rules"]\napproval_policy = "{approval_policy}"\n'
                    f'[sandbox]\nmode = "{sandbox_mode}"\nprivate_tmp_dir = "{self.dir}/private-tmp"\n')
        notify_path = os.path.join(self.dir, "notify.sock")
        notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        notify.bind(notify_path)
        notify.settimeout(30)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("NOTIFY_SOCKET", "LISTEN_"))}
        env.update(NOTIFY_SOCKET=notify_path, HOME=os.path.join(self.dir, "home"))
        self.log_path = os.path.join(self.dir, "codexd.log")
        with open(self.log_path, "w") as log:
            self.process = subprocess.Popen([codexd, "--config", config], stdout=log, stderr=log,
                                            env=env, start_new_session=True)
        try:
            while b"READY=1" not in notify.recv(4096):
                pass
        except OSError:
            self.stop()
            raise RuntimeError(f"codexd did not become ready:\n{self.log()}")
        finally:
            notify.close()

    def log(self) -> str:
        with open(self.log_path) as f:
            return f.read()

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout=60)
        shutil.rmtree(self.dir, ignore_errors=True)
        return code
