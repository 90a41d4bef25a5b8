// Recursive-descent parser for the rules-file Starlark dialect. Nesting depth is bounded so a
// hostile file cannot exhaust the stack.
#pragma once

#include <memory>

#include "policies/starlark/ast.h"
#include "policies/starlark/error.h"

namespace codexd::starlark {

struct ParseLimits {
  int max_nesting = 100;  // brackets, operators, blocks and f-string fields combined
};

struct ParseResult {
  bool ok = false;
  ParsedModule module;
  Error error;
};

ParseResult parse_module(std::shared_ptr<const SourceFile> source, const ParseLimits& limits = {});

}  // namespace codexd::starlark
