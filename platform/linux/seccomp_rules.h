// The seccomp policy as data: which system calls the helper refuses, under which argument
// conditions, with which errno. The filter builder (seccomp_filter.cc) and the printable
// plan (describe_seccomp_rules) both read this one table.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "platform/linux/helper_config.h"

namespace codexd::sandbox::linux_backend {

enum class ArgOp { kEqual, kNotEqual, kMaskedEqual };

struct ArgCondition {
  unsigned arg = 0;    // 0-based syscall argument index
  ArgOp op = ArgOp::kEqual;
  uint64_t mask = 0;   // kMaskedEqual only
  uint64_t value = 0;
};

struct SeccompRule {
  const char* syscall = "";
  int number = -1;                       // x86_64 number (__NR_*)
  int errno_value = 0;                   // returned instead of running the call
  std::vector<ArgCondition> conditions;  // AND-ed, at most one per argument
  std::string label;                     // one line of the printable plan; rules may share it
};

std::vector<SeccompRule> seccomp_rules(const HelperConfig& config);

// One line per distinct label, plus the fixed facts (default allow, foreign ABIs killed).
std::vector<std::string> describe_seccomp_rules(const HelperConfig& config);

}  // namespace codexd::sandbox::linux_backend
