// codexctl entry point. (Temporary skeleton: only `policy check` is wired; the daemon
// subcommands land with the core issue.)
#include <cstdio>
#include <string>
#include <variant>
#include <vector>

#include "client/policy_check/policy_check.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() >= 2 && args[0] == "policy" && args[1] == "check") {
    auto parsed = codexd::client::parse_policy_check_args({args.begin() + 2, args.end()});
    if (auto* code = std::get_if<int>(&parsed)) return *code;
    const auto& check = std::get<codexd::client::PolicyCheckArgs>(parsed);
    if (!check.rules.empty()) return codexd::client::run_offline_policy_check(check);
    std::fprintf(stderr, "codexctl: policy check without --rules needs the daemon (not wired yet)\n");
    return 1;
  }
  std::fprintf(stderr, "usage: codexctl policy check --rules FILE -- CMD...\n");
  return 2;
}
