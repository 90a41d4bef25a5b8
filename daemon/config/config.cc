#include "daemon/config/config.h"

#include <pwd.h>
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
#include "daemon/config/byte_size.h"
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
  const toml::table& entries() const { return table_; }

  // An error at `key`'s value (the table's start when the key is absent).
  void error_at(const std::string& key, const std::string& message) {
    const toml::node* n = table_.get(key);
    errors_.add(n ? n->source() : toml::source_region{}, message);
  }

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
    read_array<std::string>(key, out, "strings", "only strings",
                            [](const toml::node& item) { return item.value<std::string>(); });
  }
  void read_uids(const std::string& key, std::vector<uid_t>& out) {
    read_array<uid_t>(key, out, "uids", "only uids (non-negative integers)", [](const toml::node& item) -> std::optional<uid_t> {
      auto v = item.value_exact<int64_t>();
      if (v && *v >= 0 && *v < 4294967295LL) return static_cast<uid_t>(*v);
      return std::nullopt;
    });
  }
  // One of `choices`, mapped to a value. True when `out` was set.
  template <typename T>
  bool read_choice(const std::string& key, T& out, const std::vector<std::pair<std::string, T>>& choices) {
    const auto* n = get(key);
    if (!n) return false;
    auto v = n->value<std::string>();
    std::string allowed;
    for (const auto& [text, value] : choices) {
      allowed += (allowed.empty() ? "" : ", ") + text;
      if (v && *v == text) {
        out = value;
        return true;
      }
    }
    errors_.add(n->source(), "`" + name(key) + "` must be one of " + allowed + (v ? " (got \"" + *v + "\")" : ""));
    return false;
  }
  // A path that must be absolute ("~" allowed), already read into `value`.
  void check_absolute(const std::string& key, const std::string& value) {
    if (!value.empty() && value[0] != '/' && value[0] != '~') {
      error_at(key, "`" + name(key) + "` must be an absolute path (got \"" + value + "\")");
    }
  }
  void read_path(const std::string& key, std::string& out) {
    read(key, out);
    check_absolute(key, out);
  }
  void read_paths(const std::string& key, std::vector<std::string>& out) {
    read(key, out);
    for (const auto& p : out) check_absolute(key, p);
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
  // An array whose every item `convert` accepts; `what` names the items in the errors.
  template <typename T, typename Convert>
  void read_array(const std::string& key, std::vector<T>& out, const char* what, const char* only, Convert convert) {
    const auto* n = get(key);
    if (!n) return;
    const auto* arr = n->as_array();
    if (!arr) {
      errors_.add(n->source(), "`" + name(key) + "` must be an array of " + what);
      return;
    }
    out.clear();
    for (const auto& item : *arr) {
      if (auto v = convert(item)) out.push_back(*v);
      else errors_.add(item.source(), "`" + name(key) + "` must contain " + only);
    }
  }

  const toml::table& table_;
  std::string prefix_;
  Errors& errors_;
  std::set<std::string> known_;
};

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

Result<MetricsAddress> parse_metrics_listen(const std::string& listen) {
  const std::string usage = "`metrics.listen` must be \"unix:/absolute/path\", \"tcp:127.0.0.1:PORT\" or "
                            "\"tcp:[::1]:PORT\" (got \"" + listen + "\")";
  MetricsAddress address;
  if (listen.rfind("unix:", 0) == 0) {
    address.path = listen.substr(5);
    if (address.path.empty() || address.path[0] != '/') return InvalidArgument(usage);
    return address;
  }
  if (listen.rfind("tcp:", 0) != 0) return InvalidArgument(usage);
  std::string rest = listen.substr(4);
  const size_t colon = rest.rfind(':');
  if (colon == std::string::npos) return InvalidArgument(usage);
  address.tcp = true;
  address.host = rest.substr(0, colon);
  if (address.host == "[::1]") address.host = "::1";
  if (address.host != "127.0.0.1" && address.host != "::1") {
    return InvalidArgument(usage + "; only loopback addresses: the figures describe every user's commands");
  }
  const std::string port = rest.substr(colon + 1);
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
      std::stoul(port) == 0 || std::stoul(port) > 65535) {
    return InvalidArgument(usage + "; the port must be 1 to 65535");
  }
  address.port = static_cast<uint16_t>(std::stoul(port));
  return address;
}

std::string socket_path(const Config& config) {
  const std::string& listen = config.daemon.listen;
  if (listen.empty()) return api::default_socket_path(config.daemon.mode == DaemonMode::kSystem);
  return listen.rfind("unix:", 0) == 0 ? listen.substr(5) : listen;
}

std::string state_dir(const Config& config) {
  if (!config.daemon.state_dir.empty()) return config.daemon.state_dir;
  if (config.daemon.mode == DaemonMode::kSystem) return "/var/lib/codexd";
  const char* state = std::getenv("XDG_STATE_HOME");
  if (state && state[0] == '/') return std::string(state) + "/codexd";
  // The daemon user's own home (passwd), not $HOME, like the private /tmp base.
  struct passwd pw {};
  struct passwd* found = nullptr;
  std::vector<char> buffer(16384);
  std::string home = "/";
  if (::getpwuid_r(::geteuid(), &pw, buffer.data(), buffer.size(), &found) == 0 && found && found->pw_dir &&
      found->pw_dir[0] == '/') {
    home = found->pw_dir;
  }
  return (home == "/" ? "" : home) + "/.local/state/codexd";
}

void expand_home_paths(Config& c) {
  const std::string home = home_dir();
  for (auto& dir : c.policy.rules_dirs) dir = expand_home(dir, home);
  c.policy.amend_file = expand_home(c.policy.amend_file, home);
}

// Defaults that stop a fork bomb and a memory hog, and leave a make -j / cargo build alone.
void default_limits(LimitsSection& l) {
  const uint64_t ram = physical_memory_bytes();
  l.session.pids_max = 4096;
  l.session.memory_max = ram / 2;
  l.session.memory_swap_max = 0;
  l.session.cpu_weight = 100;
  l.agent.pids_max = 8192;
  l.agent.memory_max = ram / 4 * 3;
  l.agent.memory_swap_max = 0;
  l.agent.cpu_weight = 100;
}

Config default_config(DaemonMode mode) {
  Config c;
  c.daemon.mode = mode;
  default_limits(c.limits);
  if (mode == DaemonMode::kSystem) {
    c.policy.rules_dirs = {"/etc/codexd/rules"};
  } else {
    c.policy.rules_dirs = {"/etc/codexd/rules", "~/.config/codexd/rules"};
    c.policy.amend_file = "~/.config/codexd/rules/default.rules";
  }
  expand_home_paths(c);
  return c;
}

namespace {

// ---- one reader per table -----------------------------------------------------------------

template <typename T>
using Choices = std::vector<std::pair<std::string, T>>;

const Choices<policy::ApprovalPolicyKind>& approval_policy_choices() {
  static const Choices<policy::ApprovalPolicyKind> choices = [] {
    Choices<policy::ApprovalPolicyKind> all;
    for (auto kind : policy::kApprovalPolicyKinds) all.emplace_back(policy::approval_policy_name(kind), kind);
    return all;
  }();
  return choices;
}

// "0660" -> 0660; "" leaves `out` alone (the mode's default).
void read_octal_mode(TableReader& r, const std::string& key, uint32_t& out) {
  std::string text;
  r.read(key, text);
  if (text.empty()) return;
  char* end = nullptr;
  unsigned long bits = std::strtoul(text.c_str(), &end, 8);
  if (*end != '\0' || bits > 0777) {
    r.error_at(key, "`" + r.name(key) + "` must be an octal mode like \"0660\" (got \"" + text + "\")");
    return;
  }
  out = static_cast<uint32_t>(bits);
}

void read_listen(TableReader& r, std::string& out) {
  r.read("listen", out);
  if (out.empty()) return;
  std::string path = out.rfind("unix:", 0) == 0 ? out.substr(5) : out;
  if (path.empty() || path[0] != '/') r.error_at("listen", "`daemon.listen` must be unix:/absolute/path (got \"" + out + "\")");
}

void read_daemon(TableReader& r, Config& c) {
  DaemonSection& d = c.daemon;
  r.read_choice<DaemonMode>("mode", d.mode, {{"user", DaemonMode::kUser}, {"system", DaemonMode::kSystem}});
  read_listen(r, d.listen);
  r.read_choice<std::string>("log_level", d.log_level,
                             {{"trace", "trace"}, {"debug", "debug"}, {"info", "info"}, {"warn", "warn"},
                              {"error", "error"}, {"off", "off"}});
  r.read_choice<std::string>("log_format", d.log_format, {{"text", "text"}, {"json", "json"}});
  r.read_uids("admin_uids", d.admin_uids);
  r.read("socket_group", d.socket_group);
  read_octal_mode(r, "socket_mode", d.socket_mode);
  read_octal_mode(r, "socket_dir_mode", d.socket_dir_mode);
  r.read("root_runs_as", d.root_runs_as);
  r.read_int("preface_timeout_ms", d.preface_timeout_ms, 100, 60'000);
  r.read_int("waiting_connections_per_uid", d.waiting_connections_per_uid, 1, 1024);
  r.read_int("max_connections_per_uid", d.max_connections_per_uid, 1, 4096);
  r.read_path("state_dir", d.state_dir);
}

std::vector<std::pair<std::string, ExecSupervision>> exec_supervision_choices() {
  return {{"off", ExecSupervision::kOff}, {"audit", ExecSupervision::kAudit}, {"enforce", ExecSupervision::kEnforce}};
}

void read_exec(TableReader& r, Config& c) {
  ExecSection& e = c.exec;
  r.read_path("default_shell", e.default_shell);
  r.read("allow_login_shell", e.allow_login_shell);
  r.read_int("max_sessions", e.max_sessions, 9, 4096);
  r.read_int("max_sessions_per_agent", e.max_sessions_per_agent, 0, 4096);
  r.read_int("max_sessions_total", e.max_sessions_total, 9, 65536);
  r.read_int("background_terminal_max_timeout_ms", e.background_terminal_max_timeout_ms, 5000, 86'400'000);
  r.read_int("session_output_bytes", e.session_output_bytes, 4096, 256LL << 20);
  r.read_int("attach_window_bytes", e.attach_window_bytes, 65536, 256LL << 20);
  r.read("durable_sessions", e.durable_sessions);
  r.read("keep_sessions_on_stop", e.keep_sessions_on_stop);
  r.read_path("shim_path", e.shim_path);
  r.read_choice("exec_supervision", e.exec_supervision, exec_supervision_choices());
}

// [environment] set = { NAME = "value" }
void read_environment_set(TableReader& r, std::map<std::string, std::string>& out) {
  const toml::table* set = r.table("set");
  if (!set) return;
  for (const auto& [key, node] : *set) {
    std::string name(key.str());
    if (name.empty() || name.find('=') != std::string::npos) {
      r.errors().add(node.source(), "`environment.set` names must be non-empty and contain no '='");
    } else if (auto v = node.value<std::string>()) {
      out[name] = *v;
    } else {
      r.errors().add(node.source(), "`environment.set." + name + "` must be a string");
    }
  }
}

void read_environment(TableReader& r, Config& c) {
  exec::EnvironmentPolicy& env = c.environment;
  r.read_choice<exec::EnvironmentPolicy::Inherit>("inherit", env.inherit,
                                                  {{"all", exec::EnvironmentPolicy::Inherit::kAll},
                                                   {"core", exec::EnvironmentPolicy::Inherit::kCore},
                                                   {"none", exec::EnvironmentPolicy::Inherit::kNone}});
  r.read("ignore_default_excludes", env.ignore_default_excludes);
  r.read("exclude", env.exclude);
  r.read("include_only", env.include_only);
  read_environment_set(r, env.set);
}

void read_policy(TableReader& r, Config& c) {
  PolicySection& p = c.policy;
  r.read_paths("rules_dirs", p.rules_dirs);
  r.read("include_default_rules", p.include_default_rules);
  r.read_choice("approval_policy", p.approval_policy, approval_policy_choices());
  r.read("granular_sandbox_approval", p.granular_sandbox_approval);
  r.read("granular_rules", p.granular_rules);
  r.read_path("amend_file", p.amend_file);
}

std::vector<std::pair<std::string, sandbox::NetworkMode>> network_mode_choices() {
  return {{"off", sandbox::NetworkMode::kOff}, {"proxy", sandbox::NetworkMode::kProxy}, {"host", sandbox::NetworkMode::kHost}};
}

// `network` (off | proxy | host), or the older `network_access = true`, which means proxy.
void read_network_mode(TableReader& r, sandbox::NetworkMode& out) {
  bool access = false;
  bool has_access = r.get("network_access") != nullptr;
  r.read("network_access", access);
  if (r.read_choice("network", out, network_mode_choices())) {
    if (has_access && access != (out != sandbox::NetworkMode::kOff)) {
      r.error_at("network_access", "`" + r.name("network_access") + "` contradicts `" + r.name("network") +
                                       "`; keep only `network`");
    }
  } else if (access) {
    out = sandbox::NetworkMode::kProxy;
  }
}

void read_host_patterns(TableReader& r, const std::string& key, std::vector<policy::HostPattern>& out) {
  std::vector<std::string> texts;
  r.read(key, texts);
  out.clear();
  for (const std::string& text : texts) {
    Result<policy::HostPattern> pattern = policy::parse_host_pattern(text);
    if (pattern.ok()) out.push_back(*pattern);
    else r.error_at(key, "`" + r.name(key) + "`: " + pattern.status().message());
  }
}

void read_sandbox(TableReader& r, Config& c) {
  sandbox::SandboxPolicy& p = c.sandbox.policy;
  r.read_choice<sandbox::SandboxMode>("mode", p.mode,
                                      {{"read-only", sandbox::SandboxMode::kReadOnly},
                                       {"workspace-write", sandbox::SandboxMode::kWorkspaceWrite},
                                       {"danger-full-access", sandbox::SandboxMode::kDangerFullAccess}});
  r.read_paths("writable_roots", p.writable_roots);
  read_network_mode(r, p.network);
  r.read("exclude_tmpdir_env_var", p.exclude_tmpdir_env_var);
  r.read("exclude_slash_tmp", p.exclude_slash_tmp);
  r.read_paths("denied_read", p.denied_read);
  r.read_choice<sandbox::BackendPreference>("backend", c.sandbox.backend,
                                            {{"auto", sandbox::BackendPreference::kAuto},
                                             {"bwrap", sandbox::BackendPreference::kBwrap},
                                             {"landlock", sandbox::BackendPreference::kLandlock}});
  r.read_path("helper_path", c.sandbox.helper_path);
  r.read("private_tmp", c.sandbox.private_tmp);
  r.read_path("private_tmp_dir", c.sandbox.private_tmp_dir);
  if (!c.sandbox.private_tmp_dir.empty() && c.sandbox.private_tmp_dir[0] == '~') {
    r.error_at("private_tmp_dir", "`sandbox.private_tmp_dir` must be an absolute path without ~");
  }
  r.read_int("private_tmp_grace_ms", c.sandbox.private_tmp_grace_ms, 0, 30LL * 86'400'000);
}

void read_approvals(TableReader& r, Config& c) {
  ApprovalsSection& a = c.approvals;
  r.read_int("timeout_ms", a.timeout_ms, 0, 86'400'000);
  std::string when = "wait";
  r.read_choice<std::string>("when_no_reviewer", when, {{"wait", "wait"}, {"reject", "reject"}});
  a.reject_without_reviewer = when == "reject";
  r.read_uids("reviewer_uids", a.reviewer_uids);
  r.read("reviewer_group", a.reviewer_group);
  r.read_int("session_cache_entries", a.session_cache_entries, 0, 1'000'000);
  r.read_int("max_pending_per_uid", a.max_pending_per_uid, 1, 100'000);
  r.read_int("max_pending", a.max_pending, 1, 1'000'000);
  if (a.max_pending < a.max_pending_per_uid) {
    r.error_at(r.get("max_pending") ? "max_pending" : "max_pending_per_uid", "`" + r.name("max_pending") + "` (" + std::to_string(a.max_pending) +
                                  ") is below `" + r.name("max_pending_per_uid") + "` (" +
                                  std::to_string(a.max_pending_per_uid) + ")");
  }
}

// A memory size: integer bytes or a string (byte_size.h).
void read_bytes(TableReader& r, const std::string& key, std::optional<uint64_t>& out) {
  const toml::node* n = r.get(key);
  if (!n) return;
  if (auto i = n->value_exact<int64_t>()) {
    if (*i < 0) r.errors().add(n->source(), "`" + r.name(key) + "` must not be negative");
    else out = static_cast<uint64_t>(*i);
    return;
  }
  auto text = n->value<std::string>();
  auto parsed = text ? parse_byte_size(*text, physical_memory_bytes()) : Result<std::optional<uint64_t>>(InvalidArgument(
                                                                                "must be bytes or a size string like \"256M\""));
  if (parsed.ok()) out = *parsed;
  else r.errors().add(n->source(), "`" + r.name(key) + "` " + parsed.status().message());
}

// A count or percentage where 0 means "no limit".
template <typename Int>
void read_optional(TableReader& r, const std::string& key, std::optional<Int>& out, int64_t max) {
  Int value = out.value_or(0);
  r.read_int(key, value, 0, max);
  out = value ? std::optional<Int>(value) : std::nullopt;
}

// The limit keys of one level: <prefix>pids_max, <prefix>memory_max, ...
void read_limit_keys(TableReader& r, const std::string& prefix, limits::ResourceLimits& l) {
  read_optional(r, prefix + "pids_max", l.pids_max, 4'194'304);
  read_bytes(r, prefix + "memory_max", l.memory_max);
  read_bytes(r, prefix + "memory_swap_max", l.memory_swap_max);
  read_bytes(r, prefix + "memory_high", l.memory_high);
  if (r.get(prefix + "cpu_weight")) {
    uint32_t weight = l.cpu_weight.value_or(100);
    r.read_int(prefix + "cpu_weight", weight, 1, 10000);
    l.cpu_weight = weight;
  }
  read_optional(r, prefix + "cpu_max", l.cpu_max_percent, 100'000);
  read_optional(r, prefix + "io_weight", l.io_weight, 10000);
}

void read_limits(TableReader& r, Config& c) {
  r.read_choice<LimitsMechanism>("mechanism", c.limits.mechanism,
                                 {{"auto", LimitsMechanism::kAuto}, {"cgroup", LimitsMechanism::kCgroup},
                                  {"rlimit", LimitsMechanism::kRlimit}, {"none", LimitsMechanism::kNone}});
  read_limit_keys(r, "", c.limits.session);
  read_optional(r, "cpu_seconds", c.limits.session.cpu_seconds, 1'000'000'000);
  read_limit_keys(r, "agent_", c.limits.agent);
  r.read_choice<LimitsSection::SystemdScope>("systemd_scope", c.limits.systemd_scope,
                                             {{"auto", LimitsSection::SystemdScope::kAuto},
                                              {"always", LimitsSection::SystemdScope::kAlways},
                                              {"never", LimitsSection::SystemdScope::kNever}});
  std::optional<uint64_t> floor = c.limits.daemon_memory_min;
  read_bytes(r, "daemon_memory_min", floor);
  c.limits.daemon_memory_min = floor.value_or(0);
}

// [agents."<x-codexd-agent-id>"]: one table per agent label.
void read_network(TableReader& r, Config& c) {
  read_host_patterns(r, "allow", c.network.allow);
  read_host_patterns(r, "deny", c.network.deny);
  r.read("limited", c.network.limited);
  NetworkSection& n = c.network;
  r.read_int("connect_timeout_ms", n.connect_timeout_ms, 100, 600'000);
  r.read_int("header_timeout_ms", n.header_timeout_ms, 100, 600'000);
  r.read_int("idle_timeout_ms", n.idle_timeout_ms, 1000, 86'400'000);
  r.read_int("max_header_bytes", n.max_header_bytes, 1024, 1 << 20);
  r.read_int("max_connections_per_command", n.max_connections_per_command, 1, 65536);
  r.read_int("max_connections_total", n.max_connections_total, 1, 1'000'000);
  if (n.max_connections_per_command > n.max_connections_total) {
    r.error_at("max_connections_per_command", "`network.max_connections_per_command` (" +
                                                  std::to_string(n.max_connections_per_command) +
                                                  ") must not exceed `network.max_connections_total` (" +
                                                  std::to_string(n.max_connections_total) + ")");
  }
}

void read_agents(TableReader& agents, Config& c) {
  for (const auto& [key, node] : agents.entries()) {
    std::string agent(key.str());
    const toml::table* t = agents.table(agent);
    if (!t) continue;
    TableReader r(*t, agents.name(agent) + ".", agents.errors());
    AgentOverride o;
    policy::ApprovalPolicyKind kind{};
    if (r.read_choice("approval_policy", kind, approval_policy_choices())) o.approval_policy = kind;
    sandbox::NetworkMode network{};
    if (r.read_choice("network", network, network_mode_choices())) o.network = network;
    read_host_patterns(r, "network_allow", o.network_allow);
    read_host_patterns(r, "network_deny", o.network_deny);
    bool limited = false;
    if (r.get("network_limited")) {
      r.read("network_limited", limited);
      o.network_limited = limited;
    }
    ExecSupervision supervision{};
    if (r.read_choice("exec_supervision", supervision, exec_supervision_choices())) o.exec_supervision = supervision;
    read_limit_keys(r, "", o.budget);
    c.agents[agent] = o;
  }
}

void read_metrics(TableReader& r, Config& c) {
  r.read("listen", c.metrics.listen);
  if (c.metrics.listen.empty()) return;
  if (auto parsed = parse_metrics_listen(c.metrics.listen); !parsed.ok()) r.error_at("listen", parsed.status().message());
}

void read_audit(TableReader& r, Config& c) {
  r.read_path("log_file", c.audit.log_file);
  r.read("journald", c.audit.journald);
}

using TableFn = void (*)(TableReader&, Config&);
constexpr std::pair<const char*, TableFn> kTables[] = {
    {"daemon", read_daemon},       {"exec", read_exec},       {"environment", read_environment},
    {"policy", read_policy},       {"sandbox", read_sandbox}, {"approvals", read_approvals},
    {"agents", read_agents},       {"audit", read_audit},     {"network", read_network},
    {"limits", read_limits},       {"metrics", read_metrics},
};

// Every known table into `c`; unknown top-level keys are errors.
void read_tables(const toml::table& root, Errors& errors, Config& c) {
  TableReader top(root, "", errors);
  for (const auto& [name, read] : kTables) {
    if (const auto* t = top.table(name)) {
      TableReader r(*t, std::string(name) + ".", errors);
      read(r, c);
    }
  }
}

// The mode decides the defaults, so it is read before anything else (and again, with its
// errors, by read_daemon).
DaemonMode mode_of(const toml::table& root) {
  const auto* d = root.get_as<toml::table>("daemon");
  const auto* m = d ? d->get("mode") : nullptr;
  auto v = m ? m->value<std::string>() : std::nullopt;
  return v && *v == "system" ? DaemonMode::kSystem : DaemonMode::kUser;
}

Status syntax_error(const toml::parse_error& err, const std::string& source_path) {
  std::ostringstream out;
  out << source_path << ":" << err.source().begin.line << ":" << err.source().begin.column << ": " << err.description();
  return InvalidArgument(out.str());
}

}  // namespace

policy::ApprovalPolicy Config::approval_policy_for(const std::string& agent_id) const {
  policy::ApprovalPolicy p;
  auto it = agents.find(agent_id);
  p.kind = it != agents.end() && it->second.approval_policy ? *it->second.approval_policy : policy.approval_policy;
  p.sandbox_approval = policy.granular_sandbox_approval;
  p.rules_approval = policy.granular_rules;
  return p;
}

sandbox::NetworkMode Config::network_mode_for(const std::string& agent_id) const {
  auto it = agents.find(agent_id);
  return it != agents.end() && it->second.network ? *it->second.network : sandbox.policy.network;
}

ExecSupervision Config::exec_supervision_for(const std::string& agent_id) const {
  auto it = agents.find(agent_id);
  return it != agents.end() && it->second.exec_supervision ? *it->second.exec_supervision : exec.exec_supervision;
}

const char* exec_supervision_name(ExecSupervision mode) {
  switch (mode) {
    case ExecSupervision::kOff: return "off";
    case ExecSupervision::kAudit: return "audit";
    case ExecSupervision::kEnforce: return "enforce";
  }
  return "off";
}

bool Config::network_limited_for(const std::string& agent_id) const {
  auto it = agents.find(agent_id);
  return it != agents.end() && it->second.network_limited ? *it->second.network_limited : network.limited;
}

limits::ResourceLimits Config::agent_budget_for(const std::string& agent_id) const {
  limits::ResourceLimits budget = limits.agent;
  auto it = agents.find(agent_id);
  if (it == agents.end()) return budget;
  const limits::ResourceLimits& o = it->second.budget;
  if (o.pids_max) budget.pids_max = o.pids_max;
  if (o.memory_max) budget.memory_max = o.memory_max;
  if (o.memory_swap_max) budget.memory_swap_max = o.memory_swap_max;
  if (o.memory_high) budget.memory_high = o.memory_high;
  if (o.cpu_weight) budget.cpu_weight = o.cpu_weight;
  if (o.cpu_max_percent) budget.cpu_max_percent = o.cpu_max_percent;
  if (o.io_weight) budget.io_weight = o.io_weight;
  return budget;
}

Result<Config> parse_config(const std::string& text, const std::string& source_path) {
  toml::parse_result parsed = toml::parse(text, source_path);
  if (!parsed) return syntax_error(parsed.error(), source_path);
  Errors errors(source_path);
  Config c = default_config(mode_of(parsed.table()));
  c.source_path = source_path;
  read_tables(parsed.table(), errors, c);
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
