// Copies the codexd.v1 protos into the package (./proto, loaded at run time by
// @grpc/proto-loader) and generates their TypeScript types into src/generated.
import { cpSync, mkdirSync, rmSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(dirname(fileURLToPath(import.meta.url)));
const source = join(here, "..", "..", "proto", "codexd", "v1");
rmSync(join(here, "proto"), { recursive: true, force: true });
mkdirSync(join(here, "proto", "codexd"), { recursive: true });
cpSync(source, join(here, "proto", "codexd", "v1"), { recursive: true });
rmSync(join(here, "src", "generated"), { recursive: true, force: true });
const protos = ["common", "exec", "approvals", "policy", "admin", "sandbox"].map((n) => `codexd/v1/${n}.proto`);
execFileSync(join(here, "node_modules", ".bin", "proto-loader-gen-types"), [
  "--grpcLib=@grpc/grpc-js", "--longs=Number", "--enums=String", "--defaults", "--oneofs", "--keepCase",
  "--outDir", join(here, "src", "generated"), ...protos, "-I", join(here, "proto"),  // -I takes a list: last
], { stdio: "inherit" });
