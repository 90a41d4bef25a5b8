#include "platform/macos/seatbelt_command.h"

#include <algorithm>
#include <array>


namespace codexd::sandbox::macos_backend {
namespace {

bool is_marker(const std::string& entry) {
  static constexpr std::array<std::string_view, 3> kMarkers = {
      "CODEX_SANDBOX=", "CODEX_SANDBOX_NETWORK_DISABLED=", "CODEXD_SANDBOX="};
  return std::any_of(kMarkers.begin(), kMarkers.end(),
                     [&](std::string_view marker) { return entry.starts_with(marker); });
}

}  // namespace

std::vector<std::string> sandbox_exec_argv(const SeatbeltPolicy& policy,
                                           const std::vector<std::string>& command) {
  std::vector<std::string> argv = {std::string(kSandboxExecPath), "-p", policy.text};
  for (const SeatbeltParam& param : policy.params) argv.push_back("-D" + param.name + "=" + param.value);
  argv.push_back("--");
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

std::vector<std::string> seatbelt_environment(const std::vector<std::string>& env, NetworkMode network) {
  std::vector<std::string> out;
  for (const std::string& entry : env) {
    if (!is_marker(entry)) out.push_back(entry);
  }
  out.push_back("CODEX_SANDBOX=seatbelt");
  out.push_back("CODEXD_SANDBOX=" + std::string(to_string(Backend::kMacosSeatbelt)));
  if (network == NetworkMode::kOff) out.push_back("CODEX_SANDBOX_NETWORK_DISABLED=1");
  return out;
}

Result<LaunchPlan> build_seatbelt_plan(const SandboxSpec& spec, const LaunchRequest& request,
                                       const SeatbeltOptions& options) {
  CODEXD_RETURN_IF_ERROR(validate_launch_request(request));
  CODEXD_ASSIGN_OR_RETURN(SeatbeltPolicy policy, build_seatbelt_policy(spec, options));
  LaunchPlan plan;
  plan.backend = Backend::kMacosSeatbelt;
  plan.argv = sandbox_exec_argv(policy, request.argv);
  plan.env = seatbelt_environment(request.env, spec.network);
  plan.cwd = request.cwd;
  plan.rules = std::move(policy.rules);
  return plan;
}

}  // namespace codexd::sandbox::macos_backend
