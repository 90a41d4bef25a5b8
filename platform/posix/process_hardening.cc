#include "platform/posix/process_hardening.h"

#include <stdlib.h>
#include <sys/resource.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#ifdef __linux__
#include <sys/prctl.h>
#endif
#ifdef __APPLE__
#include <sys/ptrace.h>
#endif

extern char** environ;

namespace codexd::posix {

HardeningFailure harden_current_process() {
#ifdef __linux__
  if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) return {5, std::string("prctl(PR_SET_DUMPABLE): ") + std::strerror(errno)};
#endif
#ifdef __APPLE__
  if (::ptrace(PT_DENY_ATTACH, 0, nullptr, 0) != 0) return {6, std::string("ptrace(PT_DENY_ATTACH): ") + std::strerror(errno)};
#endif
  struct rlimit none {0, 0};
  if (::setrlimit(RLIMIT_CORE, &none) != 0) return {7, std::string("setrlimit(RLIMIT_CORE): ") + std::strerror(errno)};

  // Collect first: unsetenv while walking environ would skip entries.
  std::vector<std::string> names;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string entry(*e);
    std::string name = entry.substr(0, entry.find('='));
#ifdef __APPLE__
    bool loader = name.rfind("DYLD_", 0) == 0 || name.rfind("MallocStackLogging", 0) == 0 || name.rfind("MallocLogFile", 0) == 0;
#else
    bool loader = name.rfind("LD_", 0) == 0;
#endif
    if (loader) names.push_back(name);
  }
  for (const auto& name : names) ::unsetenv(name.c_str());
  return {};
}

}  // namespace codexd::posix
