// Methods of strings, lists and dicts (`"a,b".split(",")`, `l.append(x)`, `d.get(k)`).
#pragma once

#include <string>
#include <vector>

#include "policies/starlark/value.h"

namespace codexd::starlark {

class Evaluator;

// A bound method value, or Value::unbound() when the type has no such attribute.
Value bind_method(Evaluator& ev, const Value& receiver, const std::string& name);
// The elements of an iterable (list, tuple, dict keys, range) as a vector.
std::vector<Value> collect_items(Evaluator& ev, const Value& v);
// Sorted attribute names, for dir().
std::vector<std::string> method_names(const Value& receiver);

}  // namespace codexd::starlark
