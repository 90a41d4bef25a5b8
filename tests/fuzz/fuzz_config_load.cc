// The TOML config loader (daemon/config/config.h) on arbitrary text: parse_config is what
// load_config_file (codexd --config, the restart check) hands the file's bytes to, so syntax
// errors, unknown keys and bad values all go through here. Never a crash; an error names its
// file; a config that loads answers every question the daemon asks of it.
#include <cstddef>
#include <cstdint>
#include <string>

#include "daemon/config/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace codexd::config;
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto loaded = parse_config(text, "fuzz.toml");
  if (!loaded.ok()) {
    if (loaded.status().message().rfind("fuzz.toml:", 0) != 0) __builtin_trap();
    return 0;
  }
  const Config& c = *loaded;
  (void)socket_path(c);
  (void)state_dir(c);
  if (!c.metrics.listen.empty()) (void)parse_metrics_listen(c.metrics.listen);
  for (const char* agent : {"", "codexctl"}) {
    (void)c.approval_policy_for(agent);
    (void)c.network_mode_for(agent);
    (void)c.network_limited_for(agent);
    (void)exec_supervision_name(c.exec_supervision_for(agent));
    (void)c.agent_budget_for(agent);
  }
  for (const auto& entry : c.agents) {
    (void)c.approval_policy_for(entry.first);
    (void)c.agent_budget_for(entry.first);
  }
  return 0;
}
