#include "policies/shell_split.h"

#include <cctype>

namespace codexd::policy {
namespace {

bool is_blank(char c) { return c == ' ' || c == '\t'; }
// Characters that end an unquoted word.
bool is_meta(char c) { return c == ';' || c == '&' || c == '|' || c == '(' || c == ')' || c == '<' || c == '>' || c == '\n' || is_blank(c); }

bool is_assignment(const std::string& word) {
  if (word.empty() || !(std::isalpha(static_cast<unsigned char>(word[0])) || word[0] == '_')) return false;
  for (size_t i = 1; i < word.size(); ++i) {
    char c = word[i];
    if (c == '=' || (c == '+' && i + 1 < word.size() && word[i + 1] == '=')) return true;
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return false;
}

bool is_reserved_first_word(const std::string& w) {
  static const char* const kWords[] = {"if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done",
                                       "case", "esac", "function", "select", "time", "coproc", "{", "}", "!",
                                       "[[", "]]", "[", "in"};
  for (const char* k : kWords) {
    if (w == k) return true;
  }
  return false;
}

class Splitter {
 public:
  Splitter(const std::string& s, bool exec_policy) : s_(s), exec_policy_(exec_policy) {}

  std::optional<std::vector<Argv>> run() {
    std::vector<Argv> commands;
    Argv current;
    bool pending_operator = false;  // an && || | was seen and needs a following command
    bool any_word = false;
    while (true) {
      skip_blanks();
      if (pos_ >= s_.size()) break;
      char c = s_[pos_];
      if (c == '#') {
        // A comment (only at a word boundary, which is where we are).
        if (!exec_policy_) return std::nullopt;
        while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
        continue;
      }
      if (c == '\n' || c == ';') {
        if (c == ';' && pos_ + 1 < s_.size() && s_[pos_ + 1] == ';') return std::nullopt;  // ;; (case)
        if (c == ';' && current.empty() && !saw_content_) return std::nullopt;  // "; x" or "a;;"
        if (pending_operator && current.empty()) {
          if (c == ';') return std::nullopt;
          ++pos_;
          continue;  // a newline may follow && || |
        }
        if (!finish(current, commands)) return std::nullopt;
        pending_operator = false;
        ++pos_;
        continue;
      }
      if (c == '&' || c == '|') {
        bool doubled = pos_ + 1 < s_.size() && s_[pos_ + 1] == c;
        if (c == '&' && !doubled) {
          if (exec_policy_ && pos_ + 1 < s_.size() && s_[pos_ + 1] == '>') return std::nullopt;
          return std::nullopt;  // background job
        }
        if (c == '|' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '&') return std::nullopt;  // |&
        if (current.empty()) return std::nullopt;  // operator without a command before it
        if (!finish(current, commands)) return std::nullopt;
        pos_ += doubled ? 2 : 1;
        pending_operator = true;
        continue;
      }
      if (c == '(' || c == ')') return std::nullopt;
      if (c == '<' || c == '>' || (std::isdigit(static_cast<unsigned char>(c)) && redirect_after_digits())) {
        if (!exec_policy_ || !skip_redirection()) return std::nullopt;
        saw_content_ = true;
        continue;
      }
      std::optional<std::string> word = read_word();
      if (!word) return std::nullopt;
      if (current.empty()) {
        if (is_assignment(*word)) {
          if (!exec_policy_) return std::nullopt;
          saw_content_ = true;
          continue;  // FOO=bar cmd: the assignment is not part of the command
        }
        if (!word_was_quoted_ && is_reserved_first_word(*word)) return std::nullopt;
      }
      current.push_back(std::move(*word));
      any_word = true;
      saw_content_ = true;
    }
    if (pending_operator && current.empty()) return std::nullopt;  // trailing && || |
    if (!finish(current, commands)) return std::nullopt;
    if (!any_word || commands.empty()) return std::nullopt;
    return commands;
  }

 private:
  void skip_blanks() {
    while (pos_ < s_.size()) {
      if (is_blank(s_[pos_])) {
        ++pos_;
      } else if (s_[pos_] == '\\' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '\n') {
        pos_ += 2;  // line continuation
      } else {
        break;
      }
    }
  }

  bool finish(Argv& current, std::vector<Argv>& commands) {
    if (current.empty()) {
      // Only assignments/redirections: nothing to check in the exec-policy variant.
      bool ok = exec_policy_ && saw_content_;
      saw_content_ = false;
      return ok;
    }
    commands.push_back(std::move(current));
    current.clear();
    saw_content_ = false;
    return true;
  }

  bool redirect_after_digits() const {
    size_t i = pos_;
    while (i < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i]))) ++i;
    return i < s_.size() && (s_[i] == '<' || s_[i] == '>');
  }

  // [n]> target, [n]>> target, [n]< target, [n]>&m, &> target. Heredocs are not accepted.
  bool skip_redirection() {
    while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    char op = s_[pos_++];
    if (op == '<' && pos_ < s_.size() && s_[pos_] == '<') return false;  // heredoc / herestring
    if (op == '>' && pos_ < s_.size() && (s_[pos_] == '>' || s_[pos_] == '|')) ++pos_;
    if (pos_ < s_.size() && s_[pos_] == '&') {
      ++pos_;
      size_t begin = pos_;
      while (pos_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '-')) ++pos_;
      return pos_ > begin;
    }
    skip_blanks();
    std::optional<std::string> target = read_word();
    return target && !target->empty();
  }

  // A word: concatenated unquoted text, '...' and "..." (no $, `, or \ anywhere).
  std::optional<std::string> read_word() {
    std::string word;
    word_was_quoted_ = false;
    size_t begin = pos_;
    while (pos_ < s_.size() && !is_meta(s_[pos_])) {
      char c = s_[pos_];
      if (c == '$' || c == '`' || c == '\\') return std::nullopt;
      if (c == '\'') {
        size_t close = s_.find('\'', pos_ + 1);
        if (close == std::string::npos) return std::nullopt;
        word.append(s_, pos_ + 1, close - pos_ - 1);
        pos_ = close + 1;
        word_was_quoted_ = true;
      } else if (c == '"') {
        size_t i = pos_ + 1;
        while (i < s_.size() && s_[i] != '"') {
          if (s_[i] == '$' || s_[i] == '`' || s_[i] == '\\') return std::nullopt;
          ++i;
        }
        if (i >= s_.size()) return std::nullopt;
        word.append(s_, pos_ + 1, i - pos_ - 1);
        pos_ = i + 1;
        word_was_quoted_ = true;
      } else if ((c == '{' || c == '}') && pos_ == begin && (pos_ + 1 >= s_.size() || is_meta(s_[pos_ + 1]))) {
        return std::nullopt;  // a brace group
      } else {
        word += c;
        ++pos_;
      }
    }
    if (pos_ == begin) return std::nullopt;
    return word;
  }

  const std::string& s_;
  bool exec_policy_;
  size_t pos_ = 0;
  bool saw_content_ = false;
  bool word_was_quoted_ = false;
};

std::string basename_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::optional<ShellInvocation> extract_shell_command(const Argv& argv) {
  if (argv.size() != 3) return std::nullopt;
  std::string shell = basename_of(argv[0]);
  if (shell != "bash" && shell != "zsh" && shell != "sh") return std::nullopt;
  if (argv[1] != "-c" && argv[1] != "-lc") return std::nullopt;
  return ShellInvocation{shell, argv[1], argv[2]};
}

std::optional<std::vector<Argv>> parse_plain_commands(const std::string& script) {
  if (script.size() > (1u << 20)) return std::nullopt;  // not worth analysing: opaque
  return Splitter(script, false).run();
}

std::optional<std::vector<Argv>> parse_commands_for_exec_policy(const std::string& script) {
  if (script.size() > (1u << 20)) return std::nullopt;
  return Splitter(script, true).run();
}

std::optional<std::vector<Argv>> plain_commands_of_shell_argv(const Argv& argv) {
  auto shell = extract_shell_command(argv);
  if (!shell) return std::nullopt;
  return parse_plain_commands(shell->script);
}

}  // namespace codexd::policy
