// The Node client against a real codexd (CODEXD_BIN_DIR/codexd on a temporary socket).
import * as grpc from "@grpc/grpc-js";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";

import { Client, CodexdError } from "../src/index";
import { Daemon } from "./daemon";

const CODEXD = join(process.env.CODEXD_BIN_DIR ?? "", "codexd");
const RULES = 'prefix_rule(pattern=["touch"], decision="prompt")\nprefix_rule(pattern=["shred"], decision="forbidden")\n';

let daemon: Daemon;
let client: Client;

before(async () => {
  daemon = await Daemon.start(CODEXD, RULES);
  client = new Client({ socketPath: daemon.socketPath, agentId: "node-agent" });
  await client.waitForReady();
});

after(async () => {
  client.close();
  assert.equal(await daemon.stop(), 0, "codexd's exit code");
});

test("a short command reports its output and exit in Codex's format", async () => {
  const result = await client.exec({ argv: ["echo", "hi"], workdir: daemon.workspace });
  assert.equal(result.exit_code, 0);
  assert.equal(result.output.toString(), "hi\n");
  assert.match(result.text, /Process exited with code 0/);
  assert.equal(result.session_id, undefined);
});

test("a long command is polled to its exit by the iterator", async () => {
  const answers = [];
  for await (const answer of client.execUntilExit({ cmd: "for i in 1 2 3; do echo $i; sleep 0.3; done",
                                                    workdir: daemon.workspace, yieldTimeMs: 250 })) {
    answers.push(answer);
  }
  assert.ok(answers.length > 1, "the first answer came before the command ended");
  assert.notEqual(answers[0].session_id, undefined);
  assert.equal(Buffer.concat(answers.map((a) => a.output)).toString(), "1\n2\n3\n");
  assert.equal(answers[answers.length - 1].exit_code, 0);
});

test("writeStdin reaches a TTY session", async () => {
  const started = await client.exec({ cmd: "read line; echo got:$line", workdir: daemon.workspace, tty: true, yieldTimeMs: 250 });
  assert.notEqual(started.session_id, undefined, started.text);
  let result = await client.writeStdin(started.session_id!, "hello\n", 2000);
  let output = result.output.toString();
  while (result.exit_code === undefined) {
    result = await client.poll(started.session_id!);
    output += result.output.toString();
  }
  assert.match(output, /got:hello/);
  assert.equal(result.exit_code, 0);
});

test("attach streams every byte, and the exit after a KILL", async () => {
  const started = await client.exec({ cmd: "seq 1 20000; exec sleep 60", workdir: daemon.workspace, yieldTimeMs: 250 });
  assert.notEqual(started.session_id, undefined, started.text);
  let expected = "";
  for (let i = 1; i <= 20000; ++i) expected += `${i}\n`;
  let received = "";
  let exit;
  for await (const event of client.attach(started.session_id!, { fromOffset: 0 })) {
    assert.notEqual(event.event, "gap");
    if (event.event === "output") {
      assert.equal(event.output!.offset, received.length);
      received += event.output!.data.toString();
      if (received === expected) assert.equal(await client.cancel(started.session_id!, "KILL"), true);
    } else if (event.event === "exit") {
      exit = event.exit;
      break;
    }
  }
  assert.equal(received, expected);
  assert.equal(exit?.signal, 9);
  assert.equal(exit?.final_offset, expected.length);
});

test("sessions are listed with the agent id", async () => {
  const started = await client.exec({ argv: ["sleep", "60"], workdir: daemon.workspace, yieldTimeMs: 250 });
  try {
    const mine = (await client.sessions()).filter((s) => s.session_id === started.session_id);
    assert.equal(mine.length, 1);
    assert.equal(mine[0].agent_id, "node-agent");
    assert.deepEqual(mine[0].argv, ["sleep", "60"]);
    assert.equal(mine[0].running, true);
  } finally {
    await client.cancel(started.session_id!, "KILL");
  }
});

test("an approval is seen by a watcher and answered both ways", async () => {
  const target = join(daemon.workspace, "approved-file");
  const decisions: Record<string, "approve" | "deny"> = { [target]: "approve", [`${target}-denied`]: "deny" };
  const reviewer = new Client({ socketPath: daemon.socketPath });
  const watch = reviewer.watchApprovals();
  const runs = Object.keys(decisions).map((path) => client.exec({ argv: ["touch", path], workdir: daemon.workspace }));
  const seen = new Set<string>();
  for await (const event of watch) {
    if (event.event !== "added") continue;
    const path = event.added!.argv[event.added!.argv.length - 1];
    assert.equal(event.added!.agent_id, "node-agent");
    seen.add(path);
    await reviewer.resolveApproval(event.added!.approval_id, decisions[path], "test says so");
    if (seen.size === 2) break;
  }
  reviewer.close();
  const [approved, denied] = await Promise.all(runs);
  assert.equal(approved.exit_code, 0);
  assert.ok(existsSync(target));
  assert.equal(denied.rejection?.reason, "DENIED_BY_REVIEWER");
  assert.ok(!existsSync(`${target}-denied`));
});

test("a forbidden command is rejected, not run", async () => {
  const result = await client.exec({ argv: ["shred", "x"], workdir: daemon.workspace });
  assert.equal(result.rejection?.reason, "FORBIDDEN_BY_POLICY");
  assert.equal(result.exit_code, undefined);
});

test("errors carry the status code and what to fix", async () => {
  await assert.rejects(client.poll(99, 0), (e: CodexdError) => e.code === grpc.status.NOT_FOUND);
  await assert.rejects(client.trace(99), (e: CodexdError) => e.code === grpc.status.NOT_FOUND && /no exec trace/.test(e.details));
  await assert.rejects(client.exec({ argv: ["true"], workdir: "relative/dir" }),
                       (e: CodexdError) => e.code === grpc.status.INVALID_ARGUMENT && /workdir/.test(e.details));
});

test("run and status", async () => {
  const run = await client.run({ cmd: "echo out; echo err >&2; exit 3", workdir: daemon.workspace });
  assert.deepEqual([run.exit_code, run.stdout.toString(), run.stderr.toString()], [3, "out\n", "err\n"]);
  const status = await client.status();
  assert.equal(status.pid, daemon.pid);
  assert.equal(status.caller_uid, process.getuid!());
});
