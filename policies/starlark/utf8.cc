#include "policies/starlark/utf8.h"

namespace codexd::starlark {

std::vector<uint32_t> code_points(std::string_view s) {
  std::vector<uint32_t> out;
  size_t i = 0;
  while (i < s.size()) out.push_back(next_code_point(s, i));
  return out;
}

size_t code_point_count(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) != 0x80) ++n;
  }
  return n;
}

}  // namespace codexd::starlark
