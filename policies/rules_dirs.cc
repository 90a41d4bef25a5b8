#include "policies/rules_dirs.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>

namespace codexd::policy {

Result<std::vector<std::string>> list_rules_files(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (!d) {
    if (errno == ENOENT || errno == ENOTDIR) return out;
    return ErrnoStatus("listing " + dir, errno);
  }
  while (dirent* entry = ::readdir(d)) {
    std::string name = entry->d_name;
    if (name.size() <= 6 || name.compare(name.size() - 6, 6, ".rules") != 0) continue;
    std::string path = dir + "/" + name;
    struct stat st;
    if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) out.push_back(path);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

namespace {
std::string user_dir(const std::string& home, const std::string& xdg) {
  if (!xdg.empty()) return xdg + "/codexd/rules";
  if (!home.empty()) return home + "/.config/codexd/rules";
  return "";
}
}  // namespace

std::vector<std::string> default_rules_directories(const std::string& home, const std::string& xdg_config_home) {
  std::vector<std::string> dirs = {"/etc/codexd/rules"};
  std::string user = user_dir(home, xdg_config_home);
  if (!user.empty()) dirs.push_back(user);
  return dirs;
}

std::string user_amendment_file(const std::string& home, const std::string& xdg_config_home) {
  std::string user = user_dir(home, xdg_config_home);
  return user.empty() ? "" : user + "/default.rules";
}

Result<std::vector<std::string>> collect_rules_files(const std::vector<std::string>& directories) {
  std::vector<std::string> all;
  for (const std::string& dir : directories) {
    auto files = list_rules_files(dir);
    if (!files.ok()) return files.status();
    all.insert(all.end(), files->begin(), files->end());
  }
  return all;
}

}  // namespace codexd::policy
