#include "policies/starlark/value_ops.h"

#include <unicode/uchar.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "policies/starlark/utf8.h"

namespace codexd::starlark {
namespace {

constexpr int kMaxValueDepth = 200;
// Shared sub-structures make a small heap describe an exponentially large value; these caps
// keep repr and the recursive comparisons linear in what they may produce or visit.
constexpr size_t kMaxReprBytes = 64u << 20;
constexpr uint64_t kMaxVisitedNodes = 20'000'000;
thread_local uint64_t g_visited = 0;

void visit() {
  if (++g_visited > kMaxVisitedNodes) throw NativeError{"value too large to compare or hash"};
}

[[noreturn]] void too_deep() { throw NativeError{"value nesting too deep (limit " + std::to_string(kMaxValueDepth) + ")"}; }

// Codex's repr keeps printable ASCII and alphanumeric characters from U+0100 on; everything
// else (controls, Latin-1 supplement, symbols, emoji) is escaped.
bool keep_raw(uint32_t c) {
  if (c >= 0x20 && c < 0x7F) return true;
  if (c < 0x100) return false;
  if (u_hasBinaryProperty(static_cast<UChar32>(c), UCHAR_ALPHABETIC)) return true;
  int8_t t = u_charType(static_cast<UChar32>(c));
  return t == U_DECIMAL_DIGIT_NUMBER || t == U_LETTER_NUMBER || t == U_OTHER_NUMBER;
}

void repr_into(const Value& v, std::string& out, std::vector<const Object*>& active, int depth);

void repr_sequence(const std::vector<Value>& items, const Object* self, char open, char close, bool tuple,
                   std::string& out, std::vector<const Object*>& active, int depth) {
  for (const Object* a : active) {
    if (a == self) {
      out += open;
      out += "...";
      out += close;
      return;
    }
  }
  active.push_back(self);
  out += open;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ", ";
    repr_into(items[i], out, active, depth + 1);
  }
  if (tuple && items.size() == 1) out += ',';
  out += close;
  active.pop_back();
}

void repr_into(const Value& v, std::string& out, std::vector<const Object*>& active, int depth) {
  if (depth > kMaxValueDepth) too_deep();
  if (out.size() > kMaxReprBytes) throw NativeError{"repr result too large"};
  switch (v.type()) {
    case Type::kString: out += repr_string(str_of(v)); return;
    case Type::kList: repr_sequence(list_of(v)->items, v.as_object(), '[', ']', false, out, active, depth); return;
    case Type::kTuple: repr_sequence(tuple_of(v)->items, v.as_object(), '(', ')', true, out, active, depth); return;
    case Type::kDict: {
      const DictObj* d = dict_of(v);
      for (const Object* a : active) {
        if (a == d) {
          out += "{...}";
          return;
        }
      }
      active.push_back(d);
      out += '{';
      for (size_t i = 0; i < d->entries.size(); ++i) {
        if (i) out += ", ";
        repr_into(d->entries[i].first, out, active, depth + 1);
        out += ": ";
        repr_into(d->entries[i].second, out, active, depth + 1);
      }
      out += '}';
      active.pop_back();
      return;
    }
    default: out += to_str(v); return;
  }
}

void check_hashable_depth(int depth) {
  if (depth > kMaxValueDepth) too_deep();
}

uint64_t mix(uint64_t h, uint64_t x) { return (h ^ x) * 0x100000001b3ULL + 0x9e3779b97f4a7c15ULL; }

uint64_t hash_rec(const Value& v, int depth) {
  check_hashable_depth(depth);
  visit();
  switch (v.type()) {
    case Type::kNone: return 0x5bd1e995;
    case Type::kBool:
    case Type::kInt: return std::hash<int64_t>{}(v.as_int());
    case Type::kFloat: {
      double d = v.as_float();
      if (d == std::floor(d) && std::fabs(d) < 9.2e18) return std::hash<int64_t>{}(static_cast<int64_t>(d));
      return std::hash<double>{}(d);
    }
    case Type::kString: return std::hash<std::string>{}(str_of(v));
    case Type::kTuple: {
      uint64_t h = 0xcbf29ce484222325ULL;
      for (const Value& item : tuple_of(v)->items) h = mix(h, hash_rec(item, depth + 1));
      return h;
    }
    case Type::kFunction:
    case Type::kNative:
    case Type::kBoundMethod:
    case Type::kRange: return std::hash<const void*>{}(v.as_object());
    default: throw NativeError{"Value of type `" + type_name(v) + "` is not hashable"};
  }
}

bool equals_rec(const Value& a, const Value& b, int depth) {
  if (depth > kMaxValueDepth) too_deep();
  visit();
  bool a_num = a.is(Type::kInt) || a.is(Type::kFloat);
  bool b_num = b.is(Type::kInt) || b.is(Type::kFloat);
  if (a_num && b_num) {
    if (a.is(Type::kInt) && b.is(Type::kInt)) return a.as_int() == b.as_int();
    double x = a.is(Type::kInt) ? static_cast<double>(a.as_int()) : a.as_float();
    double y = b.is(Type::kInt) ? static_cast<double>(b.as_int()) : b.as_float();
    return x == y;
  }
  if (a.type() != b.type()) return false;
  switch (a.type()) {
    case Type::kNone: return true;
    case Type::kBool: return a.as_bool() == b.as_bool();
    case Type::kString: return str_of(a) == str_of(b);
    case Type::kList:
    case Type::kTuple: {
      if (a.as_object() == b.as_object()) return true;
      const auto& x = *sequence_items(a);
      const auto& y = *sequence_items(b);
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i) {
        if (!equals_rec(x[i], y[i], depth + 1)) return false;
      }
      return true;
    }
    case Type::kDict: {
      if (a.as_object() == b.as_object()) return true;
      const DictObj* x = dict_of(a);
      const DictObj* y = dict_of(b);
      if (x->entries.size() != y->entries.size()) return false;
      for (const auto& [k, val] : x->entries) {
        auto other = dict_get(*y, k);
        if (!other || !equals_rec(val, *other, depth + 1)) return false;
      }
      return true;
    }
    case Type::kRange: {
      const RangeObj* x = range_of(a);
      const RangeObj* y = range_of(b);
      int64_t n = x->length();
      if (n != y->length()) return false;
      return n == 0 || (x->start == y->start && (n == 1 || x->step == y->step));
    }
    default: return a.as_object() == b.as_object();
  }
}

int compare_rec(const Value& a, const Value& b, const char* op_name, int depth) {
  if (depth > kMaxValueDepth) too_deep();
  visit();
  bool a_num = a.is(Type::kInt) || a.is(Type::kFloat);
  bool b_num = b.is(Type::kInt) || b.is(Type::kFloat);
  if (a_num && b_num) {
    if (a.is(Type::kInt) && b.is(Type::kInt)) return a.as_int() < b.as_int() ? -1 : a.as_int() > b.as_int() ? 1 : 0;
    double x = a.is(Type::kInt) ? static_cast<double>(a.as_int()) : a.as_float();
    double y = b.is(Type::kInt) ? static_cast<double>(b.as_int()) : b.as_float();
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (a.type() == b.type()) {
    switch (a.type()) {
      case Type::kBool: return static_cast<int>(a.as_bool()) - static_cast<int>(b.as_bool());
      case Type::kString: {
        int c = str_of(a).compare(str_of(b));
        return c < 0 ? -1 : c > 0 ? 1 : 0;
      }
      case Type::kList:
      case Type::kTuple: {
        const auto& x = *sequence_items(a);
        const auto& y = *sequence_items(b);
        for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
          int c = compare_rec(x[i], y[i], op_name, depth + 1);
          if (c != 0) return c;
        }
        return x.size() < y.size() ? -1 : x.size() > y.size() ? 1 : 0;
      }
      default: break;
    }
  }
  throw NativeError{std::string("Operation `") + op_name + "` not supported for types `" + type_name(a) + "` and `" +
                    type_name(b) + "`"};
}

}  // namespace

std::string repr_string(std::string_view s) {
  std::string out = "\"";
  size_t i = 0;
  char buf[16];
  while (i < s.size()) {
    uint32_t c = next_code_point(s, i);
    switch (c) {
      case '"': out += "\\\""; continue;
      case '\\': out += "\\\\"; continue;
      case '\n': out += "\\n"; continue;
      case '\r': out += "\\r"; continue;
      case '\t': out += "\\t"; continue;
      default: break;
    }
    if (keep_raw(c)) {
      append_utf8(out, c);
    } else if (c < 0x100) {
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else if (c < 0x10000) {
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      std::snprintf(buf, sizeof buf, "\\U%08x", c);
      out += buf;
    }
  }
  out += '"';
  return out;
}

// Python-style repr: shortest round-trip digits; exponent form outside [1e-4, 1e16).
std::string format_float(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "+inf" : "-inf";
  if (d == 0) return std::signbit(d) ? "-0.0" : "0.0";
  char buf[64];
  int precision = 1;
  for (; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*e", precision - 1, d);
    if (std::strtod(buf, nullptr) == d) break;
  }
  // buf = [-]D.DDDDe[+-]XX
  std::string s(buf);
  bool negative = s[0] == '-';
  if (negative) s.erase(0, 1);
  size_t e_pos = s.find('e');
  int exponent = std::atoi(s.c_str() + e_pos + 1);
  std::string digits;
  for (size_t i = 0; i < e_pos; ++i) {
    if (s[i] != '.') digits += s[i];
  }
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  std::string out = negative ? "-" : "";
  if (exponent >= -5 && exponent < 16) {
    if (exponent >= 0) {
      std::string int_part = digits.substr(0, std::min<size_t>(digits.size(), exponent + 1));
      while (int_part.size() < static_cast<size_t>(exponent + 1)) int_part += '0';
      std::string frac = digits.size() > static_cast<size_t>(exponent + 1) ? digits.substr(exponent + 1) : "0";
      out += int_part + "." + frac;
    } else {
      out += "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  std::snprintf(buf, sizeof buf, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
  out += buf;
  return out;
}

std::string repr(const Value& v) {
  std::string out;
  std::vector<const Object*> active;
  repr_into(v, out, active, 0);
  return out;
}

std::string to_str(const Value& v) {
  switch (v.type()) {
    case Type::kUnbound: return "<unbound>";
    case Type::kNone: return "None";
    case Type::kBool: return v.as_bool() ? "True" : "False";
    case Type::kInt: return std::to_string(v.as_int());
    case Type::kFloat: return format_float(v.as_float());
    case Type::kString: return str_of(v);
    case Type::kList:
    case Type::kTuple:
    case Type::kDict: return repr(v);
    case Type::kFunction: return static_cast<FunctionObj*>(v.as_object())->qualified_name;
    case Type::kNative: return static_cast<NativeObj*>(v.as_object())->name;
    case Type::kBoundMethod: return static_cast<BoundMethodObj*>(v.as_object())->name;
    case Type::kRange: {
      const RangeObj* r = range_of(v);
      if (r->step != 1) return "range(" + std::to_string(r->start) + ", " + std::to_string(r->stop) + ", " + std::to_string(r->step) + ")";
      if (r->start != 0) return "range(" + std::to_string(r->start) + ", " + std::to_string(r->stop) + ")";
      return "range(" + std::to_string(r->stop) + ")";
    }
  }
  return "?";
}

bool equals(const Value& a, const Value& b) {
  g_visited = 0;
  return equals_rec(a, b, 0);
}
int compare(const Value& a, const Value& b, const char* op_name) {
  g_visited = 0;
  return compare_rec(a, b, op_name, 0);
}
uint64_t hash_value(const Value& v) {
  g_visited = 0;
  return hash_rec(v, 0);
}

std::optional<Value> dict_get(const DictObj& d, const Value& key) {
  uint64_t h = hash_value(key);
  auto [begin, end] = d.index.equal_range(h);
  for (auto it = begin; it != end; ++it) {
    const auto& entry = d.entries[it->second];
    if (equals(entry.first, key)) return entry.second;
  }
  return std::nullopt;
}

void dict_set(Heap& heap, DictObj& d, const Value& key, const Value& value) {
  uint64_t h = hash_value(key);
  auto [begin, end] = d.index.equal_range(h);
  for (auto it = begin; it != end; ++it) {
    auto& entry = d.entries[it->second];
    if (equals(entry.first, key)) {
      entry.second = value;
      return;
    }
  }
  heap.charge(2 * sizeof(Value) + 32);
  d.index.emplace(h, static_cast<uint32_t>(d.entries.size()));
  d.entries.emplace_back(key, value);
}

bool dict_remove(DictObj& d, const Value& key, Value* removed) {
  uint64_t h = hash_value(key);
  auto [begin, end] = d.index.equal_range(h);
  for (auto it = begin; it != end; ++it) {
    uint32_t pos = it->second;
    if (!equals(d.entries[pos].first, key)) continue;
    if (removed) *removed = d.entries[pos].second;
    d.entries.erase(d.entries.begin() + pos);
    // Positions after `pos` shifted: rebuild the index (dicts in rules files are small).
    d.index.clear();
    for (uint32_t i = 0; i < d.entries.size(); ++i) d.index.emplace(hash_value(d.entries[i].first), i);
    return true;
  }
  return false;
}

void check_mutable(const ListObj& l) {
  if (l.iterating > 0) throw NativeError{"This operation mutates an iterable for an iterator while iterating."};
}
void check_mutable(const DictObj& d) {
  if (d.iterating > 0) throw NativeError{"This operation mutates an iterable for an iterator while iterating."};
}

std::string describe_for_type_error(const Value& v) { return type_name(v) + " (repr: " + repr(v) + ")"; }

void throw_type_mismatch(const std::string& param, const std::string& expected, const Value& actual) {
  throw NativeError{"Type of parameter `" + param + "` doesn't match, expected `" + expected + "`, actual `" +
                    describe_for_type_error(actual) + "`"};
}

int64_t checked_add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) throw NativeError{"integer overflow (codexd supports 64-bit integers)"};
  return r;
}
int64_t checked_sub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) throw NativeError{"integer overflow (codexd supports 64-bit integers)"};
  return r;
}
int64_t checked_mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) throw NativeError{"integer overflow (codexd supports 64-bit integers)"};
  return r;
}

}  // namespace codexd::starlark
