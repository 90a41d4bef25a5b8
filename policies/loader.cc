#include "policies/loader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

#include "policies/literal_rules.h"
#include "policies/rule_builtins.h"
#include "policies/shlex.h"
#include "policies/starlark/module.h"
#include "policies/starlark/utf8.h"

namespace codexd::policy {
namespace {

using HostMap = std::unordered_map<std::string, std::vector<std::string>>;

std::string indent_cause(const std::string& cause) {
  std::string out = "    ";
  for (size_t i = 0; i < cause.size(); ++i) {
    out += cause[i];
    if (cause[i] == '\n') out += "    ";
  }
  return out;
}

LoadError make_error(const std::string& path, const std::string& headline, const std::string& located,
                     const std::string& cause) {
  LoadError e;
  e.path = path;
  e.located = located;
  e.codex_report = "Error: " + headline + " " + path + "\n\nCaused by:\n" + indent_cause(cause) + "\n";
  return e;
}

// Reads a whole file the way Rust's fs::read_to_string reports failures.
bool read_file(const std::string& path, std::string* text, std::string* error) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    *error = std::string(std::strerror(err)) + " (os error " + std::to_string(err) + ")";
    return false;
  }
  struct stat st {};
  if (::fstat(fd, &st) == 0 && st.st_size > 0) text->reserve(static_cast<size_t>(st.st_size));
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      *error = std::string(std::strerror(err)) + " (os error " + std::to_string(err) + ")";
      return false;
    }
    if (n == 0) break;
    text->append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  if (!is_valid_utf8(*text)) {
    *error = "stream did not contain valid UTF-8";
    return false;
  }
  return true;
}

// Checks one prefix_rule call's examples against a policy holding only that call's rules
// (plus the host executables known so far), with host resolution on.
std::optional<std::string> check_examples(const PrefixRuleCall& call, const HostMap& hosts, const MatchOptions& options) {
  if (call.match_examples.empty() && call.not_match_examples.empty()) return std::nullopt;
  Policy mini(call.rules, hosts, {});
  for (const auto& example : call.not_match_examples) {
    auto m = mini.matches(example, options);
    if (!m.empty()) return "expected example to not match rule `" + match_debug(m.front()) + "`: " + shlex_join(example);
  }
  std::vector<std::string> unmatched;
  for (const auto& example : call.match_examples) {
    if (mini.matches(example, options).empty()) unmatched.push_back(shlex_join(example));
  }
  if (unmatched.empty()) return std::nullopt;
  std::string rules = "[";
  for (size_t i = 0; i < call.rules.size(); ++i) {
    if (i) rules += ", ";
    rules += rust_debug_string(rule_debug(call.rules[i]));
  }
  rules += "]";
  std::string examples = "[";
  for (size_t i = 0; i < unmatched.size(); ++i) {
    if (i) examples += ", ";
    examples += rust_debug_string(unmatched[i]);
  }
  examples += "]";
  return "expected every example to match at least one rule. rules: " + rules + "; unmatched examples: " + examples;
}

struct Loader {
  explicit Loader(const LoadOptions& o) : options(o) {
    match_options.resolve_host_executables = true;
    if (!options.cwd.empty()) {
      match_options.cwd = options.cwd;
    } else if (char* cwd = ::getcwd(nullptr, 0)) {
      match_options.cwd = cwd;
      std::free(cwd);
    }
    if (!options.home.empty()) {
      match_options.home = options.home;
    } else if (const char* home = std::getenv("HOME")) {
      match_options.home = home;
    }
  }

  // Evaluates one file; on success merges what it declared into the policy being built.
  void add_file(const std::string& path, std::string text) {
    auto source = std::make_shared<starlark::SourceFile>(path, starlark::drop_carriage_returns(std::move(text)));
    FileDeclarations decl;
    if (!read_literal_rules(source, &decl)) {
      decl = FileDeclarations{};  // declined part-way: the evaluator starts over
      starlark::EvalResult result = starlark::eval_module(source, make_rule_builtins(&decl));
      if (!result.ok) {
        errors.push_back(make_error(path, "failed to parse policy at", result.error.located_message(),
                                    result.error.codex_report()));
        return;
      }
    }
    HostMap merged = hosts;
    for (auto& [name, paths] : decl.host_executables) merged[name] = paths;
    for (const PrefixRuleCall& call : decl.calls) {
      if (auto message = check_examples(call, merged, match_options)) {
        errors.push_back(make_error(path, "failed to parse policy at", call.location + ": " + *message, *message));
        return;
      }
    }
    hosts = std::move(merged);
    size_t added = 0;
    for (const PrefixRuleCall& call : decl.calls) added += call.rules.size();
    rules.reserve(rules.size() + added);
    for (PrefixRuleCall& call : decl.calls) {
      for (PrefixRule& r : call.rules) rules.push_back(std::move(r));
    }
    for (NetworkRule& n : decl.network_rules) network_rules.push_back(std::move(n));
  }

  LoadResult finish() {
    LoadResult result;
    result.errors = std::move(errors);
    if (result.errors.empty()) {
      result.policy = std::make_shared<const Policy>(std::move(rules), std::move(hosts), std::move(network_rules));
    }
    return result;
  }

  LoadOptions options;
  MatchOptions match_options;
  std::vector<PrefixRule> rules;
  HostMap hosts;
  std::vector<NetworkRule> network_rules;
  std::vector<LoadError> errors;
};

}  // namespace

LoadResult load_policy_sources(const std::vector<PolicySource>& sources, const LoadOptions& options) {
  Loader loader(options);
  for (const PolicySource& source : sources) {
    std::string text, error;
    if (source.text) {
      text = *source.text;
      if (!is_valid_utf8(text)) error = "stream did not contain valid UTF-8";
    } else {
      read_file(source.path, &text, &error);
    }
    if (!error.empty()) {
      loader.errors.push_back(make_error(source.path, "failed to read policy at", source.path + ": " + error, error));
    } else {
      loader.add_file(source.path, std::move(text));
    }
    if (options.stop_at_first_error && !loader.errors.empty()) break;
  }
  return loader.finish();
}

LoadResult load_policy_files(const std::vector<std::string>& paths, const LoadOptions& options) {
  std::vector<PolicySource> sources;
  for (const std::string& path : paths) sources.push_back({path, std::nullopt});
  return load_policy_sources(sources, options);
}

LoadResult load_policy_text(const std::string& path, const std::string& text, const LoadOptions& options) {
  Loader loader(options);
  if (!is_valid_utf8(text)) {
    loader.errors.push_back(make_error(path, "failed to read policy at", path + ": stream did not contain valid UTF-8",
                                       "stream did not contain valid UTF-8"));
  } else {
    loader.add_file(path, text);
  }
  return loader.finish();
}

}  // namespace codexd::policy
