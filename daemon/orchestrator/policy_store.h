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
  size_t rule_count = 0;  // prefix rules from this file in the policy in force
};

struct PolicyState {
  std::shared_ptr<const policy::Policy> policy;  // never null (empty policy before the first load)
  std::vector<PolicyFileState> files;
  size_t rule_count = 0;
  std::chrono::system_clock::time_point loaded_at;
  std::string last_error;  // the last reload failed; the policy above is the previous one
  std::chrono::system_clock::time_point last_attempt;
  // What an operator must hear about the policy in force (start-up log, GetStatus, codexctl
  // status): the built-in defaults stand in for a missing default.rules; no rules at all.
  std::vector<std::string> warnings;
};

struct ReloadResult {
  bool ok = false;
  std::vector<std::string> errors;
};

// One log for every reload, whoever asked (`trigger`: "SIGHUP", "Admin.ReloadPolicy by uid
// 1000"): info when it took, an error per failure (the previous policy stays in force).
void log_reload(const ReloadResult& result, const PolicyState& state, const std::string& trigger);

class PolicyStore {
 public:
  // `default_rules`: the shipped file, loaded first ("" when the defaults are turned off; a path
  // that does not exist loads the copy built into codexd, with a warning); `directories`:
  // *.rules, in order.
  // `root_only` (system mode): a rules file, or a rules directory, that anyone but root could
  // change is an error like a syntax error (the file is not even parsed).
  PolicyStore(std::string default_rules, std::vector<std::string> directories, bool root_only = false);

  ReloadResult reload();
  std::shared_ptr<const policy::Policy> current() const;
  PolicyState state() const;
  // Files that would be loaded now, in order (the built-in defaults by their name).
  std::vector<std::string> rules_files(std::vector<std::string>* errors) const;
  // True when the default rules come from the copy built into codexd (the file is missing).
  bool uses_builtin_defaults() const;

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
