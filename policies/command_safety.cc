#include "policies/command_safety.h"

#include <algorithm>
#include <cctype>

#include "policies/shell_split.h"

namespace codexd::policy {
namespace {

std::string basename_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

bool any_arg(const std::vector<std::string>& argv, size_t from, bool (*pred)(const std::string&)) {
  for (size_t i = from; i < argv.size(); ++i) {
    if (pred(argv[i])) return true;
  }
  return false;
}

bool is_sed_print_range(const std::string& s) {
  // ^(\d+,)?\d+p$
  if (s.size() < 2 || s.back() != 'p') return false;
  std::string body = s.substr(0, s.size() - 1);
  size_t comma = body.find(',');
  auto digits = [](const std::string& x) {
    return !x.empty() && std::all_of(x.begin(), x.end(), [](unsigned char c) { return std::isdigit(c); });
  };
  if (comma == std::string::npos) return digits(body);
  return digits(body.substr(0, comma)) && digits(body.substr(comma + 1));
}

bool git_is_safe(const std::vector<std::string>& argv) {
  // A config override can run arbitrary programs (core.pager, aliases...).
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == "-c" || a == "--config-env" || starts_with(a, "--config-env=") || (starts_with(a, "-c") && a.size() > 2)) {
      return false;
    }
  }
  static const char* const kValued[] = {"-C", "-c", "--config-env", "--exec-path", "--git-dir", "--namespace",
                                        "--super-prefix", "--work-tree"};
  size_t i = 1;
  for (; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a.empty() || a[0] != '-') break;
    bool takes_value = false;
    for (const char* v : kValued) {
      if (a == v) takes_value = true;
    }
    if (takes_value) ++i;  // split form: skip the value; "=" and attached forms are one token
  }
  if (i >= argv.size()) return false;
  const std::string& sub = argv[i];
  if (sub != "status" && sub != "log" && sub != "diff" && sub != "show" && sub != "branch") return false;
  for (size_t k = i + 1; k < argv.size(); ++k) {
    const std::string& a = argv[k];
    if (a == "--output" || starts_with(a, "--output=") || a == "--ext-diff" || a == "--textconv" || a == "--exec" ||
        starts_with(a, "--exec=") || a == "--paginate") {
      return false;
    }
  }
  if (sub == "branch") {
    static const char* const kReadOnly[] = {"--list", "-l", "--show-current", "-a", "--all", "-r", "--remotes",
                                            "-v", "-vv", "--verbose"};
    for (size_t k = i + 1; k < argv.size(); ++k) {
      const std::string& a = argv[k];
      bool ok = starts_with(a, "--format=");
      for (const char* r : kReadOnly) ok = ok || a == r;
      if (!ok) return false;
    }
  }
  return true;
}

}  // namespace

bool is_safe_to_call_with_exec(const std::vector<std::string>& argv) {
  if (argv.empty()) return false;
  std::string program = basename_of(argv[0]);
  static const char* const kAlwaysSafe[] = {"cat", "cd", "cut", "echo", "expr", "false", "grep", "head", "id",
                                            "ls", "nl", "paste", "pwd", "rev", "seq", "stat", "tail", "tr",
                                            "true", "uname", "uniq", "wc", "which", "whoami", "numfmt", "tac"};
  for (const char* s : kAlwaysSafe) {
    if (program == s) return true;
  }
  if (program == "base64") {
    return !any_arg(argv, 1, [](const std::string& a) {
      return a == "-o" || a == "--output" || starts_with(a, "--output=") || (starts_with(a, "-o") && a.size() > 2);
    });
  }
  if (program == "find") {
    return !any_arg(argv, 1, [](const std::string& a) {
      return a == "-exec" || a == "-execdir" || a == "-ok" || a == "-okdir" || a == "-delete" || a == "-fls" ||
             a == "-fprint" || a == "-fprint0" || a == "-fprintf";
    });
  }
  if (program == "rg") {
    return !any_arg(argv, 1, [](const std::string& a) {
      return a == "--search-zip" || a == "-z" || a == "--pre" || starts_with(a, "--pre=") || a == "--hostname-bin" ||
             starts_with(a, "--hostname-bin=");
    });
  }
  if (program == "git") return git_is_safe(argv);
  if (program == "sed") {
    return (argv.size() == 3 || argv.size() == 4) && argv[1] == "-n" && is_sed_print_range(argv[2]);
  }
  return false;
}

bool is_known_safe_command(const std::vector<std::string>& argv_in) {
  std::vector<std::string> argv = argv_in;
  if (!argv.empty() && argv[0] == "zsh") argv[0] = "bash";
  if (is_safe_to_call_with_exec(argv)) return true;
  auto commands = plain_commands_of_shell_argv(argv);
  if (!commands || commands->empty()) return false;
  return std::all_of(commands->begin(), commands->end(), [](const auto& c) { return is_safe_to_call_with_exec(c); });
}

bool command_might_be_dangerous(const std::vector<std::string>& argv) {
  if (argv.empty()) return false;
  std::string program = basename_of(argv[0]);
  if (program == "rm") return argv.size() > 1 && (argv[1] == "-f" || argv[1] == "-rf");
  if (program == "sudo") return command_might_be_dangerous({argv.begin() + 1, argv.end()});
  if (auto commands = plain_commands_of_shell_argv(argv)) {
    return std::any_of(commands->begin(), commands->end(), [](const auto& c) { return command_might_be_dangerous(c); });
  }
  return false;
}

}  // namespace codexd::policy
