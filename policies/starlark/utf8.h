// Code-point views of Starlark strings (UTF-8 byte strings whose len() and indexing count
// code points). The byte-level helpers live in base/utf8.h.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "base/utf8.h"

namespace codexd::starlark {

std::vector<uint32_t> code_points(std::string_view s);
size_t code_point_count(std::string_view s);

}  // namespace codexd::starlark
