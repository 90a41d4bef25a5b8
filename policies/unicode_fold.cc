#include "policies/unicode_fold.h"

#include <unicode/normalizer2.h>
#include <unicode/unistr.h>

namespace codexd::policy {

std::string canonical_caseless(const std::string& utf8) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* nfd = icu::Normalizer2::getNFDInstance(status);
  if (U_FAILURE(status)) return utf8;
  icu::UnicodeString s = icu::UnicodeString::fromUTF8(utf8);
  icu::UnicodeString decomposed = nfd->normalize(s, status);
  if (U_FAILURE(status)) return utf8;
  decomposed.foldCase(U_FOLD_CASE_DEFAULT);
  icu::UnicodeString result = nfd->normalize(decomposed, status);
  if (U_FAILURE(status)) return utf8;
  std::string out;
  result.toUTF8String(out);
  return out;
}

}  // namespace codexd::policy
