// Public entry point of codexd_starlark: evaluate one Starlark module (a rules file) with the
// standard globals plus host-provided builtins. Never throws; errors come back as values.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "policies/starlark/error.h"
#include "policies/starlark/limits.h"
#include "policies/starlark/source.h"
#include "policies/starlark/value.h"

namespace codexd::starlark {

struct Builtin {
  std::string name;
  NativeFunction fn;  // may throw NativeError; gets values valid only during the call
};

struct EvalResult {
  bool ok = false;
  Error error;  // when !ok
};

// Lexes, parses, resolves names statically and runs the module.
EvalResult eval_module(std::shared_ptr<const SourceFile> source, const std::vector<Builtin>& builtins,
                       const EvalLimits& limits = {});

// Codex's lexer drops every raw CR byte (so CRLF files work, and a CR inside a string
// literal disappears too). Apply to file contents before building the SourceFile.
std::string drop_carriage_returns(std::string text);

}  // namespace codexd::starlark
