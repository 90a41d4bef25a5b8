// Binary and unary operators, indexing and slicing. Throw NativeError; the evaluator adds
// the location.
#pragma once

#include "policies/starlark/ast.h"
#include "policies/starlark/value.h"

namespace codexd::starlark {

class Evaluator;

Value binary_op(Evaluator& ev, BinaryOp op, const Value& a, const Value& b);
Value unary_op(UnaryOp op, const Value& v);
Value index_value(Evaluator& ev, const Value& object, const Value& index);
void set_index(Evaluator& ev, const Value& object, const Value& index, const Value& value);
Value slice_value(Evaluator& ev, const Value& object, const Value* start, const Value* stop, const Value* step);
bool contains(const Value& container, const Value& item);

}  // namespace codexd::starlark
