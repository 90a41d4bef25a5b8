#include "policies/starlark/operators.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "policies/starlark/evaluator.h"
#include "policies/starlark/format.h"
#include "policies/starlark/utf8.h"
#include "policies/starlark/value_ops.h"

namespace codexd::starlark {
namespace {

[[noreturn]] void unsupported(BinaryOp op, const Value& a, const Value& b) {
  throw NativeError{std::string("Operation `") + binary_op_symbol(op) + "` not supported for types `" + type_name(a) +
                    "` and `" + type_name(b) + "`"};
}

bool is_number(const Value& v) { return v.is(Type::kInt) || v.is(Type::kFloat); }
double as_double(const Value& v) { return v.is(Type::kInt) ? static_cast<double>(v.as_int()) : v.as_float(); }

Value repeat_string(Evaluator& ev, const std::string& s, int64_t n) {
  if (n <= 0 || s.empty()) return ev.heap().string("");
  if (static_cast<uint64_t>(n) > (SIZE_MAX / 2) / s.size()) throw NativeError{"memory budget exceeded (string too large)"};
  size_t total = s.size() * static_cast<size_t>(n);
  ev.heap().charge(total);
  ev.charge_steps(total / 64);
  std::string out;
  out.reserve(total);
  for (int64_t i = 0; i < n; ++i) out += s;
  return ev.heap().string(std::move(out));
}

std::vector<Value> repeat_items(Evaluator& ev, const std::vector<Value>& items, int64_t n) {
  if (n <= 0 || items.empty()) return {};
  if (static_cast<uint64_t>(n) > (SIZE_MAX / 64) / items.size()) throw NativeError{"memory budget exceeded (list too large)"};
  size_t total = items.size() * static_cast<size_t>(n);
  ev.heap().charge(total * sizeof(Value));
  ev.charge_steps(total / 8);
  std::vector<Value> out;
  out.reserve(total);
  for (int64_t i = 0; i < n; ++i) out.insert(out.end(), items.begin(), items.end());
  return out;
}

std::vector<Value> concat(Evaluator& ev, const std::vector<Value>& a, const std::vector<Value>& b) {
  ev.charge_steps((a.size() + b.size()) / 8);
  std::vector<Value> out;
  out.reserve(a.size() + b.size());
  out.insert(out.end(), a.begin(), a.end());
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

int64_t floor_div(int64_t a, int64_t b) {
  if (a == INT64_MIN && b == -1) throw NativeError{"integer overflow (codexd supports 64-bit integers)"};
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t floor_mod(int64_t a, int64_t b) {
  if (b == -1) return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

// Normalizes a possibly negative index into [0, len); throws when out of range.
int64_t resolve_index(const Value& index, int64_t len) {
  if (!index.is(Type::kInt)) {
    throw NativeError{"Type of parameter `index` doesn't match, expected `int`, actual `" + describe_for_type_error(index) + "`"};
  }
  int64_t i = index.as_int();
  int64_t original = i;
  if (i < 0) i += len;
  if (i < 0 || i >= len) throw NativeError{"Index `" + std::to_string(original) + "` is out of bound"};
  return i;
}

// The arithmetic and bitwise operators, one per operator: numbers first, then the
// sequence/string/dict forms; anything else is `unsupported`.

Value add(Evaluator& ev, const Value& a, const Value& b) {
  Heap& heap = ev.heap();
  if (a.is(Type::kInt) && b.is(Type::kInt)) return Value::integer(checked_add(a.as_int(), b.as_int()));
  if (is_number(a) && is_number(b)) return Value::floating(as_double(a) + as_double(b));
  if (a.is(Type::kString) && b.is(Type::kString)) {
    heap.charge(str_of(a).size() + str_of(b).size());
    ev.charge_steps((str_of(a).size() + str_of(b).size()) / 64);
    return heap.string(str_of(a) + str_of(b));
  }
  if (a.is(Type::kList) && b.is(Type::kList)) return heap.list(concat(ev, list_of(a)->items, list_of(b)->items));
  if (a.is(Type::kTuple) && b.is(Type::kTuple)) return heap.tuple(concat(ev, tuple_of(a)->items, tuple_of(b)->items));
  unsupported(BinaryOp::kAdd, a, b);
}

Value subtract(const Value& a, const Value& b) {
  if (a.is(Type::kInt) && b.is(Type::kInt)) return Value::integer(checked_sub(a.as_int(), b.as_int()));
  if (is_number(a) && is_number(b)) return Value::floating(as_double(a) - as_double(b));
  unsupported(BinaryOp::kSub, a, b);
}

// Numbers, or repetition of a string/list/tuple by an int on either side.
Value multiply(Evaluator& ev, const Value& a, const Value& b) {
  Heap& heap = ev.heap();
  if (a.is(Type::kInt) && b.is(Type::kInt)) return Value::integer(checked_mul(a.as_int(), b.as_int()));
  if (is_number(a) && is_number(b)) return Value::floating(as_double(a) * as_double(b));
  if (a.is(Type::kString) && b.is(Type::kInt)) return repeat_string(ev, str_of(a), b.as_int());
  if (a.is(Type::kInt) && b.is(Type::kString)) return repeat_string(ev, str_of(b), a.as_int());
  if (a.is(Type::kList) && b.is(Type::kInt)) return heap.list(repeat_items(ev, list_of(a)->items, b.as_int()));
  if (a.is(Type::kInt) && b.is(Type::kList)) return heap.list(repeat_items(ev, list_of(b)->items, a.as_int()));
  if (a.is(Type::kTuple) && b.is(Type::kInt)) return heap.tuple(repeat_items(ev, tuple_of(a)->items, b.as_int()));
  if (a.is(Type::kInt) && b.is(Type::kTuple)) return heap.tuple(repeat_items(ev, tuple_of(b)->items, a.as_int()));
  unsupported(BinaryOp::kMul, a, b);
}

Value divide(const Value& a, const Value& b) {
  if (is_number(a) && is_number(b)) {
    if (as_double(b) == 0) throw NativeError{"float division by zero: " + to_str(a) + " / " + to_str(b)};
    return Value::floating(as_double(a) / as_double(b));
  }
  unsupported(BinaryOp::kDiv, a, b);
}

Value floor_divide(const Value& a, const Value& b) {
  if (a.is(Type::kInt) && b.is(Type::kInt)) {
    if (b.as_int() == 0) throw NativeError{"Floor division by zero: " + to_str(a) + " // " + to_str(b)};
    return Value::integer(floor_div(a.as_int(), b.as_int()));
  }
  if (is_number(a) && is_number(b)) {
    if (as_double(b) == 0) throw NativeError{"Cannot divide by zero"};
    return Value::floating(std::floor(as_double(a) / as_double(b)));
  }
  unsupported(BinaryOp::kFloorDiv, a, b);
}

// `%`: string formatting when the left side is a string, else a floored modulo (the
// result takes the sign of the divisor, as in Python).
Value modulo(Evaluator& ev, const Value& a, const Value& b) {
  if (a.is(Type::kString)) return percent_format(ev, str_of(a), b);
  if (a.is(Type::kInt) && b.is(Type::kInt)) {
    if (b.as_int() == 0) throw NativeError{"Modulo by zero: " + to_str(a) + " % " + to_str(b)};
    return Value::integer(floor_mod(a.as_int(), b.as_int()));
  }
  if (is_number(a) && is_number(b)) {
    double y = as_double(b);
    if (y == 0) throw NativeError{"Cannot divide by zero"};
    double r = std::fmod(as_double(a), y);
    if (r != 0 && ((r < 0) != (y < 0))) r += y;
    return Value::floating(r);
  }
  unsupported(BinaryOp::kMod, a, b);
}

// `|`: bitwise or of ints, or a dict union (right side wins, left side's order first).
Value bit_or(Evaluator& ev, const Value& a, const Value& b) {
  if (a.is(Type::kInt) && b.is(Type::kInt)) return Value::integer(a.as_int() | b.as_int());
  if (a.is(Type::kDict) && b.is(Type::kDict)) {
    Heap& heap = ev.heap();
    auto* d = heap.make<DictObj>();
    for (const auto& [k, v] : dict_of(a)->entries) dict_set(heap, *d, k, v);
    for (const auto& [k, v] : dict_of(b)->entries) dict_set(heap, *d, k, v);
    ev.charge_steps(d->entries.size());
    return Value::object(Type::kDict, d);
  }
  unsupported(BinaryOp::kBitOr, a, b);
}

// `<<` / `>>` on 64-bit ints: a left shift that loses bits is an overflow error; a right
// shift by 64 or more leaves only the sign.
Value shift(BinaryOp op, const Value& a, const Value& b) {
  if (!a.is(Type::kInt) || !b.is(Type::kInt)) unsupported(op, a, b);
  int64_t n = b.as_int();
  if (n < 0) throw NativeError{"Negative shift count"};
  if (op == BinaryOp::kShr) return Value::integer(n >= 64 ? (a.as_int() < 0 ? -1 : 0) : a.as_int() >> n);
  if (a.as_int() == 0) return Value::integer(0);
  if (n >= 63 || (a.as_int() > 0 ? a.as_int() > (INT64_MAX >> n) : a.as_int() < (INT64_MIN >> n))) {
    throw NativeError{"integer overflow (codexd supports 64-bit integers)"};
  }
  return Value::integer(static_cast<int64_t>(static_cast<uint64_t>(a.as_int()) << n));
}

// `&` and `^`: ints only.
Value int_bitwise(BinaryOp op, const Value& a, const Value& b) {
  if (!a.is(Type::kInt) || !b.is(Type::kInt)) unsupported(op, a, b);
  return Value::integer(op == BinaryOp::kBitAnd ? a.as_int() & b.as_int() : a.as_int() ^ b.as_int());
}

}  // namespace

bool contains(const Value& container, const Value& item) {
  switch (container.type()) {
    case Type::kList:
    case Type::kTuple:
      for (const Value& v : *sequence_items(container)) {
        if (equals(v, item)) return true;
      }
      return false;
    case Type::kDict: return dict_get(*dict_of(container), item).has_value();
    case Type::kString:
      if (!item.is(Type::kString)) {
        throw NativeError{"Operation `in` not supported for types `" + type_name(item) + "` and `string`"};
      }
      return str_of(container).find(str_of(item)) != std::string::npos;
    case Type::kRange: {
      if (!item.is(Type::kInt)) return false;
      const RangeObj* r = range_of(container);
      int64_t x = item.as_int();
      if (r->step > 0 ? (x < r->start || x >= r->stop) : (x > r->start || x <= r->stop)) return false;
      return (x - r->start) % r->step == 0;
    }
    default:
      throw NativeError{"Operation `in` not supported for types `" + type_name(item) + "` and `" + type_name(container) + "`"};
  }
}

Value binary_op(Evaluator& ev, BinaryOp op, const Value& a, const Value& b) {
  switch (op) {
    case BinaryOp::kEq: return Value::boolean(equals(a, b));
    case BinaryOp::kNe: return Value::boolean(!equals(a, b));
    case BinaryOp::kLt: return Value::boolean(compare(a, b) < 0);
    case BinaryOp::kGt: return Value::boolean(compare(a, b) > 0);
    case BinaryOp::kLe: return Value::boolean(compare(a, b) <= 0);
    case BinaryOp::kGe: return Value::boolean(compare(a, b) >= 0);
    case BinaryOp::kIn: return Value::boolean(contains(b, a));
    case BinaryOp::kNotIn: return Value::boolean(!contains(b, a));
    case BinaryOp::kAdd: return add(ev, a, b);
    case BinaryOp::kSub: return subtract(a, b);
    case BinaryOp::kMul: return multiply(ev, a, b);
    case BinaryOp::kDiv: return divide(a, b);
    case BinaryOp::kFloorDiv: return floor_divide(a, b);
    case BinaryOp::kMod: return modulo(ev, a, b);
    case BinaryOp::kBitAnd:
    case BinaryOp::kBitXor: return int_bitwise(op, a, b);
    case BinaryOp::kBitOr: return bit_or(ev, a, b);
    case BinaryOp::kShl:
    case BinaryOp::kShr: return shift(op, a, b);
  }
  unsupported(op, a, b);
}

Value unary_op(UnaryOp op, const Value& v) {
  const char* symbol = op == UnaryOp::kPlus ? "+" : op == UnaryOp::kMinus ? "-" : "~";
  if (v.is(Type::kInt)) {
    if (op == UnaryOp::kPlus) return v;
    if (op == UnaryOp::kMinus) return Value::integer(checked_sub(0, v.as_int()));
    return Value::integer(~v.as_int());
  }
  if (v.is(Type::kFloat) && op != UnaryOp::kInvert) {
    return op == UnaryOp::kPlus ? v : Value::floating(-v.as_float());
  }
  throw NativeError{std::string("Operation `") + symbol + "` not supported on type `" + type_name(v) + "`"};
}

Value index_value(Evaluator& ev, const Value& object, const Value& index) {
  switch (object.type()) {
    case Type::kList:
    case Type::kTuple: {
      const auto& items = *sequence_items(object);
      return items[resolve_index(index, static_cast<int64_t>(items.size()))];
    }
    case Type::kString: {
      const std::string& s = str_of(object);
      std::vector<uint32_t> cps = code_points(s);
      ev.charge_steps(s.size() / 64);
      uint32_t cp = cps[resolve_index(index, static_cast<int64_t>(cps.size()))];
      std::string out;
      append_utf8(out, cp);
      return ev.heap().string(std::move(out));
    }
    case Type::kDict: {
      auto found = dict_get(*dict_of(object), index);
      if (!found) throw NativeError{"Key `" + repr(index) + "` was not found"};
      return *found;
    }
    case Type::kRange: {
      const RangeObj* r = range_of(object);
      return Value::integer(r->at(resolve_index(index, r->length())));
    }
    default: throw NativeError{"Operation `[]` not supported on type `" + type_name(object) + "`"};
  }
}

void set_index(Evaluator& ev, const Value& object, const Value& index, const Value& value) {
  if (object.is(Type::kList)) {
    ListObj* l = list_of(object);
    check_mutable(*l);
    l->items[resolve_index(index, static_cast<int64_t>(l->items.size()))] = value;
    return;
  }
  if (object.is(Type::kDict)) {
    check_mutable(*dict_of(object));
    dict_set(ev.heap(), *dict_of(object), index, value);
    return;
  }
  if (object.is(Type::kTuple) || object.is(Type::kString)) throw NativeError{"Immutable"};
  throw NativeError{"Operation `[]=` not supported on type `" + type_name(object) + "`"};
}

Value slice_value(Evaluator& ev, const Value& object, const Value* start_v, const Value* stop_v, const Value* step_v) {
  auto as_opt_int = [](const Value* v, const char* what) -> std::optional<int64_t> {
    if (!v || v->is(Type::kNone)) return std::nullopt;
    if (!v->is(Type::kInt)) {
      throw NativeError{std::string("Type of parameter `") + what + "` doesn't match, expected `int`, actual `" +
                        describe_for_type_error(*v) + "`"};
    }
    return v->as_int();
  };
  std::optional<int64_t> start = as_opt_int(start_v, "start"), stop = as_opt_int(stop_v, "stop");
  int64_t step = as_opt_int(step_v, "step").value_or(1);
  if (step == 0) throw NativeError{"Slice step cannot be zero"};

  // Clamped [begin, end) bounds for a sequence of length len, as Python computes them.
  auto bounds = [&](int64_t len) {
    auto clamp = [&](std::optional<int64_t> v, int64_t dflt) -> int64_t {
      if (!v) return dflt;
      int64_t x = *v;
      if (x < 0) x = x < -len ? (step > 0 ? 0 : -1) : x + len;
      if (step > 0) return std::clamp<int64_t>(x, 0, len);
      return std::clamp<int64_t>(x, -1, len - 1);
    };
    return std::pair<int64_t, int64_t>(clamp(start, step > 0 ? 0 : len - 1), clamp(stop, step > 0 ? len : -1));
  };
  auto count_of = [&](std::pair<int64_t, int64_t> be) -> int64_t {
    auto [b, e] = be;
    if (step > 0) return e > b ? (e - b - 1) / step + 1 : 0;
    return b > e ? (b - e - 1) / (-step) + 1 : 0;
  };
  auto indices = [&](int64_t len) {
    auto be = bounds(len);
    int64_t n = count_of(be);
    std::vector<int64_t> out;
    out.reserve(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) out.push_back(be.first + k * step);
    return out;
  };

  switch (object.type()) {
    case Type::kList:
    case Type::kTuple: {
      const auto& items = *sequence_items(object);
      std::vector<Value> out;
      for (int64_t i : indices(static_cast<int64_t>(items.size()))) out.push_back(items[i]);
      ev.charge_steps(out.size() / 8);
      return object.is(Type::kList) ? ev.heap().list(std::move(out)) : ev.heap().tuple(std::move(out));
    }
    case Type::kString: {
      std::vector<uint32_t> cps = code_points(str_of(object));
      std::string out;
      for (int64_t i : indices(static_cast<int64_t>(cps.size()))) append_utf8(out, cps[i]);
      ev.charge_steps(cps.size() / 64);
      return ev.heap().string(std::move(out));
    }
    case Type::kRange: {
      const RangeObj* r = range_of(object);
      auto be = bounds(r->length());
      int64_t n = count_of(be);
      auto* nr = ev.heap().make<RangeObj>();
      nr->step = checked_mul(r->step, step);
      nr->start = n == 0 ? 0 : r->at(be.first);
      nr->stop = n == 0 ? 0 : checked_add(nr->start, checked_mul(n, nr->step));
      if (n == 0) nr->step = 1;
      return Value::object(Type::kRange, nr);
    }
    default: throw NativeError{"Operation `[::]` not supported on type `" + type_name(object) + "`"};
  }
}

}  // namespace codexd::starlark
