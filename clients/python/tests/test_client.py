"""The Python client against a real codexd (CODEXD_BIN_DIR/codexd on a temporary socket)."""
from __future__ import annotations

import os
import threading
import unittest

import grpc

from codexd.v1 import exec_pb2
from codexd_client import Client, CodexdError
from daemon import Daemon

CODEXD = os.path.join(os.environ["CODEXD_BIN_DIR"], "codexd")
RULES = 'prefix_rule(pattern=["touch"], decision="prompt")\nprefix_rule(pattern=["shred"], decision="forbidden")\n'


class ClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.daemon = Daemon(CODEXD, rules=RULES)
        cls.client = Client(cls.daemon.socket_path, agent_id="py-agent")

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        code = cls.daemon.stop()
        assert code == 0, f"codexd exited with {code}"

    def ws(self) -> str:
        return self.daemon.workspace

    def test_a_short_command_reports_its_output_and_exit_in_codex_format(self):
        result = self.client.exec(["echo", "hi"], workdir=self.ws())
        self.assertTrue(result.HasField("exit_code"))
        self.assertEqual(result.exit_code, 0)
        self.assertEqual(result.output, b"hi\n")
        self.assertIn("Process exited with code 0", result.text)
        self.assertFalse(result.HasField("session_id"))

    def test_a_long_command_is_polled_to_its_exit_by_the_iterator(self):
        answers = list(self.client.exec_until_exit(
            cmd="for i in 1 2 3; do echo $i; sleep 0.3; done", workdir=self.ws(), yield_time_ms=250))
        self.assertGreater(len(answers), 1, "the first answer came before the command ended")
        self.assertTrue(answers[0].HasField("session_id"))
        self.assertEqual(b"".join(a.output for a in answers), b"1\n2\n3\n")
        self.assertEqual(answers[-1].exit_code, 0)

    def test_write_stdin_reaches_a_tty_session(self):
        started = self.client.exec(cmd="read line; echo got:$line", workdir=self.ws(), tty=True,
                                   yield_time_ms=250)
        self.assertTrue(started.HasField("session_id"), started.text)
        output = b""
        result = self.client.write_stdin(started.session_id, "hello\n", yield_time_ms=2000)
        output += result.output
        while not result.HasField("exit_code"):
            result = self.client.poll(started.session_id)
            output += result.output
        self.assertIn(b"got:hello", output)
        self.assertEqual(result.exit_code, 0)

    def test_attach_streams_every_byte_and_the_exit_after_a_cancel(self):
        started = self.client.exec(cmd="seq 1 20000; exec sleep 60", workdir=self.ws(), yield_time_ms=250)
        self.assertTrue(started.HasField("session_id"), started.text)
        expected = "".join(f"{i}\n" for i in range(1, 20001)).encode()
        received = b""
        exit_event = None
        for event in self.client.attach(started.session_id, from_offset=0):
            kind = event.WhichOneof("event")
            self.assertNotEqual(kind, "gap")
            if kind == "output":
                self.assertEqual(event.output.offset, len(received))
                received += event.output.data
                if received == expected:
                    self.assertTrue(self.client.cancel(started.session_id, "kill"))
            elif kind == "exit":
                exit_event = event.exit
                break
        self.assertEqual(received, expected)
        self.assertIsNotNone(exit_event)
        self.assertEqual(exit_event.signal, 9)
        self.assertEqual(exit_event.final_offset, len(expected))

    def test_sessions_are_listed_with_the_agent_id(self):
        started = self.client.exec(["sleep", "60"], workdir=self.ws(), yield_time_ms=250)
        try:
            mine = [s for s in self.client.sessions() if s.session_id == started.session_id]
            self.assertEqual(len(mine), 1)
            self.assertEqual(mine[0].agent_id, "py-agent")
            self.assertEqual(list(mine[0].argv), ["sleep", "60"])
            self.assertTrue(mine[0].running)
        finally:
            self.client.cancel(started.session_id, "kill")

    def test_an_approval_is_seen_by_a_watcher_and_answered(self):
        target = os.path.join(self.ws(), "approved-file")
        results = {}

        def run(name, path):
            results[name] = self.client.exec(["touch", path], workdir=self.ws())

        decisions = {target: "approve", target + "-denied": "deny"}
        runners = [threading.Thread(target=run, args=(p, p)) for p in decisions]
        seen = {}
        with Client(self.daemon.socket_path) as reviewer:
            watch = reviewer.watch_approvals()
            for t in runners:
                t.start()
            for event in watch:
                if event.WhichOneof("event") == "added":
                    path = event.added.argv[-1]
                    self.assertEqual(event.added.agent_id, "py-agent")
                    seen[path] = event.added.approval_id
                    reviewer.resolve_approval(event.added.approval_id, decisions[path], "test says so")
                if len(seen) == len(decisions):
                    break
            watch.close()
        for t in runners:
            t.join()
        self.assertEqual(results[target].exit_code, 0)
        self.assertTrue(os.path.exists(target))
        denied = results[target + "-denied"]
        self.assertEqual(denied.rejection.reason, exec_pb2.Rejection.DENIED_BY_REVIEWER)
        self.assertFalse(os.path.exists(target + "-denied"))

    def test_a_forbidden_command_is_rejected_not_run(self):
        result = self.client.exec(["shred", "x"], workdir=self.ws())
        self.assertEqual(result.rejection.reason, exec_pb2.Rejection.FORBIDDEN_BY_POLICY)
        self.assertFalse(result.HasField("exit_code"))

    def test_errors_carry_the_status_code_and_what_to_fix(self):
        with self.assertRaises(CodexdError) as missing:
            self.client.poll(99, yield_time_ms=0)
        self.assertEqual(missing.exception.code, grpc.StatusCode.NOT_FOUND)
        with self.assertRaises(CodexdError) as no_trace:
            self.client.trace(99)
        self.assertEqual(no_trace.exception.code, grpc.StatusCode.NOT_FOUND)
        self.assertIn("no exec trace", no_trace.exception.details)
        with self.assertRaises(CodexdError) as relative:
            self.client.exec(["true"], workdir="relative/dir")
        self.assertEqual(relative.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("workdir", relative.exception.details)
        with self.assertRaises(ValueError):
            self.client.cancel(1, "politely")

    def test_run_and_status(self):
        run = self.client.run(cmd="echo out; echo err >&2; exit 3", workdir=self.ws())
        self.assertEqual((run.exit_code, run.stdout, run.stderr), (3, b"out\n", b"err\n"))
        status = self.client.status()
        self.assertEqual(status.pid, self.daemon.process.pid)
        self.assertEqual(status.caller_uid, os.getuid())


if __name__ == "__main__":
    unittest.main()
