// codexd: the execution daemon. See README.md and docs/ for what it does and how to run it.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <grpc/grpc.h>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <filesystem>
#include <iostream>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "daemon/config/config.h"
#include "daemon/exec/environment.h"
#include "daemon/orchestrator/launch_builder.h"
#include "daemon/orchestrator/policy_store.h"
#include "daemon/server/daemon.h"
#include "daemon/server/json_log_formatter.h"
#include "platform/backends/manager_factory.h"
#include "platform/posix/process_hardening.h"
#include "platform/posix/process_image.h"
#include "platform/sandbox/format.h"
#include "platform/sandbox/sandbox.h"

#ifdef CODEXD_HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

#ifndef CODEXD_VERSION
#define CODEXD_VERSION "0.0.0"
#endif

namespace {

using namespace codexd;

void setup_logging(const config::Config& config) {
  auto logger = spdlog::stderr_logger_mt("codexd");
  if (config.daemon.log_format == "json") {
    logger->set_formatter(server::make_json_log_formatter());
  } else {
    logger->set_pattern("%Y-%m-%d %H:%M:%S.%e %^%l%$ codexd[%P]: %v");
  }
  logger->set_level(spdlog::level::from_str(config.daemon.log_level));
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

// The shipped default.rules, where it is relative to the binary (build tree:
// build/share/codexd, installed: /usr/share/codexd). Returned also when it is not there: the
// policy store then loads the built-in copy and warns.
std::string default_rules_path() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "/usr/share/codexd/default.rules";
  return (exe.parent_path().parent_path() / "share" / "codexd" / "default.rules").string();
}

int inherited_listen_fd() {
#ifdef CODEXD_HAVE_SYSTEMD
  int n = sd_listen_fds(1);
  if (n == 1 && sd_is_socket_unix(SD_LISTEN_FDS_START, SOCK_STREAM, 1, nullptr, 0) > 0) return SD_LISTEN_FDS_START;
  if (n > 1) std::fprintf(stderr, "codexd: systemd passed %d sockets; expected one\n", n);
#endif
  return -1;
}

// What a restart in place passes to the new image (daemon/server/daemon.cc, restart_daemon).
constexpr const char* kRestartListenFdVar = "CODEXD_RESTART_LISTEN_FD";
constexpr const char* kRestartSocketOwnedVar = "CODEXD_RESTART_SOCKET_OWNED";
constexpr int kRestartListenFd = 3;

struct InheritedSocket {
  int fd = -1;
  bool owned = false;  // created by a daemon (not systemd): removed when this one stops
};

// The socket a restart in place left at fd 3, else systemd's. The variables are removed at
// once: no command may inherit them.
InheritedSocket inherited_socket() {
  const char* fd_text = std::getenv(kRestartListenFdVar);
  const char* owned_text = std::getenv(kRestartSocketOwnedVar);
  const bool from_restart = fd_text != nullptr && std::string(fd_text) == std::to_string(kRestartListenFd);
  const bool owned = owned_text != nullptr && std::string(owned_text) == "1";
  ::unsetenv(kRestartListenFdVar);
  ::unsetenv(kRestartSocketOwnedVar);
  if (from_restart) {
    if (posix::is_listening_unix_socket(kRestartListenFd)) return {kRestartListenFd, owned};
    std::fprintf(stderr, "codexd: %s=3 but fd 3 is not a listening Unix socket; ignoring it\n", kRestartListenFdVar);
  }
  return {inherited_listen_fd(), false};
}

// Replaces this process with the binary on disk now, keeping the pid and the listening socket.
// Returns only on failure (the sessions stay with their shims for the next daemon).
int restart_in_place(const server::RestartCommand& command, server::RestartHandover handover) {
  spdlog::info("restarting in place: exec {}", command.executable);
  spdlog::default_logger()->flush();
  Status failed = posix::replace_process_image(
      command.executable, command.argv, handover.listener.get(), kRestartListenFd,
      {{kRestartListenFdVar, std::to_string(kRestartListenFd)}, {kRestartSocketOwnedVar, handover.owns_socket_file ? "1" : "0"}});
  spdlog::critical("restart in place failed: {}; the sessions wait for the next codexd", failed.message());
  return 1;
}

// Runs the daemon until it stops. A stop for a restart in place execs the new image from here,
// once every thread of the old one has been joined.
int serve(config::Config config, server::DaemonOptions options) {
  // gRPC's library teardown, run when the last grpc::Server goes, joins its executor threads, and
  // in gRPC 1.51 one of them can sit in a 10 s poll: a stop then took up to 10 s after "codexd
  // stopped" was logged (seen in 3 of 10 stops). A reference held for the life of the process
  // leaves that teardown to the exit, which has nothing left for it to do.
  grpc_init();
  auto daemon = server::Daemon::start(std::move(config), options);
  if (!daemon.ok()) {
    spdlog::critical("cannot start: {}", daemon.status().message());
    return 1;
  }
  const int code = (*daemon)->wait();
  std::optional<server::RestartHandover> handover = (*daemon)->take_restart_handover();
  if (!handover) return code;
  (*daemon).reset();  // every session left to its shim
  return restart_in_place(options.restart, std::move(*handover));
}

int check_config(const config::Config& config, const std::string& default_rules, const std::vector<std::string>& config_errors) {
  int errors = 0;
  for (const auto& e : config_errors) {
    std::fprintf(stderr, "%s\n", e.c_str());
    ++errors;
  }
  orchestrator::PolicyStore store(default_rules, config.policy.rules_dirs,
                                  config.daemon.mode == config::DaemonMode::kSystem);
  auto result = store.reload();
  for (const auto& e : result.errors) {
    std::fprintf(stderr, "%s\n", e.c_str());
    ++errors;
  }
  auto state = store.state();
  std::printf("config: %s\n", config.source_path.empty() ? "(defaults)" : config.source_path.c_str());
  std::printf("socket: %s\n", config::socket_path(config).c_str());
  for (const auto& f : state.files) std::printf("rules: %s %s\n", f.path.c_str(), f.loaded ? "ok" : "FAILED");
  for (const auto& warning : state.warnings) std::printf("warning: %s\n", warning.c_str());
  std::printf("%s\n", errors ? "configuration has errors" : "configuration ok");
  return errors ? 1 : 0;
}

// The launch `codexctl exec` would get for COMMAND run by this user in `workdir` (a one-shot,
// like RunCommand), built by the same LaunchBuilder as every RPC.
int print_sandbox_plan(const config::Config& config, std::string workdir, const std::vector<std::string>& command) {
  sandbox::SandboxManagerOptions options;
  options.preference = config.sandbox.backend;
  options.helper_path = config.sandbox.helper_path;
  auto manager = sandbox::create_sandbox_manager(options);
  std::printf("%s\n", sandbox::format_capability_report(manager->capabilities()).c_str());
  std::string socket = config::socket_path(config);
  orchestrator::LaunchBuilder launches({&config, manager.get(), exec::current_process_environment(),
                                        socket.substr(0, socket.rfind('/')), /*proxy_channels=*/nullptr,
                                        /*private_tmp=*/nullptr});
  orchestrator::LaunchInput input;
  input.argv = command.empty() ? std::vector<std::string>{"/bin/true"} : command;
  input.workdir = workdir.empty() ? std::filesystem::current_path().string() : workdir;
  auto run_as = launches.resolve_identity(::geteuid(), input.workdir);
  if (!run_as.ok()) {
    std::fprintf(stderr, "codexd: %s\n", run_as.status().message().c_str());
    return 1;
  }
  auto spec = launches.resolve_sandbox(launches.configured_policy_for(""), input.workdir, *run_as, "");
  if (!spec.ok()) {
    std::fprintf(stderr, "codexd: %s\n", spec.status().message().c_str());
    return 1;
  }
  auto built = launches.build(*run_as, *spec, /*confined=*/true, input);
  if (!built.ok()) {
    std::fprintf(stderr, "codexd: no sandbox can run this: %s\n", built.status().message().c_str());
    return 1;
  }
  std::printf("%s\n", sandbox::format_launch_plan(built->plan).c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Before a package upgrade can replace the file: what a restart in place execs.
  const server::RestartCommand restart_command{posix::current_executable_path(), {argv, argv + argc}};
  // Before any thread exists.
  auto hardening = posix::harden_current_process();
  if (hardening.exit_code != 0) {
    std::fprintf(stderr, "ERROR: %s\n", hardening.message.c_str());
    return hardening.exit_code;
  }

  CLI::App app{"codexd: privilege-separated execution daemon for AI coding agents"};
  app.set_version_flag("--version", std::string("codexd ") + CODEXD_VERSION);
  std::string config_path, listen, mode, log_level, workdir;
  bool check = false, print_plan = false;
  std::vector<std::string> command;
  app.add_option("--config", config_path, "TOML config file (default: built-in defaults; see docs/configuration.md)");
  app.add_option("--listen", listen, "Socket to listen on, unix:/absolute/path (overrides daemon.listen)");
  app.add_option("--mode", mode, "user or system (overrides daemon.mode)")->check(CLI::IsMember({"user", "system"}));
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error or off (overrides daemon.log_level)")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
  bool keep_sessions = false;
  app.add_flag("--keep-sessions", keep_sessions, "When stopped, leave durable sessions running for the next codexd");
  app.add_flag("--check-config", check, "Validate the config and every rules file, print all errors, exit non-zero on any");
  app.add_flag("--print-sandbox-plan", print_plan,
               "Print the sandbox capability report and the exact launch (argv, rules) for COMMAND, then exit");
  app.add_option("--workdir", workdir, "With --print-sandbox-plan: the command's working directory (default: cwd)");
  app.add_option("command", command, "With --print-sandbox-plan: the command (after --)");
  CLI11_PARSE(app, argc, argv);

  config::Config config = config::default_config(mode == "system" ? config::DaemonMode::kSystem : config::DaemonMode::kUser);
  if (!config_path.empty()) {
    auto loaded = config::load_config_file(config_path);
    if (!loaded.ok()) {
      std::fprintf(stderr, "codexd: %s\n", loaded.status().message().c_str());
      return 2;
    }
    config = std::move(loaded).value();
    if (!mode.empty()) config.daemon.mode = mode == "system" ? config::DaemonMode::kSystem : config::DaemonMode::kUser;
  }
  if (!listen.empty()) {
    std::string path = listen.rfind("unix:", 0) == 0 ? listen.substr(5) : listen;
    if (path.empty() || path[0] != '/') {
      std::fprintf(stderr, "codexd: --listen must be unix:/absolute/path (got %s)\n", listen.c_str());
      return 2;
    }
    config.daemon.listen = "unix:" + path;
  }
  if (!log_level.empty()) config.daemon.log_level = log_level;
  // System mode runs commands as other users: its config must be one only root can change.
  std::vector<std::string> config_errors;
  if (config.daemon.mode == config::DaemonMode::kSystem && !config_path.empty()) {
    Status trusted = config::check_root_only_writable(config_path);
    if (!trusted.ok()) {
      if (!check) {
        std::fprintf(stderr, "codexd: %s\n", trusted.message().c_str());
        return 2;
      }
      config_errors.push_back(trusted.message());
    }
  }
  if (config.daemon.mode == config::DaemonMode::kSystem && ::geteuid() != 0 && !check && !print_plan) {
    std::fprintf(stderr, "codexd: system mode needs root (it runs each command as the uid that asked)\n");
    return 2;
  }

  const std::string default_rules = config.policy.include_default_rules ? default_rules_path() : std::string();
  if (check) return check_config(config, default_rules, config_errors);
  if (print_plan) return print_sandbox_plan(config, workdir, command);

  setup_logging(config);
  server::DaemonOptions options;
  options.config_path = config_path;
  const InheritedSocket inherited = inherited_socket();
  options.inherited_listen_fd = inherited.fd;
  options.inherited_socket_owned = inherited.owned;
  options.restart = restart_command;
  options.default_rules = default_rules;
  options.keep_sessions = keep_sessions;
  return serve(std::move(config), std::move(options));
}
