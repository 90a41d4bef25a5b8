#include "policies/starlark/value.h"

#include <string>

namespace codexd::starlark {

int64_t RangeObj::length() const {
  if (step > 0) return start < stop ? (stop - start - 1) / step + 1 : 0;
  return start > stop ? (start - stop - 1) / (-step) + 1 : 0;
}

void Heap::charge(size_t bytes) {
  if (bytes > limit_ || used_ > limit_ - bytes) {
    throw NativeError{"memory budget exceeded (limit " + std::to_string(limit_ >> 20) + " MiB)"};
  }
  used_ += bytes;
}

Value Heap::string(std::string text) {
  auto* s = make<StringObj>(text.size());
  s->text = std::move(text);
  return Value::object(Type::kString, s);
}

Value Heap::list(std::vector<Value> items) {
  auto* l = make<ListObj>(items.size() * sizeof(Value));
  l->items = std::move(items);
  return Value::object(Type::kList, l);
}

Value Heap::tuple(std::vector<Value> items) {
  auto* t = make<TupleObj>(items.size() * sizeof(Value));
  t->items = std::move(items);
  return Value::object(Type::kTuple, t);
}

std::string type_name(const Value& v) {
  switch (v.type()) {
    case Type::kUnbound: return "unbound";
    case Type::kNone: return "NoneType";
    case Type::kBool: return "bool";
    case Type::kInt: return "int";
    case Type::kFloat: return "float";
    case Type::kString: return "string";
    case Type::kList: return "list";
    case Type::kTuple: return "tuple";
    case Type::kDict: return "dict";
    case Type::kFunction:
    case Type::kNative:
    case Type::kBoundMethod: return "function";
    case Type::kRange: return "range";
  }
  return "unknown";
}

bool truthy(const Value& v) {
  switch (v.type()) {
    case Type::kUnbound:
    case Type::kNone: return false;
    case Type::kBool:
    case Type::kInt: return v.as_int() != 0;
    case Type::kFloat: return v.as_float() != 0.0;
    case Type::kString: return !str_of(v).empty();
    case Type::kList: return !list_of(v)->items.empty();
    case Type::kTuple: return !tuple_of(v)->items.empty();
    case Type::kDict: return !dict_of(v)->entries.empty();
    case Type::kRange: return range_of(v)->length() > 0;
    default: return true;
  }
}

const std::vector<Value>* sequence_items(const Value& v) {
  if (v.is(Type::kList)) return &list_of(v)->items;
  if (v.is(Type::kTuple)) return &tuple_of(v)->items;
  return nullptr;
}

}  // namespace codexd::starlark
