// The seccomp policy as data: which system calls the helper refuses, under which argument
// conditions, with which errno. The filter builder (seccomp_filter.cc) and the printable
// plan (describe_seccomp_rules) both read this one table; calls refused whatever their
// arguments come from RefuseGroup data whose printed line is generated from the names.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "platform/linux/helper_config.h"

namespace codexd::sandbox::linux_backend {

enum class ArgOp { kEqual, kNotEqual, kMaskedEqual, kGreater };

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
  bool notify = false;                   // the filter's listener answers instead (errno_value unused)
};

// A system call by name and x86_64 number.
struct Syscall {
  const char* name = "";
  int number = -1;
};

// Calls refused outright (whatever their arguments) with one errno for one reason. Its line
// in the printable plan is made from the names (refuse_group_label), so the text cannot
// drift from what is filtered.
struct RefuseGroup {
  std::string_view why;           // in parentheses after the names; empty: they say it all
  std::vector<Syscall> syscalls;
  int errno_value = 0;            // 0: EPERM
  std::string_view scope;         // e.g. "Landlock backend": which plans carry the group
};

// "refused: a, b, c (why)", "refused (scope): a, b" or, with another errno than EPERM,
// "a: ENOSYS (why)".
std::string refuse_group_label(const RefuseGroup& group);

// Whose filter: the command's, or the metadata keeper's (helper/metadata_keeper.h). The
// keeper's is the command's without the chmod and chown rules (it performs those calls) and
// with execve and execveat refused (it runs nothing).
enum class FilterRole { kCommand, kKeeper };

std::vector<SeccompRule> seccomp_rules(const HelperConfig& config, FilterRole role = FilterRole::kCommand);

// One line per distinct label, plus the fixed facts (default allow, foreign ABIs killed).
std::vector<std::string> describe_seccomp_rules(const HelperConfig& config);

}  // namespace codexd::sandbox::linux_backend
