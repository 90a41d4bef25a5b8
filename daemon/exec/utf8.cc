#include "daemon/exec/utf8.h"

namespace codexd::exec {

size_t utf8_sequence_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return 2;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  return 1;
}

namespace {

// Valid range of the second byte for a given lead (Unicode table 3-7); later bytes are 80..BF.
bool second_byte_ok(unsigned char lead, unsigned char b) {
  if (lead == 0xE0) return b >= 0xA0 && b <= 0xBF;
  if (lead == 0xED) return b >= 0x80 && b <= 0x9F;
  if (lead == 0xF0) return b >= 0x90 && b <= 0xBF;
  if (lead == 0xF4) return b >= 0x80 && b <= 0x8F;
  return b >= 0x80 && b <= 0xBF;
}

}  // namespace

std::string utf8_lossy(std::string_view bytes) {
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";
  std::string out;
  out.reserve(bytes.size());
  size_t i = 0;
  while (i < bytes.size()) {
    auto lead = static_cast<unsigned char>(bytes[i]);
    if (lead < 0x80) {
      out.push_back(static_cast<char>(lead));
      ++i;
      continue;
    }
    size_t need = utf8_sequence_length(lead);
    if (need == 1) {  // stray continuation byte or invalid lead
      out.append(kReplacement);
      ++i;
      continue;
    }
    // Consume the longest valid prefix; a broken sequence is replaced once (maximal subpart).
    size_t j = i + 1;
    bool complete = true;
    for (size_t k = 1; k < need; ++k, ++j) {
      if (j >= bytes.size()) {
        complete = false;
        break;
      }
      auto b = static_cast<unsigned char>(bytes[j]);
      bool ok = k == 1 ? second_byte_ok(lead, b) : (b >= 0x80 && b <= 0xBF);
      if (!ok) {
        complete = false;
        break;
      }
    }
    if (complete) {
      out.append(bytes.substr(i, need));
    } else {
      out.append(kReplacement);
    }
    i = j;
  }
  return out;
}

}  // namespace codexd::exec
