#include "platform/linux/helper_config.h"

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

}  // namespace

std::vector<std::string> render_helper_args(const HelperConfig& config) {
  std::vector<std::string> args;
  if (config.self_test) {
    args.push_back("--self-test");
    return args;
  }
  args.push_back(config.mode == HelperMode::kLandlock ? "--mode=landlock" : "--mode=bwrap");
  args.push_back(config.network ? "--network=on" : "--network=off");
  if (config.block_unix_sockets) args.push_back("--block-unix-sockets");
  for (const std::string& p : config.writable) args.push_back("--write=" + p);
  for (const std::string& p : config.read_only) args.push_back("--read-only=" + p);
  for (const std::string& p : config.unreadable) args.push_back("--no-read=" + p);
  for (const std::string& p : config.writable_files) args.push_back("--write-file=" + p);
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
      if (value != "on" && value != "off") return InvalidArgument("--network must be on or off");
      config.network = value == "on";
      saw_network = true;
    } else if (arg == "--block-unix-sockets") {
      config.block_unix_sockets = true;
    } else if (take_value(arg, "--write=", &value)) {
      CODEXD_RETURN_IF_ERROR(require_absolute(value, "--write"));
      config.writable.push_back(value);
    } else if (take_value(arg, "--read-only=", &value)) {
      CODEXD_RETURN_IF_ERROR(require_absolute(value, "--read-only"));
      config.read_only.push_back(value);
    } else if (take_value(arg, "--no-read=", &value)) {
      CODEXD_RETURN_IF_ERROR(require_absolute(value, "--no-read"));
      config.unreadable.push_back(value);
    } else if (take_value(arg, "--write-file=", &value)) {
      CODEXD_RETURN_IF_ERROR(require_absolute(value, "--write-file"));
      config.writable_files.push_back(value);
    } else if (take_value(arg, "--setenv=", &value)) {
      if (value.find('=') == std::string::npos || value.front() == '=') {
        return InvalidArgument("--setenv needs NAME=VALUE");
      }
      config.deferred_env.push_back(value);
    } else {
      return InvalidArgument("unknown helper option '" + arg + "'");
    }
  }
  // Every security-relevant choice must be explicit: a truncated argv must not default to a
  // weaker sandbox.
  if (!saw_mode || !saw_network) return InvalidArgument("--mode and --network are required");
  config.command.assign(args.begin() + static_cast<long>(i), args.end());
  if (config.command.empty()) return InvalidArgument("no command after --");
  return config;
}

}  // namespace codexd::sandbox::linux_backend
