#include "daemon/server/restart_check.h"

#include "daemon/orchestrator/policy_store.h"
#include "platform/posix/process_image.h"

namespace codexd::server {

Status check_restart(const RestartCheckInput& input) {
  std::vector<std::string> problems;
  if (Status binary = posix::check_executable(input.command.executable); !binary.ok()) {
    problems.push_back(binary.message());
  }
  if (input.command.argv.empty()) problems.push_back("this daemon does not know the command line it was started with");

  const bool system_mode = input.running->daemon.mode == config::DaemonMode::kSystem;
  const config::Config* next = input.running;
  config::Config loaded;
  if (!input.config_path.empty()) {
    auto parsed = config::load_config_file(input.config_path);
    if (!parsed.ok()) {
      problems.push_back(parsed.status().message());
    } else {
      loaded = std::move(parsed).value();
      next = &loaded;
    }
    if (system_mode) {
      if (Status trusted = config::check_root_only_writable(input.config_path); !trusted.ok()) {
        problems.push_back(trusted.message());
      }
    }
  }
  if (!next->exec.durable_sessions && input.live_sessions > 0) {
    problems.push_back("the new config turns exec.durable_sessions off, so the new daemon would not adopt the " +
                       std::to_string(input.live_sessions) + " running session(s); stop the daemon instead");
  }
  orchestrator::PolicyStore rules(next->policy.include_default_rules ? input.default_rules : std::string(),
                                  next->policy.rules_dirs, system_mode);
  auto reloaded = rules.reload();
  for (const auto& e : reloaded.errors) problems.push_back(e);

  if (problems.empty()) return Status::Ok();
  std::string message = "restart refused, the daemon keeps running: ";
  for (size_t i = 0; i < problems.size(); ++i) message += (i ? "; " : "") + problems[i];
  return FailedPrecondition(std::move(message));
}

}  // namespace codexd::server
