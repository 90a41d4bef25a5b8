// Static name resolution (Starlark scoping): every identifier is bound to a local, enclosing,
// module or global slot before anything runs. An unknown name is an error even in dead code,
// and a module-level assignment to a builtin's name makes every use of that name refer to the
// (possibly not yet assigned) module variable.
#pragma once

#include <string>
#include <unordered_map>

#include "policies/starlark/ast.h"
#include "policies/starlark/error.h"

namespace codexd::starlark {

// Resolves `module` in place. `global_index` maps predeclared names to their index.
// Returns false and fills `error` on the first unknown name.
bool resolve_module(ParsedModule& module, const std::unordered_map<std::string, uint32_t>& global_index, Error& error);

}  // namespace codexd::starlark
