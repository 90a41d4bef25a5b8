#include "platform/linux/cgroup_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>

#include "base/unique_fd.h"

namespace codexd::limits::cgroups {

std::optional<std::string> read_small_file(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return std::nullopt;
  std::string out;
  char buffer[4096];
  for (;;) {
    ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) return out;
    out.append(buffer, static_cast<size_t>(n));
  }
}

Status write_small_file(const std::string& path, std::string_view value) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd) return ErrnoStatus("open " + path, errno);
  ssize_t n = ::write(fd.get(), value.data(), value.size());
  if (n != static_cast<ssize_t>(value.size())) return ErrnoStatus("write " + std::string(value) + " to " + path, errno);
  return Status::Ok();
}

bool path_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

namespace {

std::optional<uint64_t> parse_number(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

std::optional<uint64_t> keyed_value(std::string_view text, std::string_view key) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    if (line.size() > key.size() && line.substr(0, key.size()) == key && line[key.size()] == ' ') {
      return parse_number(line.substr(key.size() + 1));
    }
    pos = end + 1;
  }
  return std::nullopt;
}

std::optional<uint64_t> read_number(const std::string& path) {
  auto text = read_small_file(path);
  if (!text) return std::nullopt;
  return parse_number(*text);
}

std::vector<int> read_pids(const std::string& procs_path) {
  std::vector<int> pids;
  auto text = read_small_file(procs_path);
  if (!text) return pids;
  size_t pos = 0;
  while (pos < text->size()) {
    size_t end = text->find('\n', pos);
    if (end == std::string::npos) end = text->size();
    if (auto v = parse_number(std::string_view(*text).substr(pos, end - pos)); v && *v > 1) pids.push_back(static_cast<int>(*v));
    pos = end + 1;
  }
  return pids;
}

}  // namespace codexd::limits::cgroups
