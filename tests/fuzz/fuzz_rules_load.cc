// Rules files through the policy loader (builtins, examples), then a check.
#include <cstddef>
#include <cstdint>
#include <string>

#include "policies/check_json.h"
#include "policies/loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  codexd::policy::LoadOptions options;
  options.cwd = "/work";
  options.home = "/home/fuzz";
  auto r = codexd::policy::load_policy_text("fuzz.rules", std::string(reinterpret_cast<const char*>(data), size), options);
  if (r.ok()) {
    codexd::policy::MatchOptions m;
    m.resolve_host_executables = true;
    m.cwd = "/work";
    m.home = "/home/fuzz";
    (void)codexd::policy::evaluation_to_json(r.policy->check({"git", "push", "--force"}, m), true);
  }
  return 0;
}
