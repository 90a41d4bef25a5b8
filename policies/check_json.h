// The JSON that `codex execpolicy check` prints, byte for byte (serde_json formatting).
#pragma once

#include <string>

#include "policies/policy.h"

namespace codexd::policy {

// Compact or pretty (2-space indent) form, without the trailing newline.
std::string evaluation_to_json(const Evaluation& evaluation, bool pretty);
// serde_json string escaping: \" \\ \n \t \r \b \f, other controls as \u00xx, the rest raw.
std::string json_quote(const std::string& s);

}  // namespace codexd::policy
