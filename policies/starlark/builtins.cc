#include "policies/starlark/builtins.h"

#include <cmath>
#include <cstdlib>

#include "policies/starlark/args.h"
#include "policies/starlark/evaluator.h"
#include "policies/starlark/methods.h"
#include "policies/starlark/utf8.h"
#include "policies/starlark/value_ops.h"

namespace codexd::starlark {
namespace {

// Stable merge sort that tolerates inconsistent comparators (std::sort does not) and lets
// comparison errors propagate.
template <typename Less>
void merge_sort(std::vector<Value>& v, std::vector<Value>& keys, Less less) {
  size_t n = v.size();
  std::vector<Value> tmp_v(n), tmp_k(n);
  for (size_t width = 1; width < n; width *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * width) {
      size_t mid = std::min(lo + width, n), hi = std::min(lo + 2 * width, n);
      size_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) {
        if (less(keys[j], keys[i])) {
          tmp_v[k] = v[j];
          tmp_k[k++] = keys[j++];
        } else {
          tmp_v[k] = v[i];
          tmp_k[k++] = keys[i++];
        }
      }
      while (i < mid) {
        tmp_v[k] = v[i];
        tmp_k[k++] = keys[i++];
      }
      while (j < hi) {
        tmp_v[k] = v[j];
        tmp_k[k++] = keys[j++];
      }
    }
    v.swap(tmp_v);
    keys.swap(tmp_k);
  }
}

Value native(Heap& heap, const std::string& name, NativeFunction fn) {
  auto* n = heap.make<NativeObj>();
  n->name = name;
  n->fn = std::move(fn);
  return Value::object(Type::kNative, n);
}

Value min_max(Evaluator& ev, CallArgs& args, bool is_max) {
  const char* name = is_max ? "max" : "min";
  Value key;
  bool has_key = false;
  for (auto it = args.named.begin(); it != args.named.end();) {
    if (it->first == "key") {
      key = it->second;
      has_key = !key.is(Type::kNone);
      it = args.named.erase(it);
    } else {
      ++it;
    }
  }
  std::vector<Value> rest;
  bind_args(name, args, {}, &rest);
  std::vector<Value> items = rest.size() == 1 ? collect_items(ev, rest[0]) : rest;
  if (items.empty()) {
    // Codex's message names max() for min() too.
    throw NativeError{"Argument is an empty iterable, max() expect a non empty iterable"};
  }
  auto key_of = [&](const Value& v) {
    if (!has_key) return v;
    CallArgs a;
    a.positional.push_back(v);
    return ev.call(key, a);
  };
  Value best = items[0];
  Value best_key = key_of(best);
  for (size_t i = 1; i < items.size(); ++i) {
    ev.charge_steps(1);
    Value k = key_of(items[i]);
    int c = compare(k, best_key, "compare");
    if (is_max ? c > 0 : c < 0) {
      best = items[i];
      best_key = k;
    }
  }
  return best;
}

int64_t parse_int_literal(const std::string& text, int64_t base) {
  std::string s = text;
  bool negative = false;
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  auto fail = [&]() -> int64_t {
    throw NativeError{"Cannot parse `" + text + "` as an integer in base " + std::to_string(base == 0 ? 10 : base)};
  };
  auto has_prefix = [&](char c) { return i + 1 < s.size() && s[i] == '0' && (s[i + 1] | 0x20) == c; };
  if ((base == 16 || base == 0) && has_prefix('x')) {
    base = 16;
    i += 2;
  } else if ((base == 8 || base == 0) && has_prefix('o')) {
    base = 8;
    i += 2;
  } else if ((base == 2 || base == 0) && has_prefix('b')) {
    base = 2;
    i += 2;
  } else if (base == 0) {
    base = 10;
  }
  if (i >= s.size()) fail();
  uint64_t value = 0;
  for (; i < s.size(); ++i) {
    char c = s[i];
    int d = c >= '0' && c <= '9' ? c - '0' : (c | 0x20) >= 'a' && (c | 0x20) <= 'z' ? (c | 0x20) - 'a' + 10 : 99;
    if (d >= base) fail();
    if (value > (static_cast<uint64_t>(INT64_MAX) + 1 - static_cast<uint64_t>(d)) / static_cast<uint64_t>(base)) {
      throw NativeError{"integer overflow (codexd supports 64-bit integers)"};
    }
    value = value * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
  }
  if (!negative && value > static_cast<uint64_t>(INT64_MAX)) throw NativeError{"integer overflow (codexd supports 64-bit integers)"};
  return negative ? static_cast<int64_t>(0 - value) : static_cast<int64_t>(value);
}

}  // namespace

std::vector<std::pair<std::string, Value>> standard_globals(Heap& heap) {
  std::vector<std::pair<std::string, Value>> g;
  auto add = [&](const std::string& name, NativeFunction fn) { g.emplace_back(name, native(heap, name, std::move(fn))); };

  g.emplace_back("True", Value::boolean(true));
  g.emplace_back("False", Value::boolean(false));
  g.emplace_back("None", Value::none());

  add("abs", [](Evaluator&, CallArgs& args) {
    auto a = bind_args("abs", args, {{"x", true}});
    if (a[0]->is(Type::kInt)) return Value::integer(checked_sub(0, 0) + (a[0]->as_int() < 0 ? checked_sub(0, a[0]->as_int()) : a[0]->as_int()));
    if (a[0]->is(Type::kFloat)) return Value::floating(std::fabs(a[0]->as_float()));
    throw_type_mismatch("x", "int or float", *a[0]);
  });
  add("all", [](Evaluator& ev, CallArgs& args) {
    auto a = bind_args("all", args, {{"x", true}});
    for (const Value& v : collect_items(ev, *a[0])) {
      if (!truthy(v)) return Value::boolean(false);
    }
    return Value::boolean(true);
  });
  add("any", [](Evaluator& ev, CallArgs& args) {
    auto a = bind_args("any", args, {{"x", true}});
    for (const Value& v : collect_items(ev, *a[0])) {
      if (truthy(v)) return Value::boolean(true);
    }
    return Value::boolean(false);
  });
  add("bool", [](Evaluator&, CallArgs& args) {
    auto a = bind_args("bool", args, {{"x"}});
    return Value::boolean(a[0] && truthy(*a[0]));
  });
  add("chr", [](Evaluator& ev, CallArgs& args) {
    auto a = bind_args("chr", args, {{"i", true}});
    int64_t i = expect_int(a[0], "i");
    if (i < 0) throw NativeError{"chr() parameter value negative integer " + std::to_string(i)};
    if (i > 0x10FFFF || (i >= 0xD800 && i <= 0xDFFF)) {
      throw NativeError{"chr() parameter value is " + std::to_string(i) + " which is not a valid UTF-8 codepoint"};
    }
    std::string out;
    append_utf8(out, static_cast<uint32_t>(i));
    return ev.heap().string(std::move(out));
  });
  add("dict", [](Evaluator& ev, CallArgs& args) {
    std::vector<std::pair<std::string, Value>> named = std::move(args.named);
    args.named.clear();
    auto a = bind_args("dict", args, {{"pairs"}});
    auto* d = ev.heap().make<DictObj>();
    if (a[0]) {
      if (a[0]->is(Type::kDict)) {
        for (const auto& [k, v] : dict_of(*a[0])->entries) dict_set(ev.heap(), *d, k, v);
      } else {
        for (const Value& pair : collect_items(ev, *a[0])) {
          const auto* kv = sequence_items(pair);
          if (!kv || kv->size() != 2) throw NativeError{"dict() sequence element is not a pair: " + repr(pair)};
          dict_set(ev.heap(), *d, (*kv)[0], (*kv)[1]);
        }
      }
    }
    for (auto& [k, v] : named) dict_set(ev.heap(), *d, ev.heap().string(k), v);
    return Value::object(Type::kDict, d);
  });
  add("dir", [](Evaluator& ev, CallArgs& args) {
    auto a = bind_args("dir", args, {{"x", true}});
    std::vector<Value> names;
    for (const std::string& n : method_names(*a[0])) names.push_back(ev.heap().string(n));
    return ev.heap().list(std::move(names));
  });
  add("enumerate", [](Evaluator& ev, CallArgs& args) {
    auto a = bind_args("enumerate", args, {{"it", true}, {"start", false, Pass::kEither}});
    int64_t start = a[1] ? expect_int(a[1], "start") : 0;
    std::vector<Value> out;
    for (const Value& v : collect_items(ev, *a[0])) {
      out.push_back(ev.heap().tuple({Value::integer(start), v}));
      start = checked_add(start, 1);
    }
    ev.charge_steps(out.size());
    return ev.heap().list(std::move(out));
  });
  add("fail", [](Evaluator&, CallArgs& args) -> Value {
    std::string message;
    const std::string sep = " ";
    std::string extra;
    for (auto& [name, v] : args.named) extra += (extra.empty() ? "`" : ", `") + name + "`";
    if (!extra.empty()) throw NativeError{"Found " + extra + " extra named parameter(s) for call to fail"};
    for (size_t i = 0; i < args.positional.size(); ++i) {
      if (i) message += sep;
      message += to_str(args.positional[i]);
    }
    throw NativeError{"fail: " + message};
  });
  add("float", [](Evaluator&, CallArgs& args) {
    auto a = bind_args("float", args, {{"a"}});
    if (!a[0]) return Value::floating(0);
    const Value& v = *a[0];
    if (v.is(Type::kFloat)) return v;
    if (v.is(Type::kInt) || v.is(Type::kBool)) return Value::floating(static_cast<double>(v.as_int()));
    if (v.is(Type::kString)) {
      const std::string& s = str_of(v);
      std::string lower;
      for (char c : s) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (lower == "inf" || lower == "+inf" || lower == "infinity" || lower == "+infinity") return Value::floating(INFINITY);
      if (lower == "-inf" || lower == "-infinity") return Value::floating(-INFINITY);
      if (lower == "nan" || lower == "+nan" || lower == "-nan") return Value::floating(NAN);
      char* end = nullptr;
      double d = std::strtod(s.c_str(), &end);
      bool ok = !s.empty() && end == s.c_str() + s.size() && (std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '.' || s[0] == '-' || s[0] == '+');
      if (!ok || lower.find("x") != std::string::npos || lower.find("inf") != std::string::npos || lower.find("nan") != std::string::npos) {
        throw NativeError{"Cannot parse `" + s + "` as a float"};
      }
      return Value::floating(d);
    }
    throw_type_mismatch("a", "str or int or float", v);
  });
  add("getattr", [](Evaluator& ev, CallArgs& args) {
    auto a = bind_args("getattr", args, {{"x", true}, {"name", true}, {"default"}});
    const std::string& name = expect_string(a[1], "name");
    Value m = bind_method(ev, *a[0], name);
    if (!m.is(Type::kUnbound)) return m;
    if (a[2]) return *a[2];
    throw NativeError{"Operation `." + name + "` not supported on type `" + type_name(*a[0]) + "`"};
  });
  add("hasattr", [](Evaluator& ev, CallArgs& args) {
    auto a = bind_args("hasattr", args, {{"x", true}, {"name", true}});
    const std::string& name = expect_string(a[1], "name");
    return Value::boolean(!bind_method(ev, *a[0], name).is(Type::kUnbound));
  });
  add("hash", [](Evaluator&, CallArgs& args) {
    auto a = bind_args("hash", args, {{"a", true}});
    const std::string& s = expect_string(a[0], "a");
    // Java-style String.hashCode over UTF-16 code units, as starlark-rust does, truncated to int32.
    int32_t h = 0;
    size_t i = 0;
    while (i < s.size()) {
      uint32_t c = next_code_point(s, i);
      if (c >= 0x10000) {
        c -= 0x10000;
        h = static_cast<int32_t>(31u * static_cast<uint32_t>(h) + (0xD800 + (c >> 10)));
        h = static_cast<int32_t>(31u * static_cast<uint32_t>(h) + (0xDC00 + (c & 0x3FF)));
      } else {
        h = static_cast<int32_t>(31u * static_cast<uint32_t>(h) + c);
      }
    }
    return Value::integer(h);
  });
  add("int", [](Evaluator&, CallArgs& args) {
    auto a = bind_args("int", args, {{"a"}, {"base", false, Pass::kEither}});
    if (!a[0]) return Value::integer(0);
    const Value& v = *a[0];
    if (v.is(Type::kString)) {
      int64_t base = a[1] ? expect_int(a[1], "base") : 10;
      if (base != 0 && (base < 2 || base > 36)) throw NativeError{"int() base must be >= 2 and <= 36"};
      return Value::integer(parse_int_literal(str_of(v), base));
    }
    if (a[1]) throw NativeError{"int() cannot convert non-string with explicit base"};
    if (v.is(Type::kInt) || v.is(Type::kBool)) return Value::integer(v.as_int());
    if (v.is(Type::kFloat)) {
      double d = v.as_float();
      if (!std::isfinite(d)) throw NativeError{"Cannot convert float `" + format_float(d) + "` to integer"};
      if (std::fabs(d) >= 9.2e18) throw NativeError{"integer overflow (codexd supports 64-bit integers)"};
      return Value::integer(static_cast<int64_t>(d));
    }
    throw_type_mismatch("a", "str or int or float", v);
  });
  add("len", [](Evaluator&, CallArgs& args) {
    auto a = bind_args("len", args, {{"x", true}});
    const Value& v = *a[0];
    switch (v.type()) {
      case Type::kString: return Value::integer(static_cast<int64_t>(code_point_count(str_of(v))));
      case Type::kList:
      case Type::kTuple: return Value::integer(static_cast<int64_t>(sequence_items(v)->size()));
      case Type::kDict: return Value::integer(static_cast<int64_t>(dict_of(v)->entries.size()));
      case Type::kRange: return Value::integer(range_of(v)->length());
      default: throw NativeError{"Operation `len()` not supported on type `" + type_name(v) + "`"};
    }
  });
  add("list", [](Evaluator& ev, CallArgs& args) {
    auto a = bind_args("list", args, {{"x"}});
    if (!a[0]) return ev.heap().list({});
    return ev.heap().list(collect_items(ev, *a[0]));
  });
  add("max", [](Evaluator& ev, CallArgs& args) { return min_max(ev, args, true); });
  add("min", [](Evaluator& ev, CallArgs& args) { return min_max(ev, args, false); });
  add("ord", [](Evaluator&, CallArgs& args) {
    auto a = bind_args("ord", args, {{"a", true}});
    const std::string& s = expect_string(a[0], "a");
    if (code_point_count(s) != 1) throw NativeError{"ord(): " + repr(*a[0]) + " is not a single character string"};
    size_t i = 0;
    return Value::integer(next_code_point(s, i));
  });
  add("range", [](Evaluator& ev, CallArgs& args) {
    auto a = bind_args("range", args, {{"a1", true}, {"a2"}, {"step"}});
    auto* r = ev.heap().make<RangeObj>();
    int64_t first = expect_int(a[0], "a1");
    if (a[1]) {
      r->start = first;
      r->stop = expect_int(a[1], "a2");
    } else {
      r->stop = first;
    }
    r->step = a[2] ? expect_int(a[2], "step") : 1;
    if (r->step == 0) throw NativeError{"Range step is zero"};
    if (r->step == INT64_MIN) throw NativeError{"integer overflow (codexd supports 64-bit integers)"};
    // length() must not overflow: keep the span representable.
    checked_sub(r->stop, r->start);
    return Value::object(Type::kRange, r);
  });
  add("repr", [](Evaluator& ev, CallArgs& args) {
    auto a = bind_args("repr", args, {{"a", true}});
    std::string s = repr(*a[0]);
    ev.heap().charge(s.size());
    return ev.heap().string(std::move(s));
  });
  add("reversed", [](Evaluator& ev, CallArgs& args) {
    auto a = bind_args("reversed", args, {{"a", true}});
    std::vector<Value> items = collect_items(ev, *a[0]);
    std::reverse(items.begin(), items.end());
    return ev.heap().list(std::move(items));
  });
  add("sorted", [](Evaluator& ev, CallArgs& args) {
    auto a = bind_args("sorted", args, {{"x", true}, {"key", false, Pass::kNamed}, {"reverse", false, Pass::kNamed}});
    std::vector<Value> items = collect_items(ev, *a[0]);
    std::vector<Value> keys = items;
    if (a[1] && !a[1]->is(Type::kNone)) {
      for (Value& k : keys) {
        CallArgs call_args;
        call_args.positional.push_back(k);
        k = ev.call(*a[1], call_args);
      }
    }
    bool reverse = a[2] && truthy(*a[2]);
    size_t n = items.size();
    uint64_t log_n = 1;
    while ((1ull << log_n) < n) ++log_n;
    ev.charge_steps(n * log_n);
    merge_sort(items, keys, [&](const Value& x, const Value& y) {
      return reverse ? compare(y, x, "cmp()") < 0 : compare(x, y, "cmp()") < 0;
    });
    return ev.heap().list(std::move(items));
  });
  add("str", [](Evaluator& ev, CallArgs& args) {
    auto a = bind_args("str", args, {{"a", true}});
    if (a[0]->is(Type::kString)) return *a[0];
    std::string s = to_str(*a[0]);
    ev.heap().charge(s.size());
    return ev.heap().string(std::move(s));
  });
  add("tuple", [](Evaluator& ev, CallArgs& args) {
    auto a = bind_args("tuple", args, {{"a"}});
    if (!a[0]) return ev.heap().tuple({});
    return ev.heap().tuple(collect_items(ev, *a[0]));
  });
  add("type", [](Evaluator& ev, CallArgs& args) {
    auto a = bind_args("type", args, {{"a", true}});
    return ev.heap().string(type_name(*a[0]));
  });
  add("zip", [](Evaluator& ev, CallArgs& args) {
    std::vector<Value> rest;
    bind_args("zip", args, {}, &rest);
    std::vector<std::vector<Value>> columns;
    size_t n = SIZE_MAX;
    for (const Value& v : rest) {
      columns.push_back(collect_items(ev, v));
      n = std::min(n, columns.back().size());
    }
    if (columns.empty()) n = 0;
    std::vector<Value> out;
    for (size_t i = 0; i < n; ++i) {
      std::vector<Value> row;
      for (const auto& c : columns) row.push_back(c[i]);
      out.push_back(ev.heap().tuple(std::move(row)));
    }
    ev.charge_steps(out.size());
    return ev.heap().list(std::move(out));
  });
  return g;
}

}  // namespace codexd::starlark
