// `codexctl mcp` driven by the official MCP TypeScript SDK's client (@modelcontextprotocol/sdk)
// against a real codexd on a temporary socket; a reviewer answers approvals with
// `codexctl --json approvals watch` and `codexctl approve|deny`, as a person's terminal would.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { after, before, test } from "node:test";

const BIN = process.env.CODEXD_BIN_DIR;
const CODEXCTL = join(BIN, "codexctl");
const RULES = 'prefix_rule(pattern=["touch"], decision="prompt")\nprefix_rule(pattern=["shred"], decision="forbidden")\n';
// Codex's tool-result text (../shared/reference/codex-runtime.md 1.10), byte for byte.
const EXITED = /^Chunk ID: [0-9a-f]{6}\nWall time: \d+\.\d{4} seconds\nProcess exited with code (\d+)\nOriginal token count: (\d+)\nOutput:\n([\s\S]*)$/;
const RUNNING = /^Chunk ID: [0-9a-f]{6}\nWall time: \d+\.\d{4} seconds\nProcess running with session ID (\d+)\nOriginal token count: (\d+)\nOutput:\n([\s\S]*)$/;

let dir, socketPath, workspace, daemon, client, reviewer;

// Events of `codexctl --json approvals watch`, one JSON document a line, awaited one by one.
class ApprovalWatcher {
  constructor() {
    this.process = spawn(CODEXCTL, ["--socket", socketPath, "--json", "approvals", "watch"], { stdio: ["ignore", "pipe", "inherit"] });
    this.events = [];
    this.waiters = [];
    createInterface({ input: this.process.stdout }).on("line", (line) => {
      this.events.push(JSON.parse(line));
      this.waiters.splice(0).forEach((wake) => wake());
    });
  }
  async next(predicate) {
    for (;;) {
      const index = this.events.findIndex(predicate);
      if (index >= 0) return this.events.splice(index, 1)[0];
      await new Promise((wake) => this.waiters.push(wake));
    }
  }
  stop() {
    this.process.kill("SIGTERM");
  }
}

before(async () => {
  // Not under /tmp: it is a writable root of the sandbox by default.
  dir = mkdtempSync(join(process.env.CODEXD_TEST_TMP ?? "/var/tmp", "codexd-mcp-"));
  chmodSync(dir, 0o755);
  for (const sub of ["ws", "rules", "home", "state"]) mkdirSync(join(dir, sub));
  workspace = join(dir, "ws");
  socketPath = join(dir, "run", "codexd.sock");
  writeFileSync(join(dir, "rules", "test.rules"), RULES);
  writeFileSync(join(dir, "codexd.toml"),
    `[daemon]\nmode = "user"\nlisten = "unix:${socketPath}"\nstate_dir = "${dir}/state"\n` +
    `[policy]\nrules_dirs = ["${dir}/rules"]\napproval_policy = "on-request"\n` +
    `[sandbox]\nmode = "workspace-write"\nprivate_tmp_dir = "${dir}/private-tmp"\n`);
  const log = openSync(join(dir, "codexd.log"), "w");
  const env = { ...process.env, HOME: join(dir, "home") };
  delete env.NOTIFY_SOCKET;
  daemon = spawn(join(BIN, "codexd"), ["--config", join(dir, "codexd.toml")], { stdio: ["ignore", log, log], env });
  // Ready when the socket answers (node has no AF_UNIX datagram socket for a NOTIFY_SOCKET):
  // `codexctl status` fails fast while there is no socket, so retry on its exit, not a timer.
  for (let i = 0; ; ++i) {
    try {
      execFileSync(CODEXCTL, ["--socket", socketPath, "status"], { stdio: "ignore" });
      break;
    } catch (e) {
      if (i > 300 || daemon.exitCode !== null) throw new Error(`codexd did not start (see ${dir}/codexd.log)`);
      await new Promise((r) => setImmediate(r));
    }
  }
  const transport = new StdioClientTransport({
    command: CODEXCTL, args: ["--socket", socketPath, "--agent-id", "mcp-agent", "mcp"], cwd: workspace,
    env: { PATH: process.env.PATH, HOME: join(dir, "home") }, stderr: "inherit",
  });
  client = new Client({ name: "codexd-conformance", version: "1.0.0" });
  await client.connect(transport);
  reviewer = new ApprovalWatcher();
});

after(async () => {
  reviewer?.stop();
  await client?.close();
  if (daemon && daemon.exitCode === null) {
    const exited = new Promise((resolve) => daemon.once("exit", resolve));
    daemon.kill("SIGTERM");
    assert.equal(await exited, 0, "codexd's exit code");
  }
  rmSync(dir, { recursive: true, force: true });
});

function text(result) {
  assert.equal(result.content.length, 1);
  assert.equal(result.content[0].type, "text");
  return result.content[0].text;
}

test("initialize names the server and offers tools", () => {
  assert.equal(client.getServerVersion().name, "codexd");
  assert.ok(client.getServerCapabilities().tools);
});

test("tools/list has Codex's unified-exec tools with their parameters", async () => {
  const { tools } = await client.listTools();
  const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
  assert.deepEqual(Object.keys(byName).sort(), ["exec_command", "kill_session", "list_sessions", "write_stdin"]);
  const exec = byName.exec_command.inputSchema;
  assert.deepEqual(exec.required, ["cmd"]);
  for (const p of ["cmd", "workdir", "shell", "login", "tty", "yield_time_ms", "max_output_tokens", "sandbox_permissions", "justification", "prefix_rule"]) {
    assert.ok(exec.properties[p], `exec_command has ${p}`);
  }
  assert.deepEqual(byName.write_stdin.inputSchema.required, ["session_id"]);
  for (const p of ["session_id", "chars", "yield_time_ms", "max_output_tokens"]) assert.ok(byName.write_stdin.inputSchema.properties[p]);
});

test("echo hi: Codex's result text and the structured form", async () => {
  const result = await client.callTool({ name: "exec_command", arguments: { cmd: "echo hi" } });
  assert.equal(result.isError, false);
  const match = EXITED.exec(text(result));
  assert.ok(match, text(result));
  assert.deepEqual([match[1], match[2], match[3]], ["0", "1", "hi\n"]);
  assert.equal(result.structuredContent.exit_code, 0);
  assert.equal(result.structuredContent.output, "hi\n");
});

test("a long command is started, then polled and fed with write_stdin", async () => {
  const started = await client.callTool({ name: "exec_command",
    arguments: { cmd: "echo ready; read line; echo got:$line", tty: true, yield_time_ms: 500 } });
  const running = RUNNING.exec(text(started));
  assert.ok(running, text(started));
  const id = Number(running[1]);
  assert.equal(started.structuredContent.session_id, id);
  let output = running[3];
  const fed = await client.callTool({ name: "write_stdin", arguments: { session_id: id, chars: "hello\n", yield_time_ms: 2000 } });
  output += fed.structuredContent.output;
  let last = fed;
  while (last.structuredContent.exit_code === undefined) {
    last = await client.callTool({ name: "write_stdin", arguments: { session_id: id, chars: "" } });  // a poll
    output += last.structuredContent.output;
  }
  assert.match(output, /got:hello/);
  assert.ok(EXITED.test(text(last)), text(last));
  const gone = await client.callTool({ name: "write_stdin", arguments: { session_id: id, chars: "" } });
  assert.equal(gone.isError, true);
  assert.equal(text(gone), `write_stdin failed: Unknown process id ${id}`);
});

test("a forbidden command is refused and does not run", async () => {
  const result = await client.callTool({ name: "exec_command", arguments: { cmd: "shred secret" } });
  assert.equal(result.isError, true);
  assert.match(text(result), /rejected: blocked by policy/);
});

test("an approval waits for a reviewer, with progress, both ways", async () => {
  const progress = [];
  let progressed;
  const firstProgress = new Promise((resolve) => { progressed = resolve; });
  const approved = client.callTool({ name: "exec_command", arguments: { cmd: "touch approved-file" } }, undefined,
                                   { onprogress: (p) => { progress.push(p); progressed(); }, resetTimeoutOnProgress: true });
  const asked = await reviewer.next((e) => e.added && e.added.cmd === "touch approved-file");
  assert.equal(asked.added.agent_id, "mcp-agent");
  await firstProgress;  // progress notifications come while the call waits (every 2 s)
  execFileSync(CODEXCTL, ["--socket", socketPath, "approve", asked.added.approval_id]);
  const result = await approved;
  assert.equal(result.isError, false, text(result));
  assert.ok(EXITED.test(text(result)), text(result));
  assert.ok(existsSync(join(workspace, "approved-file")));
  assert.match(progress[0].message, /^(waiting for a reviewer to approve the command|running) \(\d+ s\)$/);

  const denied = client.callTool({ name: "exec_command", arguments: { cmd: "touch denied-file" } });
  const asked2 = await reviewer.next((e) => e.added && e.added.cmd === "touch denied-file");
  execFileSync(CODEXCTL, ["--socket", socketPath, "deny", asked2.added.approval_id, "--reason", "not in this repo"]);
  const refusal = await denied;
  assert.equal(refusal.isError, true);
  assert.match(text(refusal), /^rejected by user/);
  assert.ok(!existsSync(join(workspace, "denied-file")));
});

test("cancellation abandons the call: a pending approval is withdrawn and nothing runs", async () => {
  const abort = new AbortController();
  const call = client.callTool({ name: "exec_command", arguments: { cmd: "touch cancelled-file" } }, undefined, { signal: abort.signal });
  const asked = await reviewer.next((e) => e.added && e.added.cmd === "touch cancelled-file");
  abort.abort("the user interrupted the turn");
  await assert.rejects(call);
  const resolved = await reviewer.next((e) => e.resolved && e.resolved.approval_id === asked.added.approval_id);
  assert.equal(resolved.resolved.resolution_source, "requester_disconnected");
  assert.ok(!existsSync(join(workspace, "cancelled-file")));
  // The server still answers after a cancelled call.
  const after = await client.callTool({ name: "exec_command", arguments: { cmd: "echo still here" } });
  assert.equal(after.structuredContent.output, "still here\n");
});

test("list_sessions and kill_session", async () => {
  const started = await client.callTool({ name: "exec_command", arguments: { cmd: "sleep 60", yield_time_ms: 250 } });
  const id = started.structuredContent.session_id;
  const listed = await client.callTool({ name: "list_sessions", arguments: {} });
  assert.ok(listed.structuredContent.sessions.some((s) => s.session_id === id && s.running && s.agent_id === "mcp-agent"));
  const killed = await client.callTool({ name: "kill_session", arguments: { session_id: id, signal: "kill" } });
  assert.equal(killed.isError, false);
  assert.match(text(killed), new RegExp(`Sent SIGKILL to session ID ${id}`));
});

test("bad arguments are an error result the model can read; an unknown tool is a protocol error", async () => {
  const bad = await client.callTool({ name: "exec_command", arguments: { cmd: "true", yield_time_ms: "soon" } });
  assert.equal(bad.isError, true);
  assert.match(text(bad), /yield_time_ms/);
  await assert.rejects(client.callTool({ name: "rm_rf", arguments: {} }), /unknown tool/);
});
