// The shipped default.rules, compiled into the binary. The daemon loads the file from
// <prefix>/share/codexd/ when it is there; when it is not (a binary copied elsewhere, a broken
// install), it falls back to this copy and says so, so that the defaults' forbidden and prompt
// rules (rm -rf /, git reset --hard, ...) never silently vanish.
#pragma once

#include <string_view>

namespace codexd::policy {

// The name the built-in copy has in messages and in GetStatus's file list.
inline constexpr std::string_view kBuiltinDefaultRulesName = "<built-in default.rules>";

std::string_view builtin_default_rules();

}  // namespace codexd::policy
