#include "policies/amend.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "policies/check_json.h"
#include "policies/requirement.h"
#include "policies/rule_builtins.h"

namespace codexd::policy {
namespace {
// Closes the descriptor (and so releases its flock) on every return path.
struct FdCloser {
  int fd;
  ~FdCloser() { ::close(fd); }
  int get() const { return fd; }
};
}  // namespace

std::string allow_rule_line(const std::vector<std::string>& tokens) {
  std::string line = "prefix_rule(pattern=[";
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (i) line += ", ";
    line += json_quote(tokens[i]);  // serde_json escaping is valid Starlark for these strings
  }
  return line + "], decision=\"allow\")";
}

namespace {

// Appends `line` + "\n" under an exclusive flock unless the file already holds that line.
Status append_rule_line(const std::string& path, const std::string& line) {
  size_t slash = path.rfind('/');
  if (slash != std::string::npos && slash > 0) {
    std::string parent = path.substr(0, slash);
    if (::mkdir(parent.c_str(), 0755) != 0 && errno != EEXIST) return ErrnoStatus("creating " + parent, errno);
  }
  int raw = ::open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (raw < 0) return ErrnoStatus("opening " + path, errno);
  FdCloser fd{raw};
  while (::flock(fd.get(), LOCK_EX) != 0) {
    if (errno != EINTR) return ErrnoStatus("locking " + path, errno);
  }
  // Read the current contents under the lock.
  std::string contents;
  if (::lseek(fd.get(), 0, SEEK_SET) < 0) return ErrnoStatus("seeking " + path, errno);
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("reading " + path, errno);
    }
    if (n == 0) break;
    contents.append(buf, static_cast<size_t>(n));
  }
  size_t pos = 0;
  while (pos <= contents.size()) {
    size_t end = contents.find('\n', pos);
    if (end == std::string::npos) end = contents.size();
    if (contents.compare(pos, end - pos, line) == 0 && end - pos == line.size()) return Status::Ok();
    pos = end + 1;
  }
  std::string out;
  if (!contents.empty() && contents.back() != '\n') out += '\n';
  out += line + "\n";
  size_t written = 0;
  while (written < out.size()) {
    ssize_t n = ::write(fd.get(), out.data() + written, out.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("writing " + path, errno);
    }
    written += static_cast<size_t>(n);
  }
  return Status::Ok();  // the lock is released when fd closes
}

}  // namespace

Status append_allow_prefix_rule(const std::string& path, const std::vector<std::string>& tokens) {
  if (tokens.empty()) return InvalidArgument("prefix rule requires at least one token");
  if (is_banned_prefix(tokens)) return InvalidArgument("refusing to persist a rule for a banned prefix: " + tokens[0]);
  return append_rule_line(path, allow_rule_line(tokens));
}

std::string allow_network_rule_line(const std::string& host, const std::string& protocol) {
  return "network_rule(host=" + json_quote(host) + ", protocol=" + json_quote(protocol) + ", decision=\"allow\")";
}

Status append_allow_network_rule(const std::string& path, const std::string& host, const std::string& protocol) {
  std::string normalized, error;
  if (!normalize_network_host(host, &normalized, &error) || normalized != host) {
    return InvalidArgument("refusing to persist a network_rule for host \"" + host + "\"" + (error.empty() ? "" : ": " + error));
  }
  if (protocol != "http" && protocol != "https" && protocol != "socks5_tcp" && protocol != "socks5_udp") {
    return InvalidArgument("refusing to persist a network_rule with protocol \"" + protocol + "\"");
  }
  return append_rule_line(path, allow_network_rule_line(host, protocol));
}

}  // namespace codexd::policy
