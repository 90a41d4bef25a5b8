#include "platform/linux/loader_env.h"

#include <array>

namespace codexd::sandbox::linux_backend {
namespace {

// glibc's unsecvars list (what it scrubs for setuid programs) minus TMPDIR, plus MALLOC_*.
constexpr std::array<std::string_view, 10> kLoaderNames = {
    "GLIBC_TUNABLES", "GCONV_PATH", "GETCONF_DIR", "HOSTALIASES", "LOCALDOMAIN",
    "LOCPATH",        "NIS_PATH",   "NLSPATH",     "RESOLV_HOST_CONF", "RES_OPTIONS",
};

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

}  // namespace

bool is_loader_variable(std::string_view name) {
  if (starts_with(name, "LD_") || starts_with(name, "MALLOC_")) return true;
  for (std::string_view known : kLoaderNames) {
    if (name == known) return true;
  }
  return false;
}

SplitEnvironment split_loader_environment(const std::vector<std::string>& env) {
  SplitEnvironment out;
  for (const std::string& entry : env) {
    size_t eq = entry.find('=');
    std::string_view name = std::string_view(entry).substr(0, eq);
    if (eq == std::string::npos || name.empty()) continue;  // malformed: dropped
    if (name == "CODEXD_SANDBOX" || name == "CODEXD_SANDBOX_NETWORK" || name == "CODEX_SANDBOX_NETWORK_DISABLED") {
      continue;
    }
    (is_loader_variable(name) ? out.deferred : out.safe).push_back(entry);
  }
  return out;
}

}  // namespace codexd::sandbox::linux_backend
