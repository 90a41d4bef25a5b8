#include "platform/sandbox/protected_paths.h"

#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "platform/sandbox/path_utils.h"

namespace codexd::sandbox {
namespace {

constexpr size_t kMaxPointerFileBytes = 4096;

bool path_exists_no_follow(const std::string& path, struct stat* st) {
  return ::lstat(path.c_str(), st) == 0;
}

Result<std::string> read_small_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot read " + path);
  std::string text(kMaxPointerFileBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxPointerFileBytes) return InvalidArgument(path + " is too large");
  return text;
}

std::string trim(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ' ||
                           text.back() == '\t')) {
    text.pop_back();
  }
  size_t start = text.find_first_not_of(" \t");
  return start == std::string::npos ? std::string() : text.substr(start);
}

// Resolves `target` (absolute or relative to `base_dir`) to a canonical existing path.
Result<std::optional<std::string>> resolve_against(const std::string& base_dir,
                                                   const std::string& target) {
  if (target.empty() || target.find('\0') != std::string::npos) {
    return InvalidArgument("empty or NUL-holding git pointer");
  }
  std::string joined = target.front() == '/' ? target : join_path(base_dir, target);
  return canonicalize_existing(normalize_lexically(joined));
}

void add_unique(std::vector<std::string>* out, const std::string& path) {
  for (const std::string& existing : *out) {
    if (existing == path) return;
  }
  out->push_back(path);
}

// A worktree's gitdir holds `commondir` naming the main repository's .git, where hooks and
// config live; protecting only the per-worktree gitdir would leave those writable.
void add_commondir(const std::string& gitdir, std::vector<std::string>* out,
                   std::vector<std::string>* notes) {
  std::string commondir_file = join_path(gitdir, "commondir");
  struct stat st {};
  if (!path_exists_no_follow(commondir_file, &st) || !S_ISREG(st.st_mode)) return;
  Result<std::string> text = read_small_file(commondir_file);
  if (!text.ok()) return;
  Result<std::optional<std::string>> common = resolve_against(gitdir, trim(*text));
  if (common.ok() && common->has_value()) {
    add_unique(out, **common);
    notes->push_back("protected git commondir " + **common + " (from " + commondir_file + ")");
  }
}

}  // namespace

Result<std::string> read_gitdir_pointer(const std::string& dot_git_file) {
  CODEXD_ASSIGN_OR_RETURN(std::string text, read_small_file(dot_git_file));
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    line = trim(line);
    constexpr std::string_view kPrefix = "gitdir:";
    if (line.compare(0, kPrefix.size(), kPrefix) != 0) continue;
    std::string target = trim(line.substr(kPrefix.size()));
    if (target.empty() || target.find('\0') != std::string::npos) break;
    std::string joined =
        target.front() == '/' ? target : join_path(parent_path(dot_git_file), target);
    return normalize_lexically(joined);
  }
  return InvalidArgument(dot_git_file + " is not a gitdir pointer");
}

Result<std::vector<std::string>> find_protected_subpaths(const std::string& root, bool is_cwd_root,
                                                         std::vector<std::string>* notes) {
  std::vector<std::string> out;
  struct stat st {};

  std::string dot_git = join_path(root, ".git");
  if (path_exists_no_follow(dot_git, &st)) {
    out.push_back(dot_git);
    if (S_ISREG(st.st_mode)) {
      Result<std::string> pointer = read_gitdir_pointer(dot_git);
      if (pointer.ok()) {
        Result<std::optional<std::string>> gitdir = canonicalize_existing(*pointer);
        if (gitdir.ok() && gitdir->has_value()) {
          add_unique(&out, **gitdir);
          notes->push_back("protected gitdir " + **gitdir + " (from " + dot_git + ")");
          add_commondir(**gitdir, &out, notes);
        } else {
          notes->push_back("gitdir pointer in " + dot_git + " names a missing path: " + *pointer);
        }
      }
    } else if (S_ISDIR(st.st_mode)) {
      add_commondir(dot_git, &out, notes);
    }
  }

  std::string dot_agents = join_path(root, ".agents");
  if (path_exists_no_follow(dot_agents, &st)) out.push_back(dot_agents);

  std::string dot_codex = join_path(root, ".codex");
  if (path_exists_no_follow(dot_codex, &st)) {
    out.push_back(dot_codex);
  } else if (is_cwd_root) {
    out.push_back(dot_codex);  // missing: creating it must go through approval
  }
  return out;
}

}  // namespace codexd::sandbox
