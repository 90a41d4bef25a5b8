// A small typed wrapper over codexd's gRPC API (codexd.v1) on its Unix socket. The messages'
// types are generated from proto/ (src/generated, by scripts/generate.mjs); docs/api.md
// describes every field. Unary calls return promises; Attach, WatchApprovals and a command run
// to its exit are async iterators.
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { join } from "node:path";

import type { ProtoGrpcType as AdminProto } from "./generated/admin";
import type { ProtoGrpcType as ApprovalsProto } from "./generated/approvals";
import type { ProtoGrpcType as ExecProto } from "./generated/exec";
import type { ProtoGrpcType as PolicyProto } from "./generated/policy";
import type { AdminClient } from "./generated/codexd/v1/Admin";
import type { ApprovalsClient } from "./generated/codexd/v1/Approvals";
import type { ExecClient } from "./generated/codexd/v1/Exec";
import type { PolicyClient } from "./generated/codexd/v1/Policy";
import type { ApprovalEvent__Output } from "./generated/codexd/v1/ApprovalEvent";
import type { ApprovalRequest__Output } from "./generated/codexd/v1/ApprovalRequest";
import type { CheckPolicyResponse__Output } from "./generated/codexd/v1/CheckPolicyResponse";
import type { ExecCommandRequest } from "./generated/codexd/v1/ExecCommandRequest";
import type { ExecResult__Output } from "./generated/codexd/v1/ExecResult";
import type { GetStatusResponse__Output } from "./generated/codexd/v1/GetStatusResponse";
import type { OutputEvent__Output } from "./generated/codexd/v1/OutputEvent";
import type { ReviewDecision } from "./generated/codexd/v1/ReviewDecision";
import type { RunCommandRequest } from "./generated/codexd/v1/RunCommandRequest";
import type { RunCommandResponse__Output } from "./generated/codexd/v1/RunCommandResponse";
import type { SessionInfo__Output } from "./generated/codexd/v1/SessionInfo";
import type { GetTraceResponse__Output } from "./generated/codexd/v1/GetTraceResponse";

export type {
  ApprovalEvent__Output as ApprovalEvent, ApprovalRequest__Output as ApprovalRequest,
  ExecResult__Output as ExecResult, GetStatusResponse__Output as Status,
  OutputEvent__Output as OutputEvent, RunCommandResponse__Output as RunCommandResult,
  SessionInfo__Output as SessionInfo, GetTraceResponse__Output as Trace,
};

export const AGENT_ID_METADATA_KEY = "x-codexd-agent-id"; // proto/codexd/api_constants.h
export const SYSTEM_SOCKET_PATH = "/run/codexd/codexd.sock";

/** Where codexd listens by default, as codexctl and the daemon compute it. */
export function defaultSocketPath(system = false): string {
  if (system) return SYSTEM_SOCKET_PATH;
  const runtime = process.env.XDG_RUNTIME_DIR ?? "";
  if (runtime.startsWith("/")) return `${runtime}/codexd/codexd.sock`;
  return `/tmp/codexd-${process.getuid?.() ?? 0}/codexd.sock`;
}

/** An RPC the daemon refused or could not answer: `code` is the gRPC status, `details` the
 * daemon's message, which says what to fix. */
export class CodexdError extends Error {
  constructor(readonly code: grpc.status, readonly details: string, readonly method: string) {
    super(`${method}: ${grpc.status[code]}: ${details}`);
    this.name = "CodexdError";
  }
}

const DECISIONS: Record<string, ReviewDecision> = {
  approve: "APPROVED",
  "approve-session": "APPROVED_FOR_SESSION",
  "approve-remember": "APPROVED_EXECPOLICY_AMENDMENT",
  deny: "DENIED",
  abort: "ABORT",
};
export type Decision = "approve" | "approve-session" | "approve-remember" | "deny" | "abort";
export type CancelMode = "TERMINATE" | "INTERRUPT" | "KILL";

export interface ExecOptions {
  argv?: string[];
  cmd?: string;
  workdir?: string;
  tty?: boolean;
  yieldTimeMs?: number;
  maxOutputTokens?: number;
  env?: Record<string, string>;
  escalate?: boolean;
  justification?: string;
  dryRun?: boolean;
}

export interface ClientOptions {
  socketPath?: string;
  agentId?: string;
}

function loadProtos() {
  // The protos travel with the package (./proto, copied by scripts/generate.mjs).
  const definition = protoLoader.loadSync(
    ["common", "exec", "approvals", "policy", "admin"].map((n) => `codexd/v1/${n}.proto`),
    { includeDirs: [join(__dirname, "..", "..", "proto")], keepCase: true, longs: Number, enums: String,
      defaults: true, oneofs: true },
  );
  return grpc.loadPackageDefinition(definition) as unknown as
    ExecProto & ApprovalsProto & PolicyProto & AdminProto;
}

export class Client {
  readonly socketPath: string;
  readonly agentId: string;
  private readonly exec_: ExecClient;
  private readonly approvals_: ApprovalsClient;
  private readonly policy_: PolicyClient;
  private readonly admin_: AdminClient;

  constructor(options: ClientOptions = {}) {
    this.socketPath = options.socketPath ?? defaultSocketPath();
    this.agentId = options.agentId ?? "";
    const proto = loadProtos().codexd.v1;
    const address = `unix:${this.socketPath}`;
    const credentials = grpc.credentials.createInsecure();
    // Output answers may be large (Poll re-reads up to 1 MiB, RunCommand keeps 2 MiB).
    const channelOptions = { "grpc.max_receive_message_length": 64 * 1024 * 1024 };
    this.exec_ = new proto.Exec(address, credentials, channelOptions);
    // One channel for all four services.
    const shared = { ...channelOptions, channelOverride: this.exec_.getChannel() };
    this.approvals_ = new proto.Approvals(address, credentials, shared);
    this.policy_ = new proto.Policy(address, credentials, shared);
    this.admin_ = new proto.Admin(address, credentials, shared);
  }

  /** Resolves once the daemon's socket accepts a connection (e.g. after starting codexd),
   * rejects after `timeoutMs`. */
  waitForReady(timeoutMs = 30000): Promise<void> {
    return new Promise((resolve, reject) => {
      this.exec_.waitForReady(Date.now() + timeoutMs, (error) => (error ? reject(error) : resolve()));
    });
  }

  close(): void {
    this.exec_.close();
  }

  private metadata(): grpc.Metadata {
    const metadata = new grpc.Metadata();
    if (this.agentId) metadata.set(AGENT_ID_METADATA_KEY, this.agentId);
    return metadata;
  }

  // One unary RPC as a promise; no deadline (ExecCommand includes a reviewer's wait).
  private unary<Req, Res>(method: string,
                          rpc: (req: Req, md: grpc.Metadata, cb: grpc.requestCallback<Res>) => unknown,
                          request: Req): Promise<Res> {
    return new Promise((resolve, reject) => {
      rpc(request, this.metadata(), (error, response) => {
        if (error) reject(new CodexdError(error.code, error.details, method));
        else resolve(response as Res);
      });
    });
  }

  private async *stream<T>(method: string, call: grpc.ClientReadableStream<T>): AsyncGenerator<T> {
    try {
      for await (const item of call) yield item as T;
    } catch (error) {
      const e = error as grpc.ServiceError;
      if (e.code !== grpc.status.CANCELLED) throw new CodexdError(e.code, e.details, method);
    } finally {
      call.cancel(); // a consumer that stops early ends the stream, not the session
    }
  }

  /** ExecCommand: `argv` (no shell) or `cmd` (a shell script). A result with `session_id`
   * is still running. */
  exec(options: ExecOptions): Promise<ExecResult__Output> {
    const request: ExecCommandRequest = {
      argv: options.argv ?? [], cmd: options.cmd ?? "", workdir: options.workdir ?? process.cwd(),
      tty: options.tty ?? false, env: options.env ?? {}, justification: options.justification ?? "",
      dry_run: options.dryRun ?? false,
      sandbox_permissions: options.escalate ? "REQUIRE_ESCALATED" : "USE_DEFAULT",
    };
    if (options.yieldTimeMs !== undefined) request.yield_time_ms = options.yieldTimeMs;
    if (options.maxOutputTokens !== undefined) request.max_output_tokens = options.maxOutputTokens;
    return this.unary("ExecCommand", this.exec_.ExecCommand.bind(this.exec_), request);
  }

  /** WriteStdin: bytes to a session (empty: a poll), then the output that follows. */
  writeStdin(sessionId: number, chars: string | Uint8Array, yieldTimeMs?: number): Promise<ExecResult__Output> {
    const request = { session_id: sessionId, chars: typeof chars === "string" ? Buffer.from(chars) : chars,
                      ...(yieldTimeMs !== undefined ? { yield_time_ms: yieldTimeMs } : {}) };
    return this.unary("WriteStdin", this.exec_.WriteStdin.bind(this.exec_), request);
  }

  /** Poll: new output or the exit, or nothing after `yieldTimeMs`. `fromOffset` re-reads from
   * an earlier `output_offset` (a lost answer asked for again). */
  poll(sessionId: number, yieldTimeMs = 5000, fromOffset?: number): Promise<ExecResult__Output> {
    const request = { session_id: sessionId, yield_time_ms: yieldTimeMs,
                      ...(fromOffset !== undefined ? { from_offset: fromOffset } : {}) };
    return this.unary("Poll", this.exec_.Poll.bind(this.exec_), request);
  }

  /** Runs a command and yields each answer (ExecCommand's, then each Poll's) until one carries
   * the exit code. Stopping the iteration leaves the session running. */
  async *execUntilExit(options: ExecOptions, pollMs = 5000): AsyncGenerator<ExecResult__Output> {
    let result = await this.exec(options);
    yield result;
    while (result.exit_code === undefined && result.session_id !== undefined) {
      result = await this.poll(result.session_id, pollMs);
      yield result;
    }
  }

  /** Attach: the session's output as events (`output`, `gap`, then `exit`), replayed from
   * `fromOffset` (default: the oldest byte retained). */
  attach(sessionId: number, options: { fromOffset?: number; lossless?: boolean } = {}): AsyncGenerator<OutputEvent__Output> {
    const request = { session_id: sessionId, lossless: options.lossless ?? false,
                      ...(options.fromOffset !== undefined ? { from_offset: options.fromOffset } : {}) };
    return this.stream("Attach", this.exec_.Attach(request, this.metadata()));
  }

  /** Cancel: signal the session's process group. Resolves to whether it was still running. */
  async cancel(sessionId: number, mode: CancelMode = "TERMINATE", graceMs?: number): Promise<boolean> {
    const request = { session_id: sessionId, mode, ...(graceMs !== undefined ? { grace_ms: graceMs } : {}) };
    const response = await this.unary("Cancel", this.exec_.Cancel.bind(this.exec_), request);
    return (response as { was_running: boolean }).was_running;
  }

  /** ListSessions: the caller's sessions (every uid's for an admin with `allUsers`). */
  async sessions(allUsers = false): Promise<SessionInfo__Output[]> {
    const response = await this.unary("ListSessions", this.exec_.ListSessions.bind(this.exec_), { all_users: allUsers });
    return (response as { sessions: SessionInfo__Output[] }).sessions;
  }

  /** GetTrace: every program a supervised session started, in order, with its parent and the
   * rules' verdict (exec supervision). NOT_FOUND for a session without a trace or not yours. */
  trace(sessionId: number): Promise<GetTraceResponse__Output> {
    return this.unary("GetTrace", this.exec_.GetTrace.bind(this.exec_), { session_id: sessionId });
  }

  /** RunCommand: one command to completion (or `timeoutMs`), stdout and stderr apart. */
  run(options: { argv?: string[]; cmd?: string; workdir?: string; timeoutMs?: number }): Promise<RunCommandResponse__Output> {
    const request: RunCommandRequest = { argv: options.argv ?? [], cmd: options.cmd ?? "",
                                         workdir: options.workdir ?? process.cwd() };
    if (options.timeoutMs !== undefined) request.timeout_ms = options.timeoutMs;
    return this.unary("RunCommand", this.exec_.RunCommand.bind(this.exec_), request);
  }

  /** WatchApprovals: every pending request (`added`), `synced` once the initial list is
   * complete, then requests as they come and go (`resolved`). Reviewer uids only. */
  watchApprovals(): AsyncGenerator<ApprovalEvent__Output> {
    return this.stream("WatchApprovals", this.approvals_.WatchApprovals({}, this.metadata()));
  }

  async pendingApprovals(): Promise<ApprovalRequest__Output[]> {
    const response = await this.unary("ListApprovals", this.approvals_.ListApprovals.bind(this.approvals_), {});
    return (response as { approvals: ApprovalRequest__Output[] }).approvals;
  }

  /** ResolveApproval, with the decisions of `codexctl approvals`. */
  async resolveApproval(approvalId: string, decision: Decision, rationale = ""): Promise<void> {
    if (!(decision in DECISIONS)) throw new RangeError(`decision must be one of ${Object.keys(DECISIONS).join(", ")}`);
    await this.unary("ResolveApproval", this.approvals_.ResolveApproval.bind(this.approvals_),
                     { approval_id: approvalId, decision: DECISIONS[decision], rationale });
  }

  checkPolicy(argv: string[]): Promise<CheckPolicyResponse__Output> {
    return this.unary("CheckPolicy", this.policy_.CheckPolicy.bind(this.policy_), { argv });
  }

  status(): Promise<GetStatusResponse__Output> {
    return this.unary("GetStatus", this.admin_.GetStatus.bind(this.admin_), {});
  }
}
