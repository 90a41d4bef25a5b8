// The daemon's request validators (daemon/server/request_validation.h) on arbitrary requests:
// the first byte picks the request type (low 4 bits) and the caller's agent (bit 4), the rest
// is parsed as that message's protobuf wire bytes, as gRPC would hand it to the service, and
// goes through the same function the service's handler calls first. Never a crash; and what
// a validator accepts keeps the promises the code after it relies on (an absolute workdir, a
// non-empty program, no NUL in what becomes an argv or environment entry).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include <google/protobuf/stubs/logging.h>

#include "daemon/server/request_validation.h"

namespace {

using namespace codexd;

bool has_nul(const std::string& s) { return s.find('\0') != std::string::npos; }

// A config whose agent budgets are set, so that requested limits are checked against them.
const config::Config& fuzz_config() {
  static const config::Config config = [] {
    config::Config c = config::default_config(config::DaemonMode::kUser);
    c.limits.agent.pids_max = 512;
    c.limits.agent.memory_max = uint64_t{1} << 30;
    c.limits.agent.cpu_max_percent = 200;
    c.agents["fuzz-agent"].budget.pids_max = 16;
    return c;
  }();
  return config;
}

void check_launch(const std::vector<std::string>& argv, const std::string& workdir,
                  const std::map<std::string, std::string>& env) {
  if (argv.empty() || argv[0].empty() || workdir.empty() || workdir[0] != '/') __builtin_trap();
  if (std::any_of(argv.begin(), argv.end(), has_nul) || has_nul(workdir)) __builtin_trap();
  for (const auto& [name, value] : env) {
    if (name.empty() || name.find('=') != std::string::npos || has_nul(name) || has_nul(value)) __builtin_trap();
  }
}

void check_exec(const Result<orchestrator::ExecRequest>& r) {
  if (!r.ok()) return;
  check_launch(r->argv, r->workdir, r->env);
  if (r->workdir.size() > 1 && r->workdir.back() == '/') __builtin_trap();
}

template <typename Message, typename Check>
void validate(const uint8_t* data, size_t size, Check check) {
  Message request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return;
  (void)check(request);
}

}  // namespace

// A string field that is not UTF-8 fails the parse (as it does in gRPC) and would be logged.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t selector = data[0];
  const std::string agent = (selector & 0x10) != 0 ? "fuzz-agent" : "";
  const config::Config& config = fuzz_config();
  data++, size--;
  switch (selector & 0x0f) {
    case 0:
      validate<v1::ExecCommandRequest>(
          data, size, [&](const auto& r) { check_exec(server::validate_exec_command(r, config, agent)); });
      break;
    case 1:
      validate<v1::RunCommandRequest>(
          data, size, [&](const auto& r) { check_exec(server::validate_run_command(r, config, agent)); });
      break;
    case 2:
      validate<v1::SandboxRunRequest>(data, size, [](const auto& r) {
        auto input = server::validate_sandbox_run(r);
        if (input.ok()) check_launch(input->launch.argv, input->launch.workdir, input->launch.env);
      });
      break;
    case 3:
      validate<v1::CheckPolicyRequest>(data, size, [&](const auto& r) {
        auto argv = server::validate_policy_check(r, config);
        if (argv.ok() && argv->empty()) __builtin_trap();
      });
      break;
    case 4: validate<v1::WriteStdinRequest>(data, size, server::validate_write_stdin); break;
    case 5: validate<v1::PollRequest>(data, size, server::validate_poll); break;
    case 6: validate<v1::CancelRequest>(data, size, server::validate_cancel); break;
    case 7: validate<v1::SendInputRequest>(data, size, server::validate_send_input); break;
    case 8: validate<v1::ResizeTerminalRequest>(data, size, server::validate_resize_terminal); break;
    case 9: validate<v1::ResolveApprovalRequest>(data, size, server::validate_resolve_approval); break;
    case 10:
      validate<v1::GetTraceRequest>(data, size,
                                    [](const auto& r) { (void)server::validate_session_id(r.session_id()); });
      break;
    default:
      break;
  }
  return 0;
}
