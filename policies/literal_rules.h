// Fast path for the common rules file: nothing but top-level calls of the policy builtins
// (prefix_rule, host_executable, network_rule) whose arguments are string literals, lists of
// them, True or False. Such a file is read in one pass, without tokens, a syntax tree or an
// evaluator, and each call goes through the same builtin as under the evaluator.
//
// Anything else (another statement or expression, a lexical oddity, a failing call, a file
// large enough for the evaluator's budgets to matter) makes it decline, and the caller then
// evaluates the file in full: that gives the same declarations, or the exact error report.
#pragma once

#include <memory>

#include "policies/rule_builtins.h"
#include "policies/starlark/source.h"

namespace codexd::policy {

// Fills *out and returns true when the file is in the literal subset and every call succeeds;
// returns false (with *out unspecified) otherwise.
bool read_literal_rules(const std::shared_ptr<const starlark::SourceFile>& source, FileDeclarations* out);

}  // namespace codexd::policy
