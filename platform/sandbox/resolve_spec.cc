// resolve_sandbox_spec: SandboxPolicy + ResolveContext -> SandboxSpec.
//
// Decisions worth knowing:
// - Every path is validated (absolute, non-empty, no NUL) and canonicalized with realpath
//   when it exists, so the backends mount the real location.
// - A writable root that does not exist is skipped (as Codex's newest builds do) and noted.
// - A writable root reached through a symlink that itself sits inside a writable root is
//   rejected: a sandboxed command could have planted that symlink to widen the next run.
// - "/" and anything under /proc or /sys can never be a writable root (that is
//   danger-full-access, or a direct route to host kernel state).
#include <sys/stat.h>

#include <algorithm>

#include "platform/sandbox/path_utils.h"
#include "platform/sandbox/protected_paths.h"
#include "platform/sandbox/sandbox.h"

namespace codexd::sandbox {
namespace {

struct Candidate {
  std::string lexical;  // normalized, as configured
  std::string origin;   // "writable_roots", "cwd", "/tmp", "$TMPDIR"
};

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

Status reject_forbidden_root(const std::string& canonical, const Candidate& candidate) {
  if (canonical == "/") {
    return InvalidArgument(candidate.origin + " " + candidate.lexical +
                           " resolves to /; use danger-full-access instead");
  }
  if (is_same_or_under(canonical, "/proc") || is_same_or_under(canonical, "/sys")) {
    return InvalidArgument(candidate.origin + " " + candidate.lexical +
                           " resolves into host kernel state (" + canonical + ")");
  }
  // The operating system itself: the agent picks its working directory, and a workdir of
  // /etc or /usr/bin must not make the system writable.
  static constexpr const char* kSystemTrees[] = {"/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64",
                                                 "/libx32", "/sbin", "/usr/bin", "/usr/lib", "/usr/lib32",
                                                 "/usr/lib64", "/usr/libexec", "/usr/sbin", "/usr/share"};
  static constexpr const char* kSystemDirs[] = {"/usr", "/var", "/run", "/home", "/opt", "/srv", "/mnt", "/media"};
  for (const char* tree : kSystemTrees) {
    if (is_same_or_under(canonical, tree)) {
      return InvalidArgument(candidate.origin + " " + candidate.lexical + " is a system directory (" + canonical +
                             ") and cannot be a writable root");
    }
  }
  for (const char* dir : kSystemDirs) {
    if (canonical == dir) {
      return InvalidArgument(candidate.origin + " " + candidate.lexical + " is a system directory (" + canonical +
                             ") and cannot be a writable root");
    }
  }
  return Status::Ok();
}

// The parent directory of the first symlink on `lexical` (canonicalized), if any.
std::optional<std::string> symlink_host_dir(const std::string& lexical) {
  std::optional<std::string> link = first_symlink_component(lexical);
  if (!link) return std::nullopt;
  Result<std::optional<std::string>> dir = canonicalize_existing(parent_path(*link));
  if (!dir.ok() || !dir->has_value()) return parent_path(*link);
  return **dir;
}

Result<std::vector<std::string>> canonical_paths(const std::vector<std::string>& paths,
                                                 std::string_view what,
                                                 std::vector<std::string>* notes) {
  std::vector<std::string> out;
  for (const std::string& path : paths) {
    CODEXD_RETURN_IF_ERROR(validate_absolute_path(path, what));
    std::string lexical = normalize_lexically(path);
    CODEXD_ASSIGN_OR_RETURN(std::optional<std::string> canonical, canonicalize_existing(lexical));
    std::string chosen = canonical.value_or(lexical);
    if (!canonical) notes->push_back(std::string(what) + " " + lexical + " does not exist");
    if (canonical && *canonical != lexical) {
      notes->push_back(std::string(what) + " " + lexical + " -> " + *canonical);
    }
    if (chosen == "/") return InvalidArgument(std::string(what) + " cannot be /");
    if (std::find(out.begin(), out.end(), chosen) == out.end()) out.push_back(chosen);
  }
  return out;
}

bool by_specificity(const std::string& a, const std::string& b) {
  int da = path_depth(a);
  int db = path_depth(b);
  return da != db ? da < db : a < b;
}

Result<std::vector<WritableRoot>> resolve_writable_roots(const SandboxPolicy& policy,
                                                         const std::string& cwd,
                                                         const ResolveContext& context,
                                                         std::vector<std::string>* notes) {
  std::vector<Candidate> candidates;
  for (const std::string& root : policy.writable_roots) {
    CODEXD_RETURN_IF_ERROR(validate_absolute_path(root, "writable root"));
    candidates.push_back({normalize_lexically(root), "writable root"});
  }
  candidates.push_back({cwd, "cwd"});
  // With a private /tmp the host's is a writable root only when named explicitly.
  const bool private_tmp = context.private_tmp && !policy.exclude_slash_tmp;
  if (!policy.exclude_slash_tmp && !private_tmp && is_directory("/tmp")) candidates.push_back({"/tmp", "/tmp"});
  if (!policy.exclude_tmpdir_env_var && context.tmpdir_env && !context.tmpdir_env->empty()) {
    const std::string& tmpdir = *context.tmpdir_env;
    if (tmpdir.front() != '/' || tmpdir.find('\0') != std::string::npos) {
      notes->push_back("$TMPDIR ignored (not an absolute path)");
    } else if (private_tmp && is_same_or_under(normalize_lexically(tmpdir), "/tmp")) {
      notes->push_back("$TMPDIR " + tmpdir + " is inside host /tmp: the private /tmp replaces it");
    } else {
      candidates.push_back({normalize_lexically(tmpdir), "$TMPDIR"});
    }
  }

  std::vector<std::string> canonical;
  std::vector<const Candidate*> kept;
  for (const Candidate& candidate : candidates) {
    CODEXD_ASSIGN_OR_RETURN(std::optional<std::string> real, canonicalize_existing(candidate.lexical));
    if (!real) {
      notes->push_back("skipped missing " + candidate.origin + " " + candidate.lexical);
      continue;
    }
    if (!is_directory(*real)) {
      notes->push_back("skipped non-directory " + candidate.origin + " " + candidate.lexical);
      continue;
    }
    if (Status forbidden = reject_forbidden_root(*real, candidate); !forbidden.ok()) {
      // A working directory there simply stays read-only; a configured root is an error.
      if (candidate.origin != "cwd") return forbidden;
      notes->push_back("cwd " + candidate.lexical + " stays read-only: " + forbidden.message());
      continue;
    }
    if (std::find(canonical.begin(), canonical.end(), *real) != canonical.end()) continue;
    canonical.push_back(*real);
    kept.push_back(&candidate);
  }

  for (size_t i = 0; i < kept.size(); ++i) {
    const Candidate& candidate = *kept[i];
    if (candidate.lexical == canonical[i]) continue;
    notes->push_back(candidate.origin + " " + candidate.lexical + " -> " + canonical[i]);
    std::optional<std::string> link_dir = symlink_host_dir(candidate.lexical);
    if (!link_dir) continue;
    for (const std::string& other : canonical) {
      if (is_same_or_under(*link_dir, other)) {
        return InvalidArgument(candidate.origin + " " + candidate.lexical +
                               " goes through a symlink inside writable root " + other +
                               "; a sandboxed command could have planted it");
      }
    }
  }

  std::sort(canonical.begin(), canonical.end(), by_specificity);
  std::vector<WritableRoot> roots;
  for (const std::string& root : canonical) {
    CODEXD_ASSIGN_OR_RETURN(std::vector<std::string> protected_paths,
                            find_protected_subpaths(root, root == cwd, notes));
    roots.push_back({root, std::move(protected_paths)});
  }
  return roots;
}

// The one decision about /tmp: the agent's private directory, unless /tmp is excluded or the
// host's /tmp is a writable root (named explicitly, or the cwd).
void choose_private_tmp(const SandboxPolicy& policy, const ResolveContext& context, SandboxSpec& spec) {
  if (!context.private_tmp || policy.exclude_slash_tmp) return;
  for (const WritableRoot& root : spec.writable_roots) {
    if (root.root == "/tmp") {
      spec.notes.push_back("host /tmp is a writable root: no private /tmp");
      return;
    }
  }
  spec.private_tmp = normalize_lexically(*context.private_tmp);
  spec.notes.push_back("private /tmp: " + *spec.private_tmp + " (host /tmp is not writable)");
}

}  // namespace

std::vector<std::string> with_private_tmpdir(std::vector<std::string> env, const std::string& tmpdir) {
  env.erase(std::remove_if(env.begin(), env.end(), [](const std::string& e) { return e.rfind("TMPDIR=", 0) == 0; }),
            env.end());
  env.push_back("TMPDIR=" + tmpdir);
  return env;
}

Result<SandboxSpec> resolve_sandbox_spec(const SandboxPolicy& policy, const ResolveContext& context) {
  CODEXD_RETURN_IF_ERROR(validate_absolute_path(context.cwd, "cwd"));
  SandboxSpec spec;
  spec.mode = policy.mode;

  CODEXD_ASSIGN_OR_RETURN(spec.denied_read,
                          canonical_paths(policy.denied_read, "denied_read", &spec.notes));
  CODEXD_ASSIGN_OR_RETURN(spec.masked_paths,
                          canonical_paths(context.masked_paths, "masked path", &spec.notes));

  switch (policy.mode) {
    case SandboxMode::kDangerFullAccess:
      if (!spec.denied_read.empty()) {
        return InvalidArgument(
            "danger-full-access cannot enforce denied_read; use workspace-write or read-only");
      }
      spec.network = NetworkMode::kHost;
      spec.masked_paths.clear();  // nothing is enforced without a sandbox
      return spec;
    case SandboxMode::kReadOnly:
      spec.network = policy.network;
      return spec;
    case SandboxMode::kWorkspaceWrite:
      break;
  }

  spec.network = policy.network;
  CODEXD_ASSIGN_OR_RETURN(std::optional<std::string> cwd,
                          canonicalize_existing(normalize_lexically(context.cwd)));
  if (!cwd) return NotFound("cwd does not exist: " + context.cwd);
  CODEXD_ASSIGN_OR_RETURN(spec.writable_roots,
                          resolve_writable_roots(policy, *cwd, context, &spec.notes));
  choose_private_tmp(policy, context, spec);
  return spec;
}

}  // namespace codexd::sandbox
