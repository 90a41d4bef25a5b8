// Binding call arguments to the parameters of native functions, with Starlark's messages.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "policies/starlark/value.h"

namespace codexd::starlark {

// How an argument may be passed. Most natives of Codex's Starlark (starlark-rust) take
// positional-only parameters, and their errors read differently from the others'.
enum class Pass { kPositional, kEither, kNamed };

struct ParamSpec {
  const char* name;
  bool required = false;
  Pass pass = Pass::kPositional;
};

// Returns one slot per parameter (nullopt when not given). Extra positional arguments are an
// error unless `rest` is non-null, in which case they are moved there. With only
// positional-only parameters (and no `rest`), arity errors are "Wrong number of positional
// arguments, expected N, got M" and any named argument is "extra" (as in Codex).
std::vector<std::optional<Value>> bind_args(const std::string& function_name, CallArgs& args,
                                            std::initializer_list<ParamSpec> params,
                                            std::vector<Value>* rest = nullptr);

// Typed accessors with Codex's "Type of parameter ... doesn't match" errors.
const std::string& expect_string(const std::optional<Value>& v, const char* param);
int64_t expect_int(const std::optional<Value>& v, const char* param);

}  // namespace codexd::starlark
