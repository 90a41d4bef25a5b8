// One temporary directory for every test: mkdtemp, an optional chmod, removed with everything
// in it when the object goes. Where it goes is the caller's choice, because sandboxed commands
// see /tmp differently from the test:
//   kTmp        /tmp. For tests whose commands run unsandboxed, or whose sandbox keeps /tmp a
//               writable root (workspace-write), so the command sees the same files.
//   kOutsideTmp /var/tmp. The bwrap backend gives a command a private /tmp when /tmp is not a
//               writable root, and /var/tmp is never a writable root: files a sandboxed command
//               must see, or must be denied, live here.
//   kSystemTemp std::filesystem::temp_directory_path() ($TMPDIR), resolved through symlinks
//               (macOS: /var/folders is /private/var/folders), so expectations can compare paths.
#pragma once

#include <sys/types.h>

#include <string>

namespace codexd::testing {

enum class TempLocation { kTmp, kOutsideTmp, kSystemTemp };

// mkdtemp("<parent>/<prefix>-XXXXXX"), then chmod(mode) unless mode is 0 (mkdtemp gives 0700).
// Throws std::runtime_error when the directory cannot be made. Nothing removes it.
std::string make_temp_dir(const std::string& parent, const std::string& prefix, mode_t mode = 0);

class TempDir {
 public:
  explicit TempDir(const std::string& prefix, TempLocation where = TempLocation::kTmp, mode_t mode = 0);
  ~TempDir();
  TempDir(TempDir&& other) noexcept;
  TempDir& operator=(TempDir&& other) noexcept;
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string sub(const std::string& name) const { return path_ + "/" + name; }
  // Creates a directory (with parents) below this one; the new directory gets this one's mode
  // when one was given. Returns its path.
  std::string make_dir(const std::string& name) const;
  // Writes a file (creating its parent directories) below this one. Returns its path.
  std::string make_file(const std::string& name, const std::string& content = "original\n") const;
 private:
  void remove();

  std::string path_;
  mode_t mode_ = 0;
};

// The whole content of a file ("" when it cannot be read): what a test compares or searches.
std::string read_text_file(const std::string& path);

}  // namespace codexd::testing
