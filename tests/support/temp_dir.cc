#include "tests/support/temp_dir.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

namespace codexd::testing {
namespace {

std::string parent_of(TempLocation where) {
  switch (where) {
    case TempLocation::kTmp:
      return "/tmp";
    case TempLocation::kOutsideTmp:
      return "/var/tmp";
    case TempLocation::kSystemTemp:
      return std::filesystem::temp_directory_path().string();
  }
  return "/tmp";
}

}  // namespace

std::string make_temp_dir(const std::string& parent, const std::string& prefix, mode_t mode) {
  std::string pattern = parent + "/" + prefix + "-XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (::mkdtemp(buffer.data()) == nullptr) {
    throw std::runtime_error("mkdtemp " + pattern + ": " + std::strerror(errno));
  }
  std::string path(buffer.data());
  if (mode != 0) ::chmod(path.c_str(), mode);
  return path;
}

TempDir::TempDir(const std::string& prefix, TempLocation where, mode_t mode)
    : path_(make_temp_dir(parent_of(where), prefix, mode)), mode_(mode) {
  if (where == TempLocation::kSystemTemp) path_ = std::filesystem::canonical(path_).string();
}

TempDir::~TempDir() { remove(); }

TempDir::TempDir(TempDir&& other) noexcept
    : path_(std::exchange(other.path_, std::string())), mode_(other.mode_) {}

TempDir& TempDir::operator=(TempDir&& other) noexcept {
  if (this != &other) {
    remove();
    path_ = std::exchange(other.path_, std::string());
    mode_ = other.mode_;
  }
  return *this;
}

std::string TempDir::make_dir(const std::string& name) const {
  std::string path = sub(name);
  std::filesystem::create_directories(path);
  if (mode_ != 0) ::chmod(path.c_str(), mode_);
  return path;
}

std::string TempDir::make_file(const std::string& name, const std::string& content) const {
  std::string path = sub(name);
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

void TempDir::remove() {
  if (path_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
  path_.clear();
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace codexd::testing
