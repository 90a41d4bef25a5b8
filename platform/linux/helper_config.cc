#include "platform/linux/helper_config.h"

#include <optional>
#include <string_view>

namespace codexd::sandbox::linux_backend {
namespace {

bool take_value(std::string_view arg, std::string_view prefix, std::string* value) {
  if (arg.substr(0, prefix.size()) != prefix) return false;
  *value = std::string(arg.substr(prefix.size()));
  return true;
}

Status require_absolute(const std::string& path, std::string_view flag) {
  if (path.empty() || path.front() != '/') {
    return InvalidArgument(std::string(flag) + " needs an absolute path, got '" + path + "'");
  }
  return Status::Ok();
}

// The repeatable absolute-path options, rendered and parsed from this one table (in this
// order), so the two sides cannot disagree on a flag.
struct PathOption {
  std::string_view flag;  // without the "="
  std::vector<std::string> HelperConfig::*paths;
};
constexpr PathOption kPathOptions[] = {
    {"--write", &HelperConfig::writable},
    {"--read-only", &HelperConfig::read_only},
    {"--no-read", &HelperConfig::unreadable},
    {"--write-file", &HelperConfig::writable_files},
};

// Whether `arg` is one of kPathOptions; if so its (absolute) value is stored in `config`.
Result<bool> take_path_option(const std::string& arg, HelperConfig& config) {
  for (const PathOption& option : kPathOptions) {
    std::string value;
    if (!take_value(arg, std::string(option.flag) + "=", &value)) continue;
    CODEXD_RETURN_IF_ERROR(require_absolute(value, option.flag));
    (config.*option.paths).push_back(value);
    return true;
  }
  return false;
}

// The helper does not link the sandbox room's names.cc; the words are the same.
const char* network_word(NetworkMode mode) {
  switch (mode) {
    case NetworkMode::kOff: return "off";
    case NetworkMode::kProxy: return "proxy";
    case NetworkMode::kHost: return "host";
  }
  return "off";
}

std::optional<NetworkMode> parse_network_word(const std::string& word) {
  for (NetworkMode mode : {NetworkMode::kOff, NetworkMode::kProxy, NetworkMode::kHost}) {
    if (word == network_word(mode)) return mode;
  }
  return std::nullopt;
}

Result<int> parse_descriptor(const std::string& flag, const std::string& text) {
  if (text.empty() || text.size() > 6 || text.find_first_not_of("0123456789") != std::string::npos) {
    return InvalidArgument(flag + " needs a descriptor number");
  }
  int fd = std::stoi(text);
  if (fd < 3) return InvalidArgument(flag + " must be 3 or above");
  return fd;
}

}  // namespace

std::vector<std::string> render_helper_args(const HelperConfig& config) {
  std::vector<std::string> args;
  if (config.self_test) {
    args.push_back("--self-test");
    return args;
  }
  args.push_back(config.mode == HelperMode::kLandlock ? "--mode=landlock" : "--mode=bwrap");
  args.push_back("--network=" + std::string(network_word(config.network)));
  if (config.channel_fd >= 0) args.push_back("--channel-fd=" + std::to_string(config.channel_fd));
  if (config.console_fd >= 0) args.push_back("--console-fd=" + std::to_string(config.console_fd));
  if (config.seccomp_fd >= 0) args.push_back("--seccomp-fd=" + std::to_string(config.seccomp_fd));
  if (config.supervise_exec) args.push_back("--supervise-exec");
  if (config.exec_audit_only) args.push_back("--exec-audit");
  if (config.metadata_keeper) args.push_back("--metadata-keeper");
  if (config.block_unix_sockets) args.push_back("--block-unix-sockets");
  if (config.init) args.push_back("--init");
  for (const PathOption& option : kPathOptions) {
    for (const std::string& p : config.*option.paths) args.push_back(std::string(option.flag) + "=" + p);
  }
  for (const std::string& e : config.deferred_env) args.push_back("--setenv=" + e);
  args.push_back("--");
  args.insert(args.end(), config.command.begin(), config.command.end());
  return args;
}

Result<HelperConfig> parse_helper_args(const std::vector<std::string>& args) {
  HelperConfig config;
  bool saw_mode = false;
  bool saw_network = false;
  size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& arg = args[i];
    std::string value;
    if (arg == "--") {
      ++i;
      break;
    } else if (arg == "--self-test") {
      config.self_test = true;
      return config;
    } else if (take_value(arg, "--mode=", &value)) {
      if (value == "bwrap") {
        config.mode = HelperMode::kBwrap;
      } else if (value == "landlock") {
        config.mode = HelperMode::kLandlock;
      } else {
        return InvalidArgument("unknown --mode " + value);
      }
      saw_mode = true;
    } else if (take_value(arg, "--network=", &value)) {
      std::optional<NetworkMode> mode = parse_network_word(value);
      if (!mode) return InvalidArgument("--network must be off, proxy or host");
      config.network = *mode;
      saw_network = true;
    } else if (take_value(arg, "--channel-fd=", &value)) {
      CODEXD_ASSIGN_OR_RETURN(config.channel_fd, parse_descriptor("--channel-fd", value));
    } else if (take_value(arg, "--console-fd=", &value)) {
      CODEXD_ASSIGN_OR_RETURN(config.console_fd, parse_descriptor("--console-fd", value));
    } else if (take_value(arg, "--seccomp-fd=", &value)) {
      CODEXD_ASSIGN_OR_RETURN(config.seccomp_fd, parse_descriptor("--seccomp-fd", value));
    } else if (arg == "--supervise-exec") {
      config.supervise_exec = true;
    } else if (arg == "--exec-audit") {
      config.exec_audit_only = true;
    } else if (arg == "--metadata-keeper") {
      config.metadata_keeper = true;
    } else if (arg == "--init") {
      config.init = true;
    } else if (arg == "--block-unix-sockets") {
      config.block_unix_sockets = true;
    } else if (take_value(arg, "--setenv=", &value)) {
      if (value.find('=') == std::string::npos || value.front() == '=') {
        return InvalidArgument("--setenv needs NAME=VALUE");
      }
      config.deferred_env.push_back(value);
    } else {
      CODEXD_ASSIGN_OR_RETURN(bool taken, take_path_option(arg, config));
      if (!taken) return InvalidArgument("unknown helper option '" + arg + "'");
    }
  }
  // Every security-relevant choice must be explicit: a truncated argv must not default to a
  // weaker sandbox.
  if (!saw_mode || !saw_network) return InvalidArgument("--mode and --network are required");
  if ((config.network == NetworkMode::kProxy || config.supervise_exec) != (config.channel_fd >= 0)) {
    return InvalidArgument("--channel-fd is required with --network=proxy or --supervise-exec and refused otherwise");
  }
  if (config.console_fd >= 0 && (config.mode != HelperMode::kBwrap || !config.init || config.console_fd == config.channel_fd)) {
    return InvalidArgument("--console-fd needs --mode=bwrap and --init, and its own descriptor");
  }
  if (config.seccomp_fd >= 0 && (config.seccomp_fd == config.channel_fd || config.seccomp_fd == config.console_fd)) {
    return InvalidArgument("--seccomp-fd needs its own descriptor");
  }
  // A filter chain has one listener, the keeper's: it relays the execs.
  if (config.supervise_exec && !config.metadata_keeper) {
    return InvalidArgument("--supervise-exec needs --metadata-keeper (the keeper relays the execs)");
  }
  if (config.exec_audit_only && !config.supervise_exec) return InvalidArgument("--exec-audit needs --supervise-exec");
  config.command.assign(args.begin() + static_cast<long>(i), args.end());
  if (config.command.empty()) return InvalidArgument("no command after --");
  return config;
}

}  // namespace codexd::sandbox::linux_backend
