#include "platform/macos/seatbelt_policy.h"

#include <algorithm>

#include "platform/macos/sbpl_resources.h"
#include "platform/sandbox/path_utils.h"

namespace codexd::sandbox::macos_backend {
namespace {

// One root of an access rule and the paths under (or around) it that the rule leaves out.
struct AccessRoot {
  std::string root;
  std::vector<std::string> excluded;
};

void append_unique(std::vector<std::string>* out, const std::vector<std::string>& items) {
  for (const std::string& item : items) {
    if (std::find(out->begin(), out->end(), item) == out->end()) out->push_back(item);
  }
}

std::string param_ref(const std::string& name) { return "(param \"" + name + "\")"; }

// `(allow OPERATION <filter per root>)`; the filters are alternatives. Registers the
// parameters PREFIX_i and PREFIX_i_EXCLUDED_j.
std::string access_rule(const std::string& operation, const std::string& prefix,
                        const std::vector<AccessRoot>& roots, std::vector<SeatbeltParam>* params) {
  std::string rule = "(allow " + operation;
  for (size_t i = 0; i < roots.size(); ++i) {
    std::string root_name = prefix + "_" + std::to_string(i);
    params->push_back({root_name, roots[i].root});
    if (roots[i].excluded.empty()) {
      rule += "\n  (subpath " + param_ref(root_name) + ")";
      continue;
    }
    rule += "\n  (require-all (subpath " + param_ref(root_name) + ")";
    for (size_t j = 0; j < roots[i].excluded.size(); ++j) {
      std::string excluded_name = root_name + "_EXCLUDED_" + std::to_string(j);
      params->push_back({excluded_name, roots[i].excluded[j]});
      // `literal` too: `subpath` alone would still let the command create the path itself.
      rule += "\n    (require-not (literal " + param_ref(excluded_name) + "))";
      rule += "\n    (require-not (subpath " + param_ref(excluded_name) + "))";
    }
    rule += ")";
  }
  return rule + ")\n";
}

std::string describe_root(const AccessRoot& root) {
  if (root.excluded.empty()) return root.root;
  std::string text = root.root + " (except";
  for (const std::string& path : root.excluded) text += " " + path;
  return text + ")";
}

class PolicyBuilder {
 public:
  PolicyBuilder(const SandboxSpec& spec, const SeatbeltOptions& options)
      : spec_(spec), options_(options) {
    if (!options_.resolve) options_.resolve = resolve_for_seatbelt;
  }

  Result<SeatbeltPolicy> build() {
    if (spec_.mode == SandboxMode::kDangerFullAccess) {
      return InvalidArgument("danger-full-access runs without a sandbox; there is no Seatbelt policy for it");
    }
    CODEXD_ASSIGN_OR_RETURN(denied_, exclusions_of(spec_.denied_read, "denied_read"));
    CODEXD_ASSIGN_OR_RETURN(masked_, exclusions_of(spec_.masked_paths, "masked path"));
    unreadable_ = denied_;
    append_unique(&unreadable_, masked_);

    std::vector<std::string> sections = {std::string(base_policy_sbpl())};
    sections.push_back(read_section());
    CODEXD_ASSIGN_OR_RETURN(std::string writes, write_section());
    sections.push_back(std::move(writes));
    CODEXD_ASSIGN_OR_RETURN(std::string network, network_section());
    sections.push_back(std::move(network));
    if (!masked_.empty()) sections.push_back(masked_section());

    for (size_t i = 0; i < sections.size(); ++i) {
      if (i > 0) policy_.text += "\n";
      policy_.text += sections[i];
    }
    return std::move(policy_);
  }

 private:
  Result<std::vector<std::string>> exclusions_of(const std::vector<std::string>& paths, const std::string& what) {
    std::vector<std::string> out;
    for (const std::string& path : paths) {
      CODEXD_RETURN_IF_ERROR(validate_absolute_path(path, what));
      CODEXD_ASSIGN_OR_RETURN(std::vector<std::string> forms, exclusion_forms(path, options_.resolve));
      append_unique(&out, forms);
    }
    return out;
  }

  std::string read_section() {
    if (unreadable_.empty()) {
      policy_.rules.push_back("seatbelt read: everything");
      return "; reads: the whole filesystem\n(allow file-read*)\n";
    }
    AccessRoot everything{"/", unreadable_};
    policy_.rules.push_back("seatbelt read: " + describe_root(everything));
    return "; reads: the whole filesystem except the denied paths\n" +
           access_rule("file-read*", "READABLE_ROOT", {everything}, &policy_.params);
  }

  Result<std::string> write_section() {
    std::vector<AccessRoot> roots;
    std::vector<std::string> seen;
    for (const WritableRoot& writable : spec_.writable_roots) {
      CODEXD_RETURN_IF_ERROR(validate_absolute_path(writable.root, "writable root"));
      CODEXD_ASSIGN_OR_RETURN(std::string root, options_.resolve(normalize_lexically(writable.root)));
      if (root == "/") return InvalidArgument("writable root " + writable.root + " resolves to /");
      if (std::find(seen.begin(), seen.end(), root) != seen.end()) continue;
      seen.push_back(root);
      AccessRoot access{root, {}};
      CODEXD_ASSIGN_OR_RETURN(access.excluded, exclusions_of(writable.read_only_subpaths, "read-only subpath"));
      // A path the command may not read must not be writable either (no replacing, no
      // renaming it into view); a denied ancestor makes the whole root read-only.
      std::vector<std::string> overlapping;
      for (const std::string& path : unreadable_) {
        if (is_same_or_under(path, root) || is_same_or_under(root, path)) overlapping.push_back(path);
      }
      append_unique(&access.excluded, overlapping);
      roots.push_back(std::move(access));
    }
    if (roots.empty()) {
      policy_.rules.push_back("seatbelt write: nothing (only /dev/null)");
      return std::string("; writes: none\n");
    }
    for (const AccessRoot& root : roots) policy_.rules.push_back("seatbelt write: " + describe_root(root));
    return "; writes: the writable roots, minus protected metadata and denied paths\n" +
           access_rule("file-write*", "WRITABLE_ROOT", roots, &policy_.params);
  }

  Result<std::string> network_section() {
    if (spec_.network == NetworkMode::kOff) {
      policy_.rules.push_back("seatbelt network: blocked");
      return std::string("; network: off\n");
    }
    if (spec_.network == NetworkMode::kProxy) {
      // No descriptor handover to the daemon's proxy exists for Seatbelt yet; refusing keeps
      // "proxy" from silently meaning "host" (docs/sandbox.md).
      return Unavailable("network mode proxy is not supported by the Seatbelt backend yet; use off or host");
    }
    policy_.rules.push_back("seatbelt network: allowed");
    std::string text = "; network: on\n(allow network-outbound)\n(allow network-inbound)\n";
    text += network_policy_sbpl();
    if (options_.darwin_user_cache_dir) {
      CODEXD_RETURN_IF_ERROR(validate_absolute_path(*options_.darwin_user_cache_dir, "DARWIN_USER_CACHE_DIR"));
      CODEXD_ASSIGN_OR_RETURN(std::string cache, options_.resolve(*options_.darwin_user_cache_dir));
      policy_.params.push_back({"DARWIN_USER_CACHE_DIR", cache});
      policy_.rules.push_back("seatbelt write: " + cache + " (per-user cache, network on)");
      text += "(allow file-write* (subpath " + param_ref("DARWIN_USER_CACHE_DIR") + "))\n";
    }
    return text;
  }

  // Last, so that no earlier allow (the network section's included) can reopen them.
  std::string masked_section() {
    std::string text = "; codexd's own sockets: unreachable, whatever was allowed above\n";
    for (size_t k = 0; k < masked_.size(); ++k) {
      std::string name = "MASKED_PATH_" + std::to_string(k);
      policy_.params.push_back({name, masked_[k]});
      policy_.rules.push_back("seatbelt hidden: " + masked_[k]);
      text += "(deny file-read* file-write* (subpath " + param_ref(name) + "))\n";
      text += "(deny network-outbound (remote unix-socket (subpath " + param_ref(name) + ")))\n";
    }
    return text;
  }

  const SandboxSpec& spec_;
  SeatbeltOptions options_;
  std::vector<std::string> denied_;
  std::vector<std::string> masked_;
  std::vector<std::string> unreadable_;
  SeatbeltPolicy policy_;
};

}  // namespace

Result<SeatbeltPolicy> build_seatbelt_policy(const SandboxSpec& spec, const SeatbeltOptions& options) {
  return PolicyBuilder(spec, options).build();
}

}  // namespace codexd::sandbox::macos_backend
