// Where codexd finds rules files, and listing them.
//
// Order (lowest precedence first; later files are evaluated later, so their rules come later
// in matchedRules and their host_executable entries win):
//   1. <install prefix>/share/codexd/default.rules  (the shipped defaults, if installed)
//   2. /etc/codexd/rules/*.rules                     (system administrator)
//   3. $XDG_CONFIG_HOME/codexd/rules/*.rules, or ~/.config/codexd/rules/*.rules (the user;
//      amendments are appended to default.rules there)
// Within a directory: regular files named *.rules, sorted by name (byte order).
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace codexd::policy {

// Regular files ending in ".rules" directly in `dir`, sorted. A missing directory is empty.
Result<std::vector<std::string>> list_rules_files(const std::string& dir);

// The directories above, in order. `home` and `xdg_config_home` may be empty.
std::vector<std::string> default_rules_directories(const std::string& home, const std::string& xdg_config_home);

// The user's amendment file: <user rules dir>/default.rules.
std::string user_amendment_file(const std::string& home, const std::string& xdg_config_home);

// Every rules file of the directories, in order (directories in order, files sorted).
Result<std::vector<std::string>> collect_rules_files(const std::vector<std::string>& directories);

}  // namespace codexd::policy
