// The exec policy in force, and its reload: all rules files load, or the old policy stays.
// Thread-safe: reloads run off the core thread (Admin.ReloadPolicy, SIGHUP) and swap a
// pointer; evaluation takes a snapshot (shared_ptr<const Policy>) and never blocks a reload.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "policies/policy.h"

namespace codexd::orchestrator {

struct PolicyFileState {
  std::string path;
  bool loaded = false;
  std::string error;  // file:line:col: message
};

struct PolicyState {
  std::shared_ptr<const policy::Policy> policy;  // never null (empty policy before the first load)
  std::vector<PolicyFileState> files;
  size_t rule_count = 0;
  std::chrono::system_clock::time_point loaded_at;
  std::string last_error;  // the last reload failed; the policy above is the previous one
  std::chrono::system_clock::time_point last_attempt;
};

struct ReloadResult {
  bool ok = false;
  std::vector<std::string> errors;
};

class PolicyStore {
 public:
  // `default_rules`: a shipped file loaded first (may be empty); `directories`: *.rules, in order.
  // `root_only` (system mode): a rules file, or a rules directory, that anyone but root could
  // change is an error like a syntax error (the file is not even parsed).
  PolicyStore(std::string default_rules, std::vector<std::string> directories, bool root_only = false);

  ReloadResult reload();
  std::shared_ptr<const policy::Policy> current() const;
  PolicyState state() const;
  // Files that would be loaded now, in order.
  std::vector<std::string> rules_files(std::vector<std::string>* errors) const;

 private:
  ReloadResult reload_files();
  std::string default_rules_;
  std::vector<std::string> directories_;
  bool root_only_ = false;
  mutable std::mutex mutex_;
  std::mutex reload_mutex_;  // one reload at a time
  PolicyState state_;
};

}  // namespace codexd::orchestrator
