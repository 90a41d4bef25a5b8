// A temporary directory removed with everything in it at the end of a test.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

namespace codexd::sandbox::macos_backend::testing {

class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "codexd-macos-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed";
    // Resolved, so expectations do not depend on a symlinked temp directory.
    path_ = std::filesystem::canonical(pattern).string();
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }
  std::string sub(const std::string& relative) const { return path_ + "/" + relative; }
  std::string make_dir(const std::string& relative) const {
    std::filesystem::create_directories(sub(relative));
    return sub(relative);
  }

 private:
  std::string path_;
};

}  // namespace codexd::sandbox::macos_backend::testing
