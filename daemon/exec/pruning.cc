#include "daemon/exec/pruning.h"

#include <algorithm>

namespace codexd::exec {

std::optional<int> choose_session_to_prune(std::vector<PruneCandidate> candidates, size_t protected_count) {
  // Newest first; ties broken by id so the choice is deterministic.
  std::stable_sort(candidates.begin(), candidates.end(), [](const PruneCandidate& a, const PruneCandidate& b) {
    return a.last_used != b.last_used ? a.last_used > b.last_used : a.id > b.id;
  });
  if (candidates.size() <= protected_count) return std::nullopt;
  const auto unprotected_begin = candidates.begin() + static_cast<std::ptrdiff_t>(protected_count);
  // Walk from the oldest end.
  for (auto it = candidates.rbegin(); it != std::make_reverse_iterator(unprotected_begin); ++it) {
    if (it->exited) return it->id;
  }
  return candidates.back().id;
}

}  // namespace codexd::exec
