// Finds the metadata paths that stay read-only inside a writable root: `.git` (and, for a
// worktree or submodule, the real gitdir its `gitdir:` pointer names, plus that gitdir's
// `commondir`), `.agents`, and `.codex` (protected even when missing for the cwd root, so
// that creating it still needs approval).
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace codexd::sandbox {

// `root` is canonical. Returns the paths in mount order; notes explain resolved pointers.
Result<std::vector<std::string>> find_protected_subpaths(const std::string& root, bool is_cwd_root,
                                                         std::vector<std::string>* notes);

// Reads a `.git` pointer file ("gitdir: <path>") and returns the path it names, resolved
// against the directory holding the file and normalized (not canonicalized).
Result<std::string> read_gitdir_pointer(const std::string& dot_git_file);

}  // namespace codexd::sandbox
