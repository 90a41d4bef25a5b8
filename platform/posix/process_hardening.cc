#include "platform/posix/process_hardening.h"

#include <stdlib.h>
#include <sys/resource.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
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
namespace {

#ifdef __linux__
// The environment block the kernel set up at exec ([env_start, env_end), fields 50 and 51 of
// /proc/self/stat). /proc/<pid>/environ shows this block, not `environ`: unsetenv alone leaves
// the removed variables visible there.
bool initial_environment_block(uintptr_t* start, uintptr_t* end) {
  FILE* f = std::fopen("/proc/self/stat", "re");
  if (f == nullptr) return false;
  char buf[2048];
  size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  char* p = std::strrchr(buf, ')');  // the command name may contain spaces and parentheses
  if (p == nullptr) return false;
  // After ") " comes field 3; env_start is field 50.
  int field = 2;
  unsigned long long values[2] = {0, 0};
  for (char* token = std::strtok(p + 1, " "); token != nullptr; token = std::strtok(nullptr, " ")) {
    ++field;
    if (field == 50 || field == 51) values[field - 50] = std::strtoull(token, nullptr, 10);
    if (field == 51) break;
  }
  if (field != 51 || values[0] == 0 || values[1] <= values[0]) return false;
  *start = static_cast<uintptr_t>(values[0]);
  *end = static_cast<uintptr_t>(values[1]);
  return true;
}
#endif

}  // namespace

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
  std::vector<char*> entries;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string entry(*e);
    std::string name = entry.substr(0, entry.find('='));
#ifdef __APPLE__
    bool loader = name.rfind("DYLD_", 0) == 0 || name.rfind("MallocStackLogging", 0) == 0 || name.rfind("MallocLogFile", 0) == 0;
#else
    bool loader = name.rfind("LD_", 0) == 0;
#endif
    if (loader) {
      names.push_back(name);
      entries.push_back(*e);
    }
  }
  for (const auto& name : names) ::unsetenv(name.c_str());
#ifdef __linux__
  // Blank the removed entries in the exec-time block too (they are no longer referenced).
  uintptr_t start = 0, end = 0;
  if (!entries.empty() && initial_environment_block(&start, &end)) {
    for (char* entry : entries) {
      const size_t len = std::strlen(entry);
      const auto at = reinterpret_cast<uintptr_t>(entry);
      if (at >= start && at + len <= end) std::memset(entry, 0, len);
    }
  }
#endif
  return {};
}

}  // namespace codexd::posix
