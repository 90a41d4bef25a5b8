// The daemon's compiled seccomp programs, one sealed memfd per set of rules: compiled by
// libseccomp the first time a plan needs that set, then shared by every launch with it (the
// helper reads it with pread and loads it; seccomp_program.h). What decides the rules is
// SeccompRulesKey: the HelperConfig fields seccomp_rules() reads, nothing else.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "base/status.h"
#include "base/unique_fd.h"
#include "platform/linux/helper_config.h"

namespace codexd::sandbox::linux_backend {

struct SeccompRulesKey {
  HelperMode mode = HelperMode::kBwrap;
  NetworkMode network = NetworkMode::kOff;
  bool block_unix_sockets = false;
  bool supervise_exec = false;
  bool metadata_keeper = false;

  static SeccompRulesKey of(const HelperConfig& config);
  // A config with exactly these fields set (the rest default): what the programs are compiled from.
  HelperConfig config() const;
  auto tied() const { return std::tie(mode, network, block_unix_sockets, supervise_exec, metadata_keeper); }
  bool operator<(const SeccompRulesKey& other) const { return tied() < other.tied(); }
  bool operator==(const SeccompRulesKey& other) const { return tied() == other.tied(); }
};

// A sealed memfd (close-on-exec) holding the command's program and, with config.metadata_keeper,
// the keeper's, in the format of encode_seccomp_programs.
Result<UniqueFd> make_seccomp_program_fd(const HelperConfig& config);

// Thread-safe. A program, once made, lives as long as the cache; a failed compilation is not
// remembered (the next plan tries again and reports the same error).
class SeccompProgramCache {
 public:
  Result<std::shared_ptr<const UniqueFd>> get(const HelperConfig& config) const;
  size_t size() const;

 private:
  mutable std::mutex mutex_;
  mutable std::map<SeccompRulesKey, std::shared_ptr<const UniqueFd>> programs_;
};

}  // namespace codexd::sandbox::linux_backend
