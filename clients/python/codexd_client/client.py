"""A small typed wrapper over codexd's gRPC API (codexd.v1) on its Unix socket.

Every method is one RPC, except the iterators: `exec_until_exit` polls a session until its
command exits, `attach` and `watch_approvals` yield the events of a server stream. The
messages are the generated ones (codexd.v1.*_pb2); docs/api.md describes every field.
"""
from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from typing import Optional

import grpc

from codexd.v1 import admin_pb2, admin_pb2_grpc
from codexd.v1 import approvals_pb2, approvals_pb2_grpc
from codexd.v1 import common_pb2
from codexd.v1 import exec_pb2, exec_pb2_grpc
from codexd.v1 import policy_pb2, policy_pb2_grpc

AGENT_ID_METADATA_KEY = "x-codexd-agent-id"  # proto/codexd/api_constants.h
SYSTEM_SOCKET_PATH = "/run/codexd/codexd.sock"

_DECISIONS = {
    "approve": approvals_pb2.APPROVED,
    "approve-session": approvals_pb2.APPROVED_FOR_SESSION,
    "approve-remember": approvals_pb2.APPROVED_EXECPOLICY_AMENDMENT,
    "deny": approvals_pb2.DENIED,
    "abort": approvals_pb2.ABORT,
}
_CANCEL_MODES = {
    "terminate": exec_pb2.CancelRequest.TERMINATE,
    "interrupt": exec_pb2.CancelRequest.INTERRUPT,
    "kill": exec_pb2.CancelRequest.KILL,
}


def default_socket_path(system: bool = False) -> str:
    """Where codexd listens by default: as codexctl and the daemon compute it."""
    if system:
        return SYSTEM_SOCKET_PATH
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if runtime.startswith("/"):
        return f"{runtime}/codexd/codexd.sock"
    return f"/tmp/codexd-{os.getuid()}/codexd.sock"


class CodexdError(Exception):
    """An RPC the daemon refused or could not answer: `code` is the grpc.StatusCode and
    `details` the daemon's message, which says what to fix."""

    def __init__(self, code: grpc.StatusCode, details: str, method: str):
        super().__init__(f"{method}: {code.name}: {details}")
        self.code = code
        self.details = details
        self.method = method


def _raise(error: grpc.RpcError, method: str) -> None:
    raise CodexdError(error.code(), error.details() or "", method) from None


class Client:
    """A connection to one codexd. Use as a context manager, or call close()."""

    def __init__(self, socket_path: Optional[str] = None, agent_id: str = "",
                 timeout: Optional[float] = 60.0):
        self.socket_path = socket_path or default_socket_path()
        self.agent_id = agent_id
        self.timeout = timeout  # seconds per unary call (streams have none); None: no limit
        # Output answers may be large (Poll re-reads up to 1 MiB, RunCommand keeps 2 MiB).
        options = [("grpc.max_receive_message_length", 64 * 1024 * 1024)]
        self._channel = grpc.insecure_channel(f"unix:{self.socket_path}", options=options)
        self._exec = exec_pb2_grpc.ExecStub(self._channel)
        self._approvals = approvals_pb2_grpc.ApprovalsStub(self._channel)
        self._policy = policy_pb2_grpc.PolicyStub(self._channel)
        self._admin = admin_pb2_grpc.AdminStub(self._channel)

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _metadata(self):
        return ((AGENT_ID_METADATA_KEY, self.agent_id),) if self.agent_id else ()

    def _unary(self, rpc, request, method: str, timeout: Optional[float] = None):
        limit = self.timeout if timeout is None else timeout
        try:
            return rpc(request, timeout=limit, metadata=self._metadata())
        except grpc.RpcError as error:
            _raise(error, method)

    def _stream(self, rpc, request, method: str) -> Iterator:
        call = rpc(request, metadata=self._metadata())
        try:
            yield from call
        except grpc.RpcError as error:
            if error.code() != grpc.StatusCode.CANCELLED:
                _raise(error, method)
        finally:
            call.cancel()  # a consumer that stops early ends the stream, not the session

    # --- Exec ---------------------------------------------------------------------------
    def exec(self, argv: Optional[Sequence[str]] = None, *, cmd: str = "",
             workdir: Optional[str] = None, tty: bool = False,
             yield_time_ms: Optional[int] = None, max_output_tokens: Optional[int] = None,
             env: Optional[Mapping[str, str]] = None, escalate: bool = False,
             justification: str = "", dry_run: bool = False) -> exec_pb2.ExecResult:
        """ExecCommand: `argv` (no shell) or `cmd` (a shell script). Returns after the exit or
        `yield_time_ms`; a result with `session_id` set is still running. The wait for a
        reviewer's approval is part of the call, so there is no deadline on it."""
        request = exec_pb2.ExecCommandRequest(
            argv=list(argv or []), cmd=cmd, workdir=workdir or os.getcwd(), tty=tty,
            env=dict(env or {}), justification=justification, dry_run=dry_run,
            sandbox_permissions=(common_pb2.REQUIRE_ESCALATED if escalate else common_pb2.USE_DEFAULT))
        if yield_time_ms is not None:
            request.yield_time_ms = yield_time_ms
        if max_output_tokens is not None:
            request.max_output_tokens = max_output_tokens
        return self._call_without_deadline(self._exec.ExecCommand, request, "ExecCommand")

    def _call_without_deadline(self, rpc, request, method: str):
        try:
            return rpc(request, metadata=self._metadata())
        except grpc.RpcError as error:
            _raise(error, method)

    def write_stdin(self, session_id: int, chars: bytes | str = b"", *,
                    yield_time_ms: Optional[int] = None,
                    max_output_tokens: Optional[int] = None) -> exec_pb2.ExecResult:
        """WriteStdin: bytes to a session (empty: a poll), then the output that follows."""
        data = chars.encode() if isinstance(chars, str) else bytes(chars)
        request = exec_pb2.WriteStdinRequest(session_id=session_id, chars=data)
        if yield_time_ms is not None:
            request.yield_time_ms = yield_time_ms
        if max_output_tokens is not None:
            request.max_output_tokens = max_output_tokens
        return self._call_without_deadline(self._exec.WriteStdin, request, "WriteStdin")

    def poll(self, session_id: int, *, yield_time_ms: int = 5000,
             max_output_tokens: Optional[int] = None,
             from_offset: Optional[int] = None) -> exec_pb2.ExecResult:
        """Poll: new output or the exit, or nothing after `yield_time_ms`. `from_offset`
        re-reads from an earlier `output_offset` (a lost answer asked for again)."""
        request = exec_pb2.PollRequest(session_id=session_id, yield_time_ms=yield_time_ms)
        if max_output_tokens is not None:
            request.max_output_tokens = max_output_tokens
        if from_offset is not None:
            request.from_offset = from_offset
        return self._call_without_deadline(self._exec.Poll, request, "Poll")

    def exec_until_exit(self, argv: Optional[Sequence[str]] = None, *, poll_ms: int = 5000,
                        **exec_args) -> Iterator[exec_pb2.ExecResult]:
        """Runs a command and yields each answer (the ExecCommand result, then each Poll)
        until one carries the exit code. Stopping the iteration leaves the session running."""
        result = self.exec(argv, **exec_args)
        yield result
        while not result.HasField("exit_code") and result.HasField("session_id"):
            result = self.poll(result.session_id, yield_time_ms=poll_ms)
            yield result

    def attach(self, session_id: int, *, from_offset: Optional[int] = None,
               lossless: bool = False) -> Iterator[exec_pb2.OutputEvent]:
        """Attach: the session's output as events (`output`, `gap`, then `exit`), replayed
        from `from_offset` (default: the oldest byte retained)."""
        request = exec_pb2.AttachRequest(session_id=session_id, lossless=lossless)
        if from_offset is not None:
            request.from_offset = from_offset
        return self._stream(self._exec.Attach, request, "Attach")

    def cancel(self, session_id: int, mode: str = "terminate",
               grace_ms: Optional[int] = None) -> bool:
        """Cancel: signal the session's process group ("terminate", "interrupt" or "kill").
        Returns whether it was still running."""
        if mode not in _CANCEL_MODES:
            raise ValueError(f"mode must be one of {', '.join(_CANCEL_MODES)} (got {mode!r})")
        request = exec_pb2.CancelRequest(session_id=session_id, mode=_CANCEL_MODES[mode])
        if grace_ms is not None:
            request.grace_ms = grace_ms
        return self._unary(self._exec.Cancel, request, "Cancel").was_running

    def sessions(self, all_users: bool = False) -> list[exec_pb2.SessionInfo]:
        """ListSessions: the caller's sessions (every uid's for an admin with all_users)."""
        request = exec_pb2.ListSessionsRequest(all_users=all_users)
        return list(self._unary(self._exec.ListSessions, request, "ListSessions").sessions)

    def trace(self, session_id: int) -> exec_pb2.GetTraceResponse:
        """GetTrace: every program a supervised session started, in order, with its parent and
        the rules' verdict (exec supervision). NOT_FOUND for a session without a trace or not yours."""
        request = exec_pb2.GetTraceRequest(session_id=session_id)
        return self._unary(self._exec.GetTrace, request, "GetTrace")

    def run(self, argv: Optional[Sequence[str]] = None, *, cmd: str = "",
            workdir: Optional[str] = None, timeout_ms: Optional[int] = None,
            env: Optional[Mapping[str, str]] = None) -> exec_pb2.RunCommandResponse:
        """RunCommand: one command to completion (or `timeout_ms`), stdout and stderr apart."""
        request = exec_pb2.RunCommandRequest(argv=list(argv or []), cmd=cmd,
                                             workdir=workdir or os.getcwd(), env=dict(env or {}))
        if timeout_ms is not None:
            request.timeout_ms = timeout_ms
        return self._call_without_deadline(self._exec.RunCommand, request, "RunCommand")

    # --- Approvals ------------------------------------------------------------------------
    def watch_approvals(self) -> Iterator[approvals_pb2.ApprovalEvent]:
        """WatchApprovals: every pending request (`added`), `synced` once the initial list is
        complete, then requests as they come and go (`resolved`). Reviewer uids only."""
        return self._stream(self._approvals.WatchApprovals, approvals_pb2.WatchApprovalsRequest(),
                            "WatchApprovals")

    def pending_approvals(self) -> list[approvals_pb2.ApprovalRequest]:
        response = self._unary(self._approvals.ListApprovals, approvals_pb2.ListApprovalsRequest(),
                               "ListApprovals")
        return list(response.approvals)

    def resolve_approval(self, approval_id: str, decision: str, rationale: str = "") -> None:
        """ResolveApproval with "approve", "approve-session", "approve-remember", "deny" or
        "abort" (as `codexctl approvals resolve`)."""
        if decision not in _DECISIONS:
            raise ValueError(f"decision must be one of {', '.join(_DECISIONS)} (got {decision!r})")
        request = approvals_pb2.ResolveApprovalRequest(approval_id=approval_id,
                                                       decision=_DECISIONS[decision],
                                                       rationale=rationale)
        self._unary(self._approvals.ResolveApproval, request, "ResolveApproval")

    # --- Policy and Admin -----------------------------------------------------------------
    def check_policy(self, argv: Sequence[str]) -> policy_pb2.CheckPolicyResponse:
        return self._unary(self._policy.CheckPolicy, policy_pb2.CheckPolicyRequest(argv=list(argv)),
                           "CheckPolicy")

    def status(self) -> admin_pb2.GetStatusResponse:
        return self._unary(self._admin.GetStatus, admin_pb2.GetStatusRequest(), "GetStatus")
