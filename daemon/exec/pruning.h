// Which session to drop when the store is full (Codex's prune rule, process_manager.rs).
#pragma once

#include <chrono>
#include <optional>
#include <vector>

namespace codexd::exec {

struct PruneCandidate {
  int id;
  std::chrono::steady_clock::time_point last_used;
  bool exited;
};

// Protects the `protected_count` most recently used entries; among the rest picks the least
// recently used exited one, else the least recently used one. nullopt when all are protected.
std::optional<int> choose_session_to_prune(std::vector<PruneCandidate> candidates, size_t protected_count);

}  // namespace codexd::exec
