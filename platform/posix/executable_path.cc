#include "platform/posix/executable_path.h"

#include <sys/stat.h>
#include <unistd.h>

namespace codexd::posix {
namespace {

// `dir` + "/" + `name`, appended piece by piece (GCC 12's -Wrestrict misfires on the
// operator+ chain here).
std::string in_dir(const std::string& dir, const std::string& name) {
  std::string path;
  path.reserve(dir.size() + 1 + name.size());
  path.append(dir).append(1, '/').append(name);
  return path;
}

}  // namespace

Result<std::string> resolve_executable(const std::string& program, const std::vector<std::string>& env,
                                       const std::string& cwd) {
  if (program.empty()) return InvalidArgument("empty program name");
  if (program.find('/') != std::string::npos) {
    return program[0] == '/' ? program : in_dir(cwd, program);
  }
  std::string path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  for (const auto& entry : env) {
    if (entry.rfind("PATH=", 0) == 0) {
      path = entry.substr(5);
      break;
    }
  }
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    // POSIX: an empty entry means the cwd.
    std::string dir = end > start ? path.substr(start, end - start) : std::string(".");
    start = end + 1;
    if (dir[0] != '/') dir = in_dir(cwd, dir);  // relative to the child's cwd, not ours
    std::string candidate = in_dir(dir, program);
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return NotFound("command not found: " + program);
}

}  // namespace codexd::posix
