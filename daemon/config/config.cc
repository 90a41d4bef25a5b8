#include "daemon/config/config.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

// Header-only: Debian's libtomlplusplus.so is built with exceptions, and we parse without them.
#define TOML_HEADER_ONLY 1
#define TOML_EXCEPTIONS 0
#include <toml++/toml.h>

#include "codexd/api_constants.h"
#include "platform/posix/root_owned.h"

namespace codexd::config {
namespace {

// Collects every error with its position instead of stopping at the first.
class Errors {
 public:
  explicit Errors(std::string path) : path_(std::move(path)) {}
  void add(const toml::source_region& where, const std::string& message) {
    std::ostringstream out;
    out << path_ << ":" << where.begin.line << ":" << where.begin.column << ": " << message;
    lines_.push_back({where.begin.line, where.begin.column, out.str()});
  }
  bool empty() const { return lines_.empty(); }
  // In file order, one per line.
  std::string joined() const {
    auto sorted = lines_;
    std::stable_sort(sorted.begin(), sorted.end(), [](const Line& a, const Line& b) {
      return a.line != b.line ? a.line < b.line : a.column < b.column;
    });
    std::string all;
    for (const auto& l : sorted) all += (all.empty() ? "" : "\n") + l.text;
    return all;
  }

 private:
  struct Line {
    uint32_t line;
    uint32_t column;
    std::string text;
  };
  std::string path_;
  std::vector<Line> lines_;
};

// Reads one table, rejecting keys nobody asked for.
class TableReader {
 public:
  TableReader(const toml::table& table, std::string prefix, Errors& errors)
      : table_(table), prefix_(std::move(prefix)), errors_(errors) {}
  ~TableReader() {
    for (const auto& [key, node] : table_) {
      if (!known_.count(std::string(key.str()))) {
        errors_.add(node.source(), "unknown key `" + prefix_ + std::string(key.str()) + "`");
      }
    }
  }
  TableReader(const TableReader&) = delete;
  TableReader& operator=(const TableReader&) = delete;

  const toml::node* get(const std::string& key) {
    known_.insert(key);
    return table_.get(key);
  }
  std::string name(const std::string& key) const { return prefix_ + key; }

  void read(const std::string& key, std::string& out) {
    if (const auto* n = get(key)) {
      if (auto v = n->value<std::string>()) out = *v;
      else errors_.add(n->source(), "`" + name(key) + "` must be a string");
    }
  }
  void read(const std::string& key, bool& out) {
    if (const auto* n = get(key)) {
      if (auto v = n->value_exact<bool>()) out = *v;
      else errors_.add(n->source(), "`" + name(key) + "` must be true or false");
    }
  }
  template <typename Int>
  void read_int(const std::string& key, Int& out, int64_t min, int64_t max) {
    if (const auto* n = get(key)) {
      auto v = n->value_exact<int64_t>();
      if (!v) {
        errors_.add(n->source(), "`" + name(key) + "` must be an integer");
      } else if (*v < min || *v > max) {
        errors_.add(n->source(), "`" + name(key) + "` must be between " + std::to_string(min) + " and " +
                                     std::to_string(max) + " (got " + std::to_string(*v) + ")");
      } else {
        out = static_cast<Int>(*v);
      }
    }
  }
  void read(const std::string& key, std::vector<std::string>& out) {
    if (const auto* n = get(key)) {
      const auto* arr = n->as_array();
      if (!arr) {
        errors_.add(n->source(), "`" + name(key) + "` must be an array of strings");
        return;
      }
      out.clear();
      for (const auto& item : *arr) {
        if (auto v = item.value<std::string>()) out.push_back(*v);
        else errors_.add(item.source(), "`" + name(key) + "` must contain only strings");
      }
    }
  }
  void read_uids(const std::string& key, std::vector<uid_t>& out) {
    if (const auto* n = get(key)) {
      const auto* arr = n->as_array();
      if (!arr) {
        errors_.add(n->source(), "`" + name(key) + "` must be an array of uids");
        return;
      }
      out.clear();
      for (const auto& item : *arr) {
        auto v = item.value_exact<int64_t>();
        if (v && *v >= 0 && *v < 4294967295LL) out.push_back(static_cast<uid_t>(*v));
        else errors_.add(item.source(), "`" + name(key) + "` must contain only uids (non-negative integers)");
      }
    }
  }
  // One of `choices`, mapped to a value.
  template <typename T>
  void read_choice(const std::string& key, T& out, const std::vector<std::pair<std::string, T>>& choices) {
    if (const auto* n = get(key)) {
      auto v = n->value<std::string>();
      std::string allowed;
      for (const auto& [text, value] : choices) {
        allowed += (allowed.empty() ? "" : ", ") + text;
        if (v && *v == text) {
          out = value;
          return;
        }
      }
      errors_.add(n->source(), "`" + name(key) + "` must be one of " + allowed +
                                   (v ? " (got \"" + *v + "\")" : ""));
    }
  }
  const toml::table* table(const std::string& key) {
    const auto* n = get(key);
    if (!n) return nullptr;
    if (const auto* t = n->as_table()) return t;
    errors_.add(n->source(), "`" + name(key) + "` must be a table");
    return nullptr;
  }
  Errors& errors() { return errors_; }

 private:
  const toml::table& table_;
  std::string prefix_;
  Errors& errors_;
  std::set<std::string> known_;
};

void check_absolute(Errors& errors, const toml::node* node, const std::string& key, const std::string& value) {
  if (!value.empty() && value[0] != '/' && value[0] != '~') {
    errors.add(node ? node->source() : toml::source_region{}, "`" + key + "` must be an absolute path (got \"" + value + "\")");
  }
}

std::string home_dir() {
  const char* home = std::getenv("HOME");
  return home && *home ? home : "/";
}

}  // namespace

std::string expand_home(const std::string& path, const std::string& home) {
  if (path == "~") return home;
  if (path.rfind("~/", 0) == 0) return home + path.substr(1);
  return path;
}

std::string socket_path(const Config& config) {
  const std::string& listen = config.daemon.listen;
  if (listen.empty()) return api::default_socket_path(config.daemon.mode == DaemonMode::kSystem);
  return listen.rfind("unix:", 0) == 0 ? listen.substr(5) : listen;
}

void expand_home_paths(Config& c) {
  const std::string home = home_dir();
  for (auto& dir : c.policy.rules_dirs) dir = expand_home(dir, home);
  c.policy.amend_file = expand_home(c.policy.amend_file, home);
}

Config default_config(DaemonMode mode) {
  Config c;
  c.daemon.mode = mode;
  if (mode == DaemonMode::kSystem) {
    c.policy.rules_dirs = {"/etc/codexd/rules"};
  } else {
    c.policy.rules_dirs = {"/etc/codexd/rules", "~/.config/codexd/rules"};
    c.policy.amend_file = "~/.config/codexd/rules/default.rules";
  }
  expand_home_paths(c);
  return c;
}

Result<Config> parse_config(const std::string& text, const std::string& source_path) {
  toml::parse_result parsed = toml::parse(text, source_path);
  if (!parsed) {
    const auto& err = parsed.error();
    std::ostringstream out;
    out << source_path << ":" << err.source().begin.line << ":" << err.source().begin.column << ": "
        << err.description();
    return InvalidArgument(out.str());
  }
  const toml::table& root = parsed.table();
  Errors errors(source_path);

  // The mode decides the defaults, so read it first.
  DaemonMode mode = DaemonMode::kUser;
  if (const auto* d = root.get_as<toml::table>("daemon")) {
    if (auto m = d->get("mode")) {
      auto v = m->value<std::string>();
      if (v && *v == "system") mode = DaemonMode::kSystem;
    }
  }
  Config c = default_config(mode);
  c.source_path = source_path;

  {  // `top` reports unknown top-level keys when it goes out of scope
  TableReader top(root, "", errors);
  if (const auto* t = top.table("daemon")) {
    TableReader r(*t, "daemon.", errors);
    r.read_choice<DaemonMode>("mode", c.daemon.mode, {{"user", DaemonMode::kUser}, {"system", DaemonMode::kSystem}});
    r.read("listen", c.daemon.listen);
    if (!c.daemon.listen.empty()) {
      std::string path = c.daemon.listen.rfind("unix:", 0) == 0 ? c.daemon.listen.substr(5) : c.daemon.listen;
      if (path.empty() || path[0] != '/') {
        errors.add(t->get("listen")->source(), "`daemon.listen` must be unix:/absolute/path (got \"" + c.daemon.listen + "\")");
      }
    }
    r.read_choice<std::string>("log_level", c.daemon.log_level,
                               {{"trace", "trace"}, {"debug", "debug"}, {"info", "info"}, {"warn", "warn"},
                                {"error", "error"}, {"off", "off"}});
    r.read_choice<std::string>("log_format", c.daemon.log_format, {{"text", "text"}, {"json", "json"}});
    r.read_uids("admin_uids", c.daemon.admin_uids);
    r.read("socket_group", c.daemon.socket_group);
    for (const char* key : {"socket_mode", "socket_dir_mode"}) {
      std::string text;
      r.read(key, text);
      if (text.empty()) continue;
      char* end = nullptr;
      unsigned long bits = std::strtoul(text.c_str(), &end, 8);
      if (*end != '\0' || bits > 0777) {
        errors.add(t->get(key)->source(), std::string("`daemon.") + key + "` must be an octal mode like \"0660\" (got \"" + text + "\")");
        continue;
      }
      (std::string(key) == "socket_mode" ? c.daemon.socket_mode : c.daemon.socket_dir_mode) = static_cast<uint32_t>(bits);
    }
    r.read("root_runs_as", c.daemon.root_runs_as);
  }
  if (const auto* t = top.table("exec")) {
    TableReader r(*t, "exec.", errors);
    r.read("default_shell", c.exec.default_shell);
    check_absolute(errors, t->get("default_shell"), "exec.default_shell", c.exec.default_shell);
    r.read("allow_login_shell", c.exec.allow_login_shell);
    r.read_int("max_sessions", c.exec.max_sessions, 9, 4096);
    r.read_int("max_sessions_per_agent", c.exec.max_sessions_per_agent, 0, 4096);
    r.read_int("max_sessions_total", c.exec.max_sessions_total, 9, 65536);
    r.read_int("background_terminal_max_timeout_ms", c.exec.background_terminal_max_timeout_ms, 5000, 86'400'000);
    r.read_int("session_output_bytes", c.exec.session_output_bytes, 4096, 256LL << 20);
    r.read_int("attach_window_bytes", c.exec.attach_window_bytes, 65536, 256LL << 20);
  }
  if (const auto* t = top.table("environment")) {
    TableReader r(*t, "environment.", errors);
    r.read_choice<exec::EnvironmentPolicy::Inherit>("inherit", c.environment.inherit,
                                                    {{"all", exec::EnvironmentPolicy::Inherit::kAll},
                                                     {"core", exec::EnvironmentPolicy::Inherit::kCore},
                                                     {"none", exec::EnvironmentPolicy::Inherit::kNone}});
    r.read("ignore_default_excludes", c.environment.ignore_default_excludes);
    r.read("exclude", c.environment.exclude);
    r.read("include_only", c.environment.include_only);
    if (const auto* set = r.table("set")) {
      for (const auto& [key, node] : *set) {
        std::string name(key.str());
        if (name.empty() || name.find('=') != std::string::npos) {
          errors.add(node.source(), "`environment.set` names must be non-empty and contain no '='");
        } else if (auto v = node.value<std::string>()) {
          c.environment.set[name] = *v;
        } else {
          errors.add(node.source(), "`environment.set." + name + "` must be a string");
        }
      }
    }
  }
  if (const auto* t = top.table("policy")) {
    TableReader r(*t, "policy.", errors);
    r.read("rules_dirs", c.policy.rules_dirs);
    r.read("include_default_rules", c.policy.include_default_rules);
    for (const auto& dir : c.policy.rules_dirs) check_absolute(errors, t->get("rules_dirs"), "policy.rules_dirs", dir);
    r.read_choice<std::string>("approval_policy", c.policy.approval_policy,
                               {{"untrusted", "untrusted"}, {"on-request", "on-request"}, {"never", "never"},
                                {"granular", "granular"}});
    r.read("granular_sandbox_approval", c.policy.granular_sandbox_approval);
    r.read("granular_rules", c.policy.granular_rules);
    r.read("amend_file", c.policy.amend_file);
    check_absolute(errors, t->get("amend_file"), "policy.amend_file", c.policy.amend_file);
  }
  if (const auto* t = top.table("sandbox")) {
    TableReader r(*t, "sandbox.", errors);
    r.read_choice<sandbox::SandboxMode>("mode", c.sandbox.policy.mode,
                                        {{"read-only", sandbox::SandboxMode::kReadOnly},
                                         {"workspace-write", sandbox::SandboxMode::kWorkspaceWrite},
                                         {"danger-full-access", sandbox::SandboxMode::kDangerFullAccess}});
    r.read("writable_roots", c.sandbox.policy.writable_roots);
    for (const auto& p : c.sandbox.policy.writable_roots) check_absolute(errors, t->get("writable_roots"), "sandbox.writable_roots", p);
    r.read("network_access", c.sandbox.policy.network_access);
    r.read("exclude_tmpdir_env_var", c.sandbox.policy.exclude_tmpdir_env_var);
    r.read("exclude_slash_tmp", c.sandbox.policy.exclude_slash_tmp);
    r.read("denied_read", c.sandbox.policy.denied_read);
    for (const auto& p : c.sandbox.policy.denied_read) check_absolute(errors, t->get("denied_read"), "sandbox.denied_read", p);
    r.read_choice<sandbox::BackendPreference>("backend", c.sandbox.backend,
                                              {{"auto", sandbox::BackendPreference::kAuto},
                                               {"bwrap", sandbox::BackendPreference::kBwrap},
                                               {"landlock", sandbox::BackendPreference::kLandlock}});
    r.read("helper_path", c.sandbox.helper_path);
    check_absolute(errors, t->get("helper_path"), "sandbox.helper_path", c.sandbox.helper_path);
  }
  if (const auto* t = top.table("approvals")) {
    TableReader r(*t, "approvals.", errors);
    r.read_int("timeout_ms", c.approvals.timeout_ms, 0, 86'400'000);
    std::string when = "wait";
    r.read_choice<std::string>("when_no_reviewer", when, {{"wait", "wait"}, {"reject", "reject"}});
    c.approvals.reject_without_reviewer = when == "reject";
    r.read_uids("reviewer_uids", c.approvals.reviewer_uids);
    r.read("reviewer_group", c.approvals.reviewer_group);
    r.read_int("session_cache_entries", c.approvals.session_cache_entries, 0, 1'000'000);
  }
  if (const auto* t = top.table("agents")) {
    TableReader agents(*t, "agents.", errors);
    for (const auto& [key, node] : *t) {
      std::string agent(key.str());
      const toml::table* at = agents.table(agent);
      if (!at) continue;
      TableReader r(*at, "agents." + agent + ".", errors);
      AgentOverride o;
      std::string policy;
      if (r.get("approval_policy")) {
        r.read_choice<std::string>("approval_policy", policy,
                                   {{"untrusted", "untrusted"}, {"on-request", "on-request"}, {"never", "never"},
                                    {"granular", "granular"}});
        if (!policy.empty()) o.approval_policy = policy;
      }
      c.agents[agent] = o;
    }
  }
  if (const auto* t = top.table("audit")) {
    TableReader r(*t, "audit.", errors);
    r.read("log_file", c.audit.log_file);
    check_absolute(errors, t->get("log_file"), "audit.log_file", c.audit.log_file);
    r.read("journald", c.audit.journald);
  }
  }
  if (!errors.empty()) return InvalidArgument(errors.joined());
  expand_home_paths(c);
  return c;
}

Status check_root_only_writable(const std::string& path) {
  Result<std::string> trusted = posix::check_root_owned(path, "");
  if (trusted.ok()) return Status::Ok();
  if (trusted.status().code() != StatusCode::kPermissionDenied) return trusted.status();
  return PermissionDenied(trusted.status().message() + "; system mode loads only files that only root can change");
}

Result<Config> load_config_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot read config file " + path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return parse_config(buffer.str(), path);
}

}  // namespace codexd::config
