// String formatting: the % operator and str.format.
#pragma once

#include <string>

#include "policies/starlark/value.h"

namespace codexd::starlark {

class Evaluator;

Value percent_format(Evaluator& ev, const std::string& format, const Value& args);
Value str_dot_format(Evaluator& ev, const std::string& format, CallArgs& args);

}  // namespace codexd::starlark
