// grpc.health.v1 and server reflection of a real codexd, asked with gRPC's own Node packages
// (grpc-health-check's health.proto, @grpc/reflection's reflection.proto, @grpc/grpc-js):
// clients that did not come from codexd's code. (grpcurl is not packaged in Debian 12.)
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { after, before, test } from "node:test";

const require = createRequire(import.meta.url);
const BIN = process.env.CODEXD_BIN_DIR;
let dir, socketPath, daemon;

function load(file, includeDir) {
  return grpc.loadPackageDefinition(protoLoader.loadSync(file, { includeDirs: [includeDir], keepCase: true, enums: String }));
}
const healthProto = load("health/v1/health.proto", join(dirname(require.resolve("grpc-health-check/package.json")), "proto"));
const reflectionProto = load("grpc/reflection/v1alpha/reflection.proto",
                             join(dirname(require.resolve("@grpc/reflection/package.json")), "build", "proto"));

before(async () => {
  dir = mkdtempSync(join(process.env.CODEXD_TEST_TMP ?? "/var/tmp", "codexd-std-"));
  chmodSync(dir, 0o755);
  for (const sub of ["rules", "home", "state"]) mkdirSync(join(dir, sub));
  socketPath = join(dir, "run", "codexd.sock");
  writeFileSync(join(dir, "codexd.toml"),
    `[daemon]\nmode = "user"\nlisten = "unix:${socketPath}"\nstate_dir = "${dir}/state"\n` +
    `[policy]\nrules_dirs = ["${dir}/rules"]\n[sandbox]\nmode = "danger-full-access"\nprivate_tmp_dir = "${dir}/private-tmp"\n`);
  const env = { ...process.env, HOME: join(dir, "home") };
  delete env.NOTIFY_SOCKET;
  daemon = spawn(join(BIN, "codexd"), ["--config", join(dir, "codexd.toml")], { stdio: ["ignore", openSync(join(dir, "codexd.log"), "w"), "inherit"], env });
});

after(async () => {
  const exited = new Promise((resolve) => daemon.once("exit", resolve));
  daemon.kill("SIGTERM");
  assert.equal(await exited, 0);
  rmSync(dir, { recursive: true, force: true });
});

function ready(client) {
  // gRPC's connectivity state, not a timer: resolves once the socket accepts a connection.
  return new Promise((resolve, reject) => client.waitForReady(Date.now() + 30000, (e) => (e ? reject(e) : resolve())));
}

test("the health check says SERVING for the server and for each codexd service", async () => {
  const health = new healthProto.grpc.health.v1.Health(`unix:${socketPath}`, grpc.credentials.createInsecure());
  await ready(health);
  for (const service of ["", "codexd.v1.Exec", "codexd.v1.Approvals", "codexd.v1.Policy", "codexd.v1.Admin", "codexd.v1.Sandbox"]) {
    const answer = await new Promise((resolve, reject) => health.Check({ service }, (e, r) => (e ? reject(e) : resolve(r))));
    assert.equal(answer.status, "SERVING", service);
  }
  await assert.rejects(new Promise((resolve, reject) => health.Check({ service: "no.such.Service" }, (e, r) => (e ? reject(e) : resolve(r)))),
                       (e) => e.code === grpc.status.NOT_FOUND);
  health.close();
});

test("server reflection lists the services and describes codexd.v1.Exec", async () => {
  const reflection = new reflectionProto.grpc.reflection.v1alpha.ServerReflection(`unix:${socketPath}`, grpc.credentials.createInsecure());
  await ready(reflection);
  const call = reflection.ServerReflectionInfo();
  const answers = [];
  const done = new Promise((resolve, reject) => {
    call.on("data", (d) => { answers.push(d); if (answers.length === 2) call.end(); });
    call.on("end", resolve);
    call.on("error", reject);
  });
  call.write({ list_services: "" });
  call.write({ file_containing_symbol: "codexd.v1.Exec" });
  await done;
  const names = answers[0].list_services_response.service.map((s) => s.name);
  for (const s of ["codexd.v1.Exec", "codexd.v1.Approvals", "codexd.v1.Admin", "grpc.health.v1.Health"]) assert.ok(names.includes(s), s);
  const files = answers[1].file_descriptor_response.file_descriptor_proto;
  assert.ok(files.length > 0 && files.some((f) => Buffer.from(f).includes("ExecCommand")));
  reflection.close();
});
