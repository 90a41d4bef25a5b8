// codexd-sandbox-helper: the last step before the sandboxed command. bwrap runs it inside the
// new namespaces (or the daemon runs it directly for the Landlock backend); it sets
// no_new_privs, drops every capability, applies the Landlock ruleset (Landlock backend),
// takes the sandbox's terminal (bwrap), forks off the command under itself as its metadata
// keeper (metadata_keeper.h),
// installs the seccomp filter (the daemon's compiled program from --seccomp-fd, or compiled
// here with libseccomp without it), restores loader variables, closes stray descriptors and
// execvp()s the command. If any step fails the command is never run: exit 126 with a
// message on stderr ("codexd-sandbox-helper: ..."); a command that cannot be executed is 126
// ("cannot execute X: ...") and one that does not exist 127 ("command not found: X").
//
// Built without sanitizers and statically linked: a sanitizer runtime would run code before
// the filter and its own allocator would need syscalls we refuse; a static binary also
// ignores LD_PRELOAD & co. entirely.
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "platform/linux/capability_drop.h"
#include "platform/linux/helper/metadata_keeper.h"
#include "platform/linux/helper/console.h"
#include "platform/linux/helper/proxy_ports.h"
#include "platform/linux/helper/run_command.h"
#include "platform/linux/helper_config.h"
#include "platform/linux/landlock_ruleset.h"
#include "platform/linux/landlock_sys.h"
#include "platform/linux/seccomp_filter.h"
#include "platform/posix/fd_passing.h"
#include "platform/linux/seccomp_program.h"
#include "platform/posix/fd_util.h"

namespace {

using codexd::Status;
namespace lb = codexd::sandbox::linux_backend;

constexpr int kSetupFailed = 126;

[[noreturn]] void fail(const char* step, const std::string& message) {
  std::fprintf(stderr, "codexd-sandbox-helper: %s: %s\n", step, message.c_str());
  std::fflush(stderr);
  std::_Exit(kSetupFailed);
}

void check(const char* step, const Status& status) {
  if (!status.ok()) fail(step, status.to_string());
}

void set_environment(const std::vector<std::string>& entries) {
  for (const std::string& entry : entries) {
    size_t eq = entry.find('=');
    if (::setenv(entry.substr(0, eq).c_str(), entry.substr(eq + 1).c_str(), 1) != 0) {
      fail("setenv", std::strerror(errno));
    }
  }
}

// The daemon's compiled programs, read and checked before anything else is done, the
// descriptor closed at once (the command never holds it). None without --seccomp-fd.
std::optional<lb::SeccompPrograms> read_programs(const lb::HelperConfig& config) {
  if (config.seccomp_fd < 0) return std::nullopt;
  codexd::Result<lb::SeccompPrograms> programs = lb::read_seccomp_programs(config.seccomp_fd, config.metadata_keeper);
  if (!programs.ok()) fail("seccomp", programs.status().to_string());
  ::close(config.seccomp_fd);
  return std::move(programs).value();
}

// The command's filter: the daemon's program as it is, or compiled here.
void install_command_filter(const lb::HelperConfig& config, const std::optional<lb::SeccompPrograms>& programs,
                            codexd::UniqueFd* listener) {
  if (!programs) {
    check("seccomp", lb::install_seccomp_filter(config, /*build_only=*/false, listener));
    return;
  }
  const bool notifies = lb::filter_notifies(config, lb::FilterRole::kCommand);
  check("seccomp", lb::load_seccomp_program(programs->command, notifies ? listener : nullptr));
}

// Network mode proxy: the proxy ports' listening sockets.
std::optional<lb::OpenedProxyPorts> open_ports(const lb::HelperConfig& config) {
  if (config.network != codexd::sandbox::NetworkMode::kProxy) return std::nullopt;
  codexd::Result<lb::OpenedProxyPorts> ports = lb::open_proxy_ports(config);
  if (!ports.ok()) fail("proxy ports", ports.status().to_string());
  // Landlock has no network namespace, so the ports are ephemeral and only known now.
  if (config.mode == lb::HelperMode::kLandlock) set_environment(codexd::sandbox::proxy_environment(ports->ports));
  return std::move(ports).value();
}

// Forks the keeper (it relays the execs under supervision, over a pair made here), loads the
// command's filter and gives its listener to the keeper, then sends the daemon the handover
// (the proxy's ports, the daemon's end of the exec relay). Returns in the command's process.
// `programs`: the daemon's compiled filters, else compiled here.
void filter_and_hand_over(const lb::HelperConfig& config, const std::optional<lb::SeccompPrograms>& programs,
                          bool own_terminal, lb::OpenedProxyPorts* opened_ports) {
  codexd::UniqueFd relay_for_daemon;
  codexd::UniqueFd relay_for_keeper;
  if (config.supervise_exec) {
    codexd::Result<codexd::posix::SocketPair> relay = codexd::posix::make_seqpacket_pair();
    if (!relay.ok()) fail("exec relay", relay.status().to_string());
    relay_for_daemon = std::move(relay->first);
    relay_for_keeper = std::move(relay->second);
  }
  codexd::UniqueFd keeper_link;
  if (config.metadata_keeper) {
    // Returns in the child only; under bwrap the keeper is also the sandbox's init.
    codexd::Result<codexd::UniqueFd> link = lb::start_metadata_keeper(config, own_terminal, std::move(relay_for_keeper),
                                                                       programs ? &programs->keeper : nullptr);
    if (!link.ok()) fail("metadata keeper", link.status().to_string());
    keeper_link = std::move(link).value();
  }
  codexd::UniqueFd keeper_listener;
  install_command_filter(config, programs, config.metadata_keeper ? &keeper_listener : nullptr);
  if (config.metadata_keeper) {
    check("metadata keeper", lb::hand_listener_to_keeper(std::move(keeper_link), std::move(keeper_listener)));
  }
  if (config.channel_fd >= 0) check("handover", lb::hand_over(config, opened_ports, std::move(relay_for_daemon)));
}

int self_test(const lb::HelperConfig& config) {
  lb::HelperConfig probe = config;
  probe.network = codexd::sandbox::NetworkMode::kOff;
  probe.block_unix_sockets = true;
  check("self-test seccomp", lb::install_seccomp_filter(probe, /*build_only=*/true));
  std::printf("codexd-sandbox-helper ok landlock-abi=%d\n", lb::landlock_abi_version());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  codexd::Result<lb::HelperConfig> parsed = lb::parse_helper_args(args);
  if (!parsed.ok()) fail("arguments", parsed.status().to_string());
  const lb::HelperConfig& config = *parsed;
  if (config.self_test) return self_test(config);
  const std::optional<lb::SeccompPrograms> programs = read_programs(config);

  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail("PR_SET_NO_NEW_PRIVS", std::strerror(errno));

  // Before the filter: the helper itself binds the ports, the command never may.
  std::optional<lb::OpenedProxyPorts> opened_ports = open_ports(config);
  std::vector<uint16_t> proxy_ports;
  if (opened_ports) proxy_ports = {opened_ports->ports.http, opened_ports->ports.socks};

  std::vector<lb::LandlockGrant> grants;
  int abi = 0;
  if (config.mode == lb::HelperMode::kLandlock) {
    abi = lb::landlock_abi_version();
    if (abi < 1) fail("landlock", "Landlock is not available in this kernel");
    // Listed while capabilities still allow reading every directory; granting on an entry the
    // command cannot open anyway is harmless.
    grants = lb::plan_landlock_grants(config, abi);
  }

  check("capabilities", lb::drop_all_capabilities());
  if (config.mode == lb::HelperMode::kLandlock) {
    check("landlock", lb::apply_landlock(grants, config, abi, proxy_ports));
  }
  // No core files (they would land in the writable cwd and may hold secrets); a core_pattern
  // pipe handler configured on the host still runs, that is host policy. Set before the
  // keeper forks, so that it holds for both.
  struct rlimit no_core {0, 0};
  if (::setrlimit(RLIMIT_CORE, &no_core) != 0) fail("RLIMIT_CORE", std::strerror(errno));

  // Before the keeper forks: the command's session is made around the terminal it ends up with.
  bool own_terminal = false;
  if (config.console_fd >= 0) {
    codexd::Result<bool> console = lb::take_console(config.console_fd);
    if (!console.ok()) fail("console", console.status().to_string());
    own_terminal = *console;
  }

  filter_and_hand_over(config, programs, own_terminal, opened_ports ? &*opened_ports : nullptr);

  set_environment(config.deferred_env);
  codexd::posix::close_descriptors_from(3);

  std::vector<char*> command;
  for (const std::string& word : config.command) command.push_back(const_cast<char*>(word.c_str()));
  command.push_back(nullptr);
  // Under exec supervision the daemon takes the first exec it is told about for the command
  // itself (already decided): so the PATH search happens here, and only one execve follows.
  std::string program = config.supervise_exec ? lb::find_program(config.command.front()) : config.command.front();
  if (config.init && !config.metadata_keeper) lb::run_under_init(program.c_str(), command.data(), own_terminal);
  lb::exec_command(program.c_str(), command.data());
}
