#include "client/completion.h"

#include <algorithm>
#include <sstream>

namespace codexd::client {

namespace {

void add_options(const CLI::App& app, CompletionNode& node) {
  for (const CLI::Option* option : app.get_options()) {
    if (option->get_positional()) continue;
    std::vector<std::string> spellings;
    for (const std::string& name : option->get_lnames()) spellings.push_back("--" + name);
    for (const std::string& name : option->get_snames()) spellings.push_back("-" + name);
    for (const std::string& spelling : spellings) {
      node.options.push_back(spelling);
      if (option->get_expected_min() > 0) node.value_options.push_back(spelling);
    }
  }
}

void walk(const CLI::App& app, const std::string& path, std::vector<CompletionNode>& out) {
  CompletionNode node;
  node.path = path;
  node.description = app.get_description();
  const auto subs = app.get_subcommands([](const CLI::App*) { return true; });
  for (const CLI::App* sub : subs) node.subcommands.push_back(sub->get_name());
  add_options(app, node);
  out.push_back(node);
  for (const CLI::App* sub : subs) walk(*sub, path.empty() ? sub->get_name() : path + " " + sub->get_name(), out);
}

std::string words_of(const std::vector<std::string>& a, const std::vector<std::string>& b = {}) {
  std::string out;
  for (const auto* list : {&a, &b}) {
    for (const std::string& word : *list) out += (out.empty() ? "" : " ") + word;
  }
  return out;
}

// "daemon restart" -> "/daemon/restart": how the scripts spell a path while they walk the words.
std::string slashed(const std::string& path) {
  std::string out = path.empty() ? "" : "/" + path;
  for (char& c : out) c = c == ' ' ? '/' : c;
  return out;
}

// The case patterns that extend the path by one subcommand word.
std::string path_steps(const std::vector<CompletionNode>& tree) {
  std::string out;
  for (const CompletionNode& node : tree) {
    if (node.path.empty()) continue;
    out += (out.empty() ? "" : "|") + slashed(node.path);
  }
  return out;
}

std::string bash_script(const std::vector<CompletionNode>& tree, bool for_zsh) {
  std::ostringstream s;
  s << "# " << (for_zsh ? "zsh" : "bash")
    << " completion for codexctl; made by `codexctl completion " << (for_zsh ? "zsh" : "bash")
    << "` from its own command tree.\n";
  const std::string cword = for_zsh ? "CURRENT" : "COMP_CWORD";
  const std::string word = for_zsh ? "${words[i]}" : "${COMP_WORDS[i]}";
  const std::string first = for_zsh ? "2" : "1";
  s << "_codexctl() {\n";
  if (for_zsh) {
    s << "  local cur=${words[CURRENT]} prev=${words[CURRENT-1]}\n";
  } else {
    s << "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n";
  }
  // `path` is special in zsh (tied to PATH): the walk's variable is cmdpath.
  s << "  local cmdpath=\"\" i w\n"
    << "  local -a candidates\n"
    << "  for ((i = " << first << "; i < " << cword << "; i++)); do\n"
    << "    w=" << word << "\n"
    << "    if [[ $w == -- ]]; then  # after --: the command to run, then its arguments\n";
  if (for_zsh) {
    s << "      if ((i == CURRENT - 1)); then _command_names -e; else _files; fi\n";
  } else {
    s << "      if ((i == COMP_CWORD - 1)); then COMPREPLY=($(compgen -c -- \"$cur\")); "
         "else COMPREPLY=($(compgen -f -- \"$cur\")); fi\n";
  }
  s << "      return 0\n"
    << "    fi\n"
    << "    case \"$cmdpath/$w\" in\n"
    << "      " << path_steps(tree) << ") cmdpath=\"$cmdpath/$w\" ;;\n"
    << "    esac\n"
    << "  done\n";
  // Options that take a value: a file name (or anything) follows.
  std::string value_cases;
  for (const CompletionNode& node : tree) {
    for (const std::string& option : node.value_options) {
      value_cases += (value_cases.empty() ? "" : "|") + std::string("\"") + slashed(node.path) + " " + option + "\"";
    }
  }
  if (!value_cases.empty()) {
    s << "  case \"$cmdpath $prev\" in\n"
      << "    " << value_cases << ")\n";
    s << (for_zsh ? "      _files\n" : "      COMPREPLY=($(compgen -f -- \"$cur\"))\n");
    s << "      return 0 ;;\n"
      << "  esac\n";
  }
  s << "  case \"$cmdpath\" in\n";
  for (const CompletionNode& node : tree) {
    s << "    \"" << slashed(node.path) << "\") candidates=(" << words_of(node.subcommands, node.arguments) << " "
      << words_of(node.options) << ") ;;\n";
  }
  s << "  esac\n";
  if (for_zsh) {
    s << "  compadd -a candidates\n"
      << "}\n"
      << "_codexctl \"$@\"\n";
  } else {
    s << "  COMPREPLY=($(compgen -W \"${candidates[*]}\" -- \"$cur\"))\n"
      << "}\n"
      << "complete -F _codexctl codexctl\n";
  }
  return s.str();
}

// fish single-quoted text: only \\ and \' are escapes.
std::string fish_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\\' || c == '\'') out += '\\';
    out += c;
  }
  return out + "'";
}

std::string fish_script(const std::vector<CompletionNode>& tree) {
  std::ostringstream s;
  s << "# fish completion for codexctl; made by `codexctl completion fish` from its own command tree.\n"
    << "function __codexctl_path  # the subcommand words typed so far, as /daemon/restart; -- after --\n"
    << "    set -l cmdpath ''\n"
    << "    for w in (commandline -opc)[2..-1]\n"
    << "        if test \"$w\" = '--'\n"
    << "            echo -- '--'\n"
    << "            return\n"
    << "        end\n"
    << "        switch \"$cmdpath/$w\"\n"
    << "            case";
  for (const CompletionNode& node : tree) {
    if (!node.path.empty()) s << " " << slashed(node.path);
  }
  s << "\n"
    << "                set cmdpath \"$cmdpath/$w\"\n"
    << "        end\n"
    << "    end\n"
    << "    echo -- $cmdpath\n"
    << "end\n"
    << "complete -c codexctl -f\n"
    << "complete -c codexctl -n 'test \"$(__codexctl_path)\" = --' -F\n";
  for (const CompletionNode& parent : tree) {
    // "$(...)" (fish 3.4+) keeps an empty path one argument of test.
    const std::string when = "-n " + fish_quoted("test \"$(__codexctl_path)\" = " + fish_quoted(slashed(parent.path)));
    for (const CompletionNode& child : tree) {
      const bool direct = !child.path.empty() && child.path.rfind(parent.path.empty() ? "" : parent.path + " ", 0) == 0 &&
                          child.path.find(' ', parent.path.empty() ? 0 : parent.path.size() + 1) == std::string::npos;
      if (!direct) continue;
      const std::string name = child.path.substr(child.path.rfind(' ') == std::string::npos ? 0 : child.path.rfind(' ') + 1);
      s << "complete -c codexctl " << when << " -a " << fish_quoted(name) << " -d " << fish_quoted(child.description) << "\n";
    }
    for (const std::string& argument : parent.arguments) {
      s << "complete -c codexctl " << when << " -a " << fish_quoted(argument) << "\n";
    }
    for (const std::string& option : parent.options) {
      const bool takes_value =
          std::find(parent.value_options.begin(), parent.value_options.end(), option) != parent.value_options.end();
      const bool is_long = option.rfind("--", 0) == 0;
      s << "complete -c codexctl " << when << (is_long ? " -l " : " -s ") << option.substr(is_long ? 2 : 1)
        << (takes_value ? " -r -F" : "") << "\n";
    }
  }
  return s.str();
}

}  // namespace

std::vector<CompletionNode> completion_tree(const CLI::App& app) {
  std::vector<CompletionNode> tree;
  walk(app, "", tree);
  for (CompletionNode& node : tree) {
    if (node.path == "completion") node.arguments = {"bash", "zsh", "fish"};
  }
  for (CompletionNode& node : tree) {
    if (node.path != "policy") continue;
    node.subcommands.push_back("check");
    CompletionNode check;
    check.path = "policy check";
    check.description = "Check a command against exec-policy rules files (compatible with `codex execpolicy check`)";
    check.options = {"--rules", "-r", "--pretty", "--resolve-host-executables", "--help", "-h"};
    check.value_options = {"--rules", "-r"};
    tree.push_back(check);
    break;
  }
  return tree;
}

std::string completion_script(const std::vector<CompletionNode>& tree, const std::string& shell) {
  if (shell == "fish") return fish_script(tree);
  const bool zsh = shell == "zsh";
  return (zsh ? "#compdef codexctl\n" : "") + bash_script(tree, zsh);
}

}  // namespace codexd::client
