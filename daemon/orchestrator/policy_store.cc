#include "daemon/orchestrator/policy_store.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <unordered_map>
#include <utility>

#include "daemon/config/config.h"
#include "policies/builtin_rules.h"
#include "policies/loader.h"
#include "policies/rules_dirs.h"

namespace codexd::orchestrator {

PolicyStore::PolicyStore(std::string default_rules, std::vector<std::string> directories, bool root_only)
    : default_rules_(std::move(default_rules)), directories_(std::move(directories)), root_only_(root_only) {
  auto empty = policy::load_policy_files({});
  state_.policy = empty.policy;
}

bool PolicyStore::uses_builtin_defaults() const {
  struct stat st {};
  return !default_rules_.empty() && ::stat(default_rules_.c_str(), &st) != 0 && errno == ENOENT;
}

std::vector<std::string> PolicyStore::rules_files(std::vector<std::string>* errors) const {
  std::vector<std::string> files;
  if (!default_rules_.empty()) {
    files.push_back(uses_builtin_defaults() ? std::string(policy::kBuiltinDefaultRulesName) : default_rules_);
  }
  for (const auto& dir : directories_) {
    auto listed = policy::list_rules_files(dir);
    if (!listed.ok()) {
      if (errors) errors->push_back(dir + ": " + listed.status().message());
      continue;
    }
    files.insert(files.end(), listed->begin(), listed->end());
  }
  return files;
}

namespace {

// System mode: the files (and directories) only root can change; the others become errors.
std::vector<std::string> root_only_files(const std::vector<std::string>& directories, std::vector<PolicyFileState>& file_states,
                                         std::vector<std::string>& list_errors, std::vector<std::string>& errors) {
  for (const auto& dir : directories) {
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0) continue;  // a missing directory holds no rules
    Status trusted = config::check_root_only_writable(dir);
    if (!trusted.ok()) list_errors.push_back(trusted.message());
  }
  std::vector<std::string> trusted_files;
  for (auto& fs : file_states) {
    Status trusted = config::check_root_only_writable(fs.path);
    if (trusted.ok()) {
      trusted_files.push_back(fs.path);
    } else {
      fs.loaded = false;
      fs.error = trusted.message();
      errors.push_back(trusted.message());
    }
  }
  return trusted_files;
}

std::string comma_list(const std::vector<std::string>& items) {
  std::string text;
  for (const auto& item : items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

// Each rule's source is "file:line:col" (the file may itself contain ':'): its file is all but
// the last two fields.
void count_rules_per_file(const policy::Policy& policy, std::vector<PolicyFileState>& files) {
  std::unordered_map<std::string, size_t> counts;
  for (const policy::PrefixRule& rule : policy.rules()) {
    const size_t col = rule.source.rfind(':');
    const size_t line = col == std::string::npos || col == 0 ? std::string::npos : rule.source.rfind(':', col - 1);
    if (line != std::string::npos) ++counts[rule.source.substr(0, line)];
  }
  for (PolicyFileState& file : files) {
    auto it = counts.find(file.path);
    file.rule_count = it == counts.end() ? 0 : it->second;
  }
}

std::vector<std::string> warnings_for(const std::string& default_rules, bool builtin, size_t rule_count,
                                      const std::vector<std::string>& directories) {
  std::vector<std::string> warnings;
  if (builtin) {
    warnings.push_back("the default rules file " + default_rules +
                       " is missing (a broken install or a binary moved out of its prefix); the copy built into "
                       "codexd is in force instead");
  }
  if (rule_count == 0) {
    warnings.push_back("no exec-policy rules are loaded: commands are judged by the known-safe/dangerous heuristics "
                       "alone, so e.g. `git reset --hard` runs without asking; add *.rules files to " +
                       (directories.empty() ? std::string("a rules directory (policy.rules_dirs)") : comma_list(directories)) +
                       (default_rules.empty() ? " or set policy.include_default_rules = true" : ""));
  }
  return warnings;
}

}  // namespace

void log_reload(const ReloadResult& result, const PolicyState& state, const std::string& trigger) {
  if (result.ok) {
    spdlog::info("policy reloaded ({}): {} rules", trigger, state.rule_count);
    return;
  }
  for (const auto& e : result.errors) spdlog::error("policy reload ({}) failed, keeping the previous policy: {}", trigger, e);
}

ReloadResult PolicyStore::reload() {
  std::lock_guard reload_lock(reload_mutex_);
  const auto started = std::chrono::steady_clock::now();
  ReloadResult result = reload_files();
  const auto elapsed = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started);
  spdlog::info("policy: reload {} in {:.1f} ms ({} rules)", result.ok ? "done" : "failed", elapsed.count(),
               state().rule_count);
  // Every reload (start-up, SIGHUP, Admin.ReloadPolicy) repeats them: an operator reading the
  // log after any of them sees what is wrong with the policy in force.
  if (result.ok) {
    for (const auto& warning : state().warnings) spdlog::warn("policy: {}", warning);
  }
  return result;
}

ReloadResult PolicyStore::reload_files() {
  ReloadResult result;
  std::vector<std::string> list_errors;
  std::vector<std::string> files = rules_files(&list_errors);
  policy::LoadOptions options;
  options.cwd = std::string(1, '/');  // not = "/": GCC 12 -Wrestrict false positive under ASan
  std::vector<PolicyFileState> file_states;
  for (const auto& f : files) file_states.push_back({f, true, {}});
  const bool builtin = !files.empty() && files.front() == policy::kBuiltinDefaultRulesName;
  if (root_only_) {
    // The built-in copy is as trusted as the binary; the files on disk are checked.
    std::vector<PolicyFileState> on_disk(file_states.begin() + (builtin ? 1 : 0), file_states.end());
    files = root_only_files(directories_, on_disk, list_errors, result.errors);
    if (builtin) {
      files.insert(files.begin(), std::string(policy::kBuiltinDefaultRulesName));
      on_disk.insert(on_disk.begin(), file_states.front());
    }
    file_states = std::move(on_disk);
  }
  std::vector<policy::PolicySource> sources;
  for (const auto& f : files) {
    if (builtin && f == policy::kBuiltinDefaultRulesName) {
      sources.push_back({f, std::string(policy::builtin_default_rules())});
    } else {
      sources.push_back({f, std::nullopt});
    }
  }
  auto loaded = policy::load_policy_sources(sources, options);

  for (const auto& e : loaded.errors) {
    result.errors.push_back(e.located);
    for (auto& fs : file_states) {
      if (fs.path == e.path) {
        fs.loaded = false;
        fs.error = e.located;
      }
    }
  }
  result.errors.insert(result.errors.end(), list_errors.begin(), list_errors.end());

  std::shared_ptr<const policy::Policy> previous;  // freed after the lock is released, not under it
  std::lock_guard lock(mutex_);
  state_.last_attempt = std::chrono::system_clock::now();
  if (!result.errors.empty() || !loaded.policy) {
    std::string joined;
    for (const auto& e : result.errors) joined += (joined.empty() ? "" : "\n") + e;
    state_.last_error = joined;
    // Report which files failed, but keep the policy that was in force.
    state_.files = file_states;
    return result;
  }
  previous = std::exchange(state_.policy, loaded.policy);
  count_rules_per_file(*loaded.policy, file_states);
  state_.files = file_states;
  state_.rule_count = loaded.policy->rule_count();
  state_.warnings = warnings_for(default_rules_, builtin, state_.rule_count, directories_);
  state_.loaded_at = state_.last_attempt;
  state_.last_error.clear();
  result.ok = true;
  return result;
}

std::shared_ptr<const policy::Policy> PolicyStore::current() const {
  std::lock_guard lock(mutex_);
  return state_.policy;
}

PolicyState PolicyStore::state() const {
  std::lock_guard lock(mutex_);
  return state_;
}

}  // namespace codexd::orchestrator
