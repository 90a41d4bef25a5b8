// A small reader for the SBPL subset codexd generates (lists, symbols, "strings",
// #"regex strings", ; comments), so tests can check that a policy is well formed and which
// parameters it refers to without a Mac. It is not Apple's parser; it catches unbalanced
// parentheses, unterminated strings and stray text.
#pragma once

#include <string>
#include <vector>

namespace codexd::sandbox::macos_backend::testing {

struct SbplNode {
  enum class Kind { kList, kSymbol, kString, kRegex } kind = Kind::kList;
  std::string text;               // symbol name or string contents (escapes resolved)
  std::vector<SbplNode> children;  // kList only

  bool is_symbol(const std::string& name) const { return kind == Kind::kSymbol && text == name; }
  // The head symbol of a list ("allow" for (allow ...)), or "".
  std::string head() const;
};

struct SbplReadResult {
  std::vector<SbplNode> forms;  // top-level forms
  std::string error;            // empty when the text parsed
};

SbplReadResult read_sbpl(const std::string& text);

// Every NAME in (param "NAME"), in order of appearance (duplicates kept).
std::vector<std::string> referenced_params(const std::vector<SbplNode>& forms);

}  // namespace codexd::sandbox::macos_backend::testing
