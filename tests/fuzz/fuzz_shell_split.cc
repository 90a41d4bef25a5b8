// The bash -lc splitter, safety heuristics and approval key on arbitrary scripts.
#include <cstddef>
#include <cstdint>
#include <string>

#include "policies/approval_key.h"
#include "policies/command_safety.h"
#include "policies/shell_split.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string script(reinterpret_cast<const char*>(data), size);
  auto plain = codexd::policy::parse_plain_commands(script);
  auto tolerant = codexd::policy::parse_commands_for_exec_policy(script);
  // Every plain script is also accepted by the tolerant variant, with the same commands.
  if (plain && (!tolerant || *tolerant != *plain)) __builtin_trap();
  std::vector<std::string> argv = {"bash", "-lc", script};
  (void)codexd::policy::is_known_safe_command(argv);
  (void)codexd::policy::command_might_be_dangerous(argv);
  (void)codexd::policy::canonicalize_command_for_approval(argv);
  return 0;
}
