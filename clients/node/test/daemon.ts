// A real codexd on a temporary socket for the client tests (as tests/support/test_daemon.cc
// starts one for the C++ suites): its own config, rules, state directory and HOME, ready when
// its socket accepts a gRPC connection, stopped with SIGTERM.
import { ChildProcess, spawn } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export class Daemon {
  readonly dir: string;
  readonly workspace: string;
  readonly socketPath: string;
  private process?: ChildProcess;

  private constructor(dir: string) {
    this.dir = dir;
    this.workspace = join(dir, "ws");
    this.socketPath = join(dir, "run", "codexd.sock");
  }

  static async start(codexd: string, rules = ""): Promise<Daemon> {
    // Not under /tmp: it is a writable root of the sandbox by default.
    const daemon = new Daemon(mkdtempSync(join(process.env.CODEXD_TEST_TMP ?? "/var/tmp", "codexd-node-")));
    const dir = daemon.dir;
    chmodSync(dir, 0o755);
    for (const sub of ["ws", "rules", "home", "state"]) mkdirSync(join(dir, sub));
    if (rules) writeFileSync(join(dir, "rules", "test.rules"), rules);
    const config = join(dir, "codexd.toml");
    writeFileSync(config, `[daemon]\nmode = "user"\nlisten = "unix:${daemon.socketPath}"\nstate_dir = "${dir}/state"\n` +
      `[policy]\nrules_dirs = ["${dir}/rules"]\napproval_policy = "on-request"\n` +
      `[sandbox]\nmode = "danger-full-access"\nprivate_tmp_dir = "${dir}/private-tmp"\n`);
    // node:dgram has no AF_UNIX datagram sockets for a NOTIFY_SOCKET: the caller waits with
    // Client.waitForReady (gRPC's connectivity state) instead.
    const env: NodeJS.ProcessEnv = { ...process.env, HOME: join(dir, "home") };
    delete env.NOTIFY_SOCKET;
    const log = openSync(join(dir, "codexd.log"), "w");
    daemon.process = spawn(codexd, ["--config", config], { stdio: ["ignore", log, log], env, detached: true });
    return daemon;
  }

  log(): string {
    return readFileSync(join(this.dir, "codexd.log"), "utf8");
  }

  get pid(): number {
    return this.process?.pid ?? -1;
  }

  async stop(): Promise<number | null> {
    const child = this.process;
    if (!child) return null;
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    if (child.exitCode === null) child.kill("SIGTERM");
    const code = child.exitCode ?? (await exited);
    rmSync(this.dir, { recursive: true, force: true });
    return code;
  }
}
