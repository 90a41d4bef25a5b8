// Errors produced while loading a Starlark module. Every error has a location; errors raised
// while calls were active also carry the call stack (rendered as a Codex-style traceback).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "policies/starlark/source.h"

namespace codexd::starlark {

enum class ErrorKind {
  kParse,    // lexer/parser: "Parse error: ..."
  kResolve,  // static name resolution: "Variable `x` not found"
  kRuntime,  // evaluation errors, fail(), limits
};

struct CallFrame {
  Span call_site;            // the call expression
  std::string caller_name;   // "<module>" or the enclosing function's name
};

struct Error {
  ErrorKind kind = ErrorKind::kRuntime;
  std::string message;
  Span span;
  std::vector<CallFrame> traceback;  // outermost first
  std::shared_ptr<const SourceFile> source;

  // "file:line:col: message"
  std::string located_message() const;
  // The body of Codex's report: "starlark error: [Traceback...]error: msg\n --> file:l:c\n..."
  std::string codex_report() const;
};

}  // namespace codexd::starlark
