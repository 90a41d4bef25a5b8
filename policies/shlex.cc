#include "policies/shlex.h"

namespace codexd::policy {

std::optional<std::vector<std::string>> shlex_split(const std::string& s) {
  std::vector<std::string> words;
  size_t i = 0, n = s.size();
  auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n'; };
  while (true) {
    while (i < n && is_space(s[i])) ++i;
    if (i >= n) break;
    if (s[i] == '#') {  // a comment runs to the end of the line
      while (i < n && s[i] != '\n') ++i;
      continue;
    }
    std::string word;
    while (i < n && !is_space(s[i])) {
      char c = s[i++];
      if (c == '\\') {
        if (i >= n) return std::nullopt;
        char next = s[i++];
        if (next != '\n') word += next;
      } else if (c == '\'') {
        size_t close = s.find('\'', i);
        if (close == std::string::npos) return std::nullopt;
        word.append(s, i, close - i);
        i = close + 1;
      } else if (c == '"') {
        while (true) {
          if (i >= n) return std::nullopt;
          char d = s[i++];
          if (d == '"') break;
          if (d == '\\') {
            if (i >= n) return std::nullopt;
            char e = s[i++];
            if (e == '"' || e == '\\' || e == '$' || e == '`') {
              word += e;
            } else if (e != '\n') {
              word += '\\';
              word += e;
            }
          } else {
            word += d;
          }
        }
      } else {
        word += c;
      }
    }
    words.push_back(std::move(word));
  }
  return words;
}

namespace {
bool unquoted_ok(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '+' || c == '-' ||
         c == '.' || c == '/' || c == ':' || c == '@' || c == ']' || c == '_';
}
}  // namespace

std::string shlex_quote(const std::string& word) {
  if (word.empty()) return "''";
  bool plain = true;
  for (unsigned char c : word) plain = plain && unquoted_ok(c);
  if (plain) return word;
  if (word.find('\'') == std::string::npos) return "'" + word + "'";
  std::string out = "\"";
  for (char c : word) {
    if (c == '"' || c == '\\' || c == '$' || c == '`') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string shlex_join(const std::vector<std::string>& words) {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i) out += ' ';
    out += shlex_quote(words[i]);
  }
  return out;
}

}  // namespace codexd::policy
