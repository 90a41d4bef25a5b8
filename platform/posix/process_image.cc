#include "platform/posix/process_image.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace codexd::posix {

std::string current_executable_path() {
#ifdef __linux__
  char buffer[4096];
  ssize_t n = ::readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  if (n <= 0) return {};
  return std::string(buffer, static_cast<size_t>(n));
#else
  return {};
#endif
}

std::string companion_program_path(const std::string& name) {
  const std::string self = current_executable_path();
  if (self.empty()) return name;
  const std::string dir = self.substr(0, self.rfind('/') + 1);
  const std::string installed = dir + CODEXD_LIBEXEC_RELATIVE + "/" + name;
  if (::access(installed.c_str(), X_OK) == 0) return installed;
  return dir + name;
}

Status check_executable(const std::string& path) {
  if (path.empty() || path[0] != '/') return InvalidArgument("the daemon's binary path is unknown");
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return InvalidArgument(path + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return InvalidArgument(path + " is not a regular file");
  if (::access(path.c_str(), X_OK) != 0) return InvalidArgument(path + " is not executable: " + std::strerror(errno));
  return Status::Ok();
}

namespace {

void close_descriptors_from(int first) {
#ifdef SYS_close_range
  if (::syscall(SYS_close_range, static_cast<unsigned>(first), ~0U, 0U) == 0) return;
#endif
  // close_range needs Linux 5.9: mark the rest close-on-exec, which the exec then applies.
  const long max_fd = ::sysconf(_SC_OPEN_MAX);
  for (long fd = first; fd < (max_fd > 0 ? max_fd : 65536); ++fd) ::fcntl(static_cast<int>(fd), F_SETFD, FD_CLOEXEC);
}

}  // namespace

Status replace_process_image(const std::string& executable, const std::vector<std::string>& argv, int keep_fd,
                             int keep_as, const std::vector<std::pair<std::string, std::string>>& env) {
  if (argv.empty()) return InvalidArgument("no argv to restart with");
  if (keep_fd != keep_as) {
    if (::dup2(keep_fd, keep_as) < 0) return Internal(std::string("dup2: ") + std::strerror(errno));  // clears FD_CLOEXEC
  } else if (::fcntl(keep_as, F_SETFD, 0) != 0) {
    return Internal(std::string("fcntl: ") + std::strerror(errno));
  }
  // Nothing else crosses: a session shim's link left open would keep that shim from ever
  // seeing this daemon go, and so from accepting the next one.
  close_descriptors_from(keep_as + 1);
  for (const auto& [name, value] : env) ::setenv(name.c_str(), value.c_str(), 1);
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  ::execv(executable.c_str(), args.data());
  return Internal("exec " + executable + ": " + std::strerror(errno));
}

bool is_listening_unix_socket(int fd) {
  int value = 0;
  socklen_t length = sizeof value;
  if (::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &value, &length) != 0 || value == 0) return false;
  sockaddr_storage address{};
  socklen_t address_length = sizeof address;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &address_length) != 0) return false;
  int type = 0;
  length = sizeof type;
  if (::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &length) != 0) return false;
  return address.ss_family == AF_UNIX && type == SOCK_STREAM;
}

}  // namespace codexd::posix
