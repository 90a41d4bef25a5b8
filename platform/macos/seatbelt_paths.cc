#include "platform/macos/seatbelt_paths.h"

#include <algorithm>

#include "platform/sandbox/path_utils.h"

namespace codexd::sandbox::macos_backend {

Result<std::string> resolve_for_seatbelt(const std::string& path) {
  CODEXD_RETURN_IF_ERROR(validate_absolute_path(path, "sandbox path"));
  std::string lexical = normalize_lexically(path);
  CODEXD_ASSIGN_OR_RETURN(std::optional<std::string> whole, canonicalize_existing(lexical));
  if (whole) return *whole;
  ExistingPrefix prefix = split_existing_prefix(lexical);
  CODEXD_ASSIGN_OR_RETURN(std::optional<std::string> head, canonicalize_existing(prefix.existing));
  if (!head) return NotFound("cannot resolve " + prefix.existing + " (it vanished while resolving " + lexical + ")");
  std::string tail = prefix.existing == "/" ? lexical : lexical.substr(prefix.existing.size());
  return (*head == "/" ? std::string() : *head) + tail;
}

Result<std::vector<std::string>> exclusion_forms(const std::string& path, const PathResolver& resolve) {
  CODEXD_RETURN_IF_ERROR(validate_absolute_path(path, "excluded path"));
  std::string lexical = normalize_lexically(path);
  CODEXD_ASSIGN_OR_RETURN(std::string resolved, resolve(lexical));
  std::vector<std::string> forms = {resolved};
  if (lexical != "/") {
    CODEXD_ASSIGN_OR_RETURN(std::string parent, resolve(parent_path(lexical)));
    std::string link = join_path(parent, lexical.substr(lexical.rfind('/') + 1));
    if (std::find(forms.begin(), forms.end(), link) == forms.end()) forms.push_back(link);
  }
  return forms;
}

}  // namespace codexd::sandbox::macos_backend
