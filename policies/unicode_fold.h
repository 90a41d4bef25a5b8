// Unicode canonical caseless matching (Unicode §3.13 D145): NFD(casefold(NFD(s))), with full
// case folding (ß -> ss, ﬁ -> fi) and no Turkic special case. Used by canonical_matching rules.
#pragma once

#include <string>

namespace codexd::policy {

std::string canonical_caseless(const std::string& utf8);

}  // namespace codexd::policy
