#include "policies/starlark/methods.h"

#include <unicode/uchar.h>

#include <algorithm>
#include <map>

#include "policies/starlark/args.h"
#include "policies/starlark/evaluator.h"
#include "policies/starlark/format.h"
#include "policies/starlark/utf8.h"
#include "policies/starlark/value_ops.h"

namespace codexd::starlark {
namespace {

using Method = Value (*)(Evaluator&, Value, CallArgs&);

Value str_value(Evaluator& ev, std::string s) {
  ev.charge_steps(s.size() / 64);
  return ev.heap().string(std::move(s));
}

Value strings_list(Evaluator& ev, const std::vector<std::string>& parts) {
  std::vector<Value> items;
  items.reserve(parts.size());
  ev.charge_steps(parts.size());
  for (const std::string& p : parts) items.push_back(ev.heap().string(p));
  return ev.heap().list(std::move(items));
}

bool is_space(uint32_t c) { return c == ' ' || (c >= '\t' && c <= '\r') || (c > 127 && u_isUWhiteSpace(static_cast<UChar32>(c))); }

std::string map_case(const std::string& s, bool upper) {
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    uint32_t c = next_code_point(s, i);
    UChar32 m = upper ? u_toupper(static_cast<UChar32>(c)) : u_tolower(static_cast<UChar32>(c));
    append_utf8(out, static_cast<uint32_t>(m));
  }
  return out;
}

// Characters of `chars` (or whitespace when absent) trimmed from the chosen ends.
std::string strip_impl(const std::string& s, const std::optional<Value>& chars_arg, bool left, bool right) {
  std::vector<uint32_t> cps = code_points(s);
  std::vector<uint32_t> set;
  bool whitespace = !chars_arg || chars_arg->is(Type::kNone);
  if (!whitespace) set = code_points(expect_string(chars_arg, "chars"));
  auto strip_it = [&](uint32_t c) { return whitespace ? is_space(c) : std::find(set.begin(), set.end(), c) != set.end(); };
  size_t b = 0, e = cps.size();
  if (left) {
    while (b < e && strip_it(cps[b])) ++b;
  }
  if (right) {
    while (e > b && strip_it(cps[e - 1])) --e;
  }
  std::string out;
  for (size_t i = b; i < e; ++i) append_utf8(out, cps[i]);
  return out;
}

std::vector<std::string> split_whitespace(const std::string& s, int64_t max_split, bool from_right) {
  std::vector<uint32_t> cps = code_points(s);
  std::vector<std::pair<size_t, size_t>> words;
  size_t i = 0;
  while (i < cps.size()) {
    while (i < cps.size() && is_space(cps[i])) ++i;
    if (i >= cps.size()) break;
    size_t b = i;
    while (i < cps.size() && !is_space(cps[i])) ++i;
    words.emplace_back(b, i);
  }
  auto text = [&](size_t b, size_t e) {
    std::string out;
    for (size_t k = b; k < e; ++k) append_utf8(out, cps[k]);
    return out;
  };
  std::vector<std::string> out;
  if (max_split < 0 || static_cast<size_t>(max_split) >= words.size()) {
    for (auto [b, e] : words) out.push_back(text(b, e));
    return out;
  }
  if (!from_right) {
    for (int64_t k = 0; k < max_split; ++k) out.push_back(text(words[k].first, words[k].second));
    size_t rest = words[max_split].first;
    size_t end = cps.size();
    while (end > rest && is_space(cps[end - 1])) --end;
    out.push_back(text(rest, end));
  } else {
    size_t keep = words.size() - static_cast<size_t>(max_split);
    size_t begin = 0;
    while (begin < cps.size() && is_space(cps[begin])) ++begin;
    out.push_back(text(begin, words[keep - 1].second));
    for (size_t k = keep; k < words.size(); ++k) out.push_back(text(words[k].first, words[k].second));
  }
  return out;
}

std::vector<std::string> split_sep(const std::string& s, const std::string& sep, int64_t max_split, bool from_right) {
  if (sep.empty()) throw NativeError{"Empty separator"};
  std::vector<std::string> out;
  if (!from_right) {
    size_t pos = 0;
    while (max_split < 0 || static_cast<int64_t>(out.size()) < max_split) {
      size_t found = s.find(sep, pos);
      if (found == std::string::npos) break;
      out.push_back(s.substr(pos, found - pos));
      pos = found + sep.size();
    }
    out.push_back(s.substr(pos));
    return out;
  }
  size_t end = s.size();
  std::vector<std::string> reversed;
  while (max_split < 0 || static_cast<int64_t>(reversed.size()) < max_split) {
    if (end < sep.size()) break;
    size_t found = s.rfind(sep, end - sep.size());
    if (found == std::string::npos) break;
    reversed.push_back(s.substr(found + sep.size(), end - found - sep.size()));
    end = found;
  }
  reversed.push_back(s.substr(0, end));
  out.assign(reversed.rbegin(), reversed.rend());
  return out;
}

Value split_method(Evaluator& ev, Value self, CallArgs& args, bool from_right) {
  auto a = bind_args(from_right ? "rsplit" : "split", args, {{"sep"}, {"maxsplit"}});
  int64_t max_split = a[1] && !a[1]->is(Type::kNone) ? expect_int(a[1], "maxsplit") : -1;
  const std::string& s = str_of(self);
  ev.charge_steps(s.size() / 16);
  if (!a[0] || a[0]->is(Type::kNone)) return strings_list(ev, split_whitespace(s, max_split, from_right));
  return strings_list(ev, split_sep(s, expect_string(a[0], "sep"), max_split, from_right));
}

// Byte offsets of a [start, end) code point window, for find/count/startswith.
std::pair<size_t, size_t> window(const std::string& s, const std::optional<Value>& start, const std::optional<Value>& end) {
  std::vector<uint32_t> cps = code_points(s);
  int64_t n = static_cast<int64_t>(cps.size());
  auto norm = [&](const std::optional<Value>& v, int64_t dflt) {
    if (!v || v->is(Type::kNone)) return dflt;
    int64_t x = expect_int(v, "start");
    if (x < 0) x += n;
    return std::clamp<int64_t>(x, 0, n);
  };
  int64_t b = norm(start, 0), e = norm(end, n);
  auto byte_offset = [&](int64_t cp_index) {
    size_t off = 0;
    for (int64_t k = 0; k < cp_index; ++k) off += utf8_sequence_length(static_cast<unsigned char>(s[off]));
    return off;
  };
  if (e < b) e = b;
  return {byte_offset(b), byte_offset(e)};
}

int64_t byte_to_cp_index(const std::string& s, size_t byte) { return static_cast<int64_t>(code_point_count(std::string_view(s).substr(0, byte))); }

Value find_impl(Evaluator& ev, Value self, CallArgs& args, const char* name, bool from_right, bool raise) {
  auto a = bind_args(name, args, {{"needle", true}, {"start"}, {"end"}});
  const std::string& s = str_of(self);
  const std::string& needle = expect_string(a[0], "needle");
  ev.charge_steps(s.size() / 16);
  auto [b, e] = window(s, a[1], a[2]);
  std::string_view hay = std::string_view(s).substr(b, e - b);
  size_t found = from_right ? hay.rfind(needle) : hay.find(needle);
  if (found == std::string_view::npos) {
    if (raise) throw NativeError{"Substring `" + needle + "` not found in `" + s + "`"};
    return Value::integer(-1);
  }
  return Value::integer(byte_to_cp_index(s, b + found));
}

Value affix_impl(Value self, CallArgs& args, const char* name, bool prefix) {
  auto a = bind_args(name, args, {{prefix ? "prefix" : "suffix", true}, {"start"}, {"end"}});
  const std::string& s = str_of(self);
  auto [b, e] = window(s, a[1], a[2]);
  std::string_view hay = std::string_view(s).substr(b, e - b);
  auto test = [&](const std::string& x) {
    return prefix ? hay.substr(0, x.size()) == x : (hay.size() >= x.size() && hay.substr(hay.size() - x.size()) == x);
  };
  if (a[0]->is(Type::kTuple)) {
    for (const Value& v : tuple_of(*a[0])->items) {
      if (!v.is(Type::kString)) throw_type_mismatch(prefix ? "prefix" : "suffix", "str or tuple", v);
      if (test(str_of(v))) return Value::boolean(true);
    }
    return Value::boolean(false);
  }
  if (!a[0]->is(Type::kString)) throw_type_mismatch(prefix ? "prefix" : "suffix", "str or tuple", *a[0]);
  return Value::boolean(test(str_of(*a[0])));
}

template <typename Pred>
Value char_class(Value self, CallArgs& args, const char* name, Pred pred) {
  bind_args(name, args, {});
  const std::string& s = str_of(self);
  if (s.empty()) return Value::boolean(false);
  size_t i = 0;
  while (i < s.size()) {
    if (!pred(static_cast<UChar32>(next_code_point(s, i)))) return Value::boolean(false);
  }
  return Value::boolean(true);
}

// Cased-letter checks: at least one cased character and none of the other case.
Value case_check(Value self, CallArgs& args, const char* name, bool want_upper) {
  bind_args(name, args, {});
  const std::string& s = str_of(self);
  bool cased = false;
  size_t i = 0;
  while (i < s.size()) {
    UChar32 c = static_cast<UChar32>(next_code_point(s, i));
    if (u_isupper(c)) {
      if (!want_upper) return Value::boolean(false);
      cased = true;
    } else if (u_islower(c)) {
      if (want_upper) return Value::boolean(false);
      cased = true;
    }
  }
  return Value::boolean(cased);
}

std::string title_case(const std::string& s) {
  std::string out;
  bool previous_cased = false;
  size_t i = 0;
  while (i < s.size()) {
    UChar32 c = static_cast<UChar32>(next_code_point(s, i));
    bool cased = u_isUAlphabetic(c);
    UChar32 m = cased ? (previous_cased ? u_tolower(c) : u_totitle(c)) : c;
    append_utf8(out, static_cast<uint32_t>(m));
    previous_cased = cased;
  }
  return out;
}

Value iterable_to_vector_error(const Value& v) {
  throw NativeError{"Operation `(iter)` not supported on type `" + type_name(v) + "`"};
}

}  // namespace

std::vector<Value> collect_items(Evaluator& ev, const Value& v) {
  if (const auto* seq = sequence_items(v)) return *seq;
  std::vector<Value> out;
  if (v.is(Type::kDict)) {
    for (const auto& e : dict_of(v)->entries) out.push_back(e.first);
    return out;
  }
  if (v.is(Type::kRange)) {
    const RangeObj* r = range_of(v);
    int64_t n = r->length();
    if (static_cast<uint64_t>(n) > (SIZE_MAX >> 6)) throw NativeError{"memory budget exceeded (range too large)"};
    ev.heap().charge(static_cast<size_t>(n) * sizeof(Value));
    ev.charge_steps(static_cast<uint64_t>(n));
    for (int64_t i = 0; i < n; ++i) out.push_back(Value::integer(r->at(i)));
    return out;
  }
  iterable_to_vector_error(v);
  return out;
}

namespace {

// ---- string methods ----
const std::map<std::string, Method>& string_methods() {
  static const auto* m = new std::map<std::string, Method>{
      {"capitalize", [](Evaluator& ev, Value self, CallArgs& args) {
         bind_args("capitalize", args, {});
         std::vector<uint32_t> cps = code_points(str_of(self));
         std::string out;
         for (size_t i = 0; i < cps.size(); ++i) {
           UChar32 c = static_cast<UChar32>(cps[i]);
           append_utf8(out, static_cast<uint32_t>(i == 0 ? u_toupper(c) : u_tolower(c)));
         }
         return str_value(ev, std::move(out));
       }},
      {"codepoints", [](Evaluator& ev, Value self, CallArgs& args) {
         bind_args("codepoints", args, {});
         std::vector<Value> items;
         for (uint32_t c : code_points(str_of(self))) items.push_back(Value::integer(c));
         ev.charge_steps(items.size());
         return ev.heap().list(std::move(items));
       }},
      {"count", [](Evaluator& ev, Value self, CallArgs& args) {
         auto a = bind_args("count", args, {{"needle", true}, {"start"}, {"end"}});
         const std::string& s = str_of(self);
         const std::string& needle = expect_string(a[0], "needle");
         auto [b, e] = window(s, a[1], a[2]);
         std::string_view hay = std::string_view(s).substr(b, e - b);
         ev.charge_steps(hay.size() / 16);
         int64_t n = 0;
         if (needle.empty()) return Value::integer(static_cast<int64_t>(code_point_count(hay)) + 1);
         for (size_t pos = hay.find(needle); pos != std::string_view::npos; pos = hay.find(needle, pos + needle.size())) ++n;
         return Value::integer(n);
       }},
      {"elems", [](Evaluator& ev, Value self, CallArgs& args) {
         bind_args("elems", args, {});
         std::vector<Value> items;
         std::string s = str_of(self);
         size_t i = 0;
         while (i < s.size()) {
           std::string one;
           append_utf8(one, next_code_point(s, i));
           items.push_back(ev.heap().string(std::move(one)));
         }
         ev.charge_steps(items.size());
         return ev.heap().list(std::move(items));
       }},
      {"endswith", [](Evaluator&, Value self, CallArgs& args) { return affix_impl(self, args, "endswith", false); }},
      {"find", [](Evaluator& ev, Value self, CallArgs& args) { return find_impl(ev, self, args, "find", false, false); }},
      {"format", [](Evaluator& ev, Value self, CallArgs& args) { return str_dot_format(ev, str_of(self), args); }},
      {"index", [](Evaluator& ev, Value self, CallArgs& args) { return find_impl(ev, self, args, "index", false, true); }},
      {"isalnum", [](Evaluator&, Value self, CallArgs& args) { return char_class(self, args, "isalnum", [](UChar32 c) { return u_isalnum(c) != 0; }); }},
      {"isalpha", [](Evaluator&, Value self, CallArgs& args) { return char_class(self, args, "isalpha", [](UChar32 c) { return u_isalpha(c) != 0; }); }},
      {"isdigit", [](Evaluator&, Value self, CallArgs& args) { return char_class(self, args, "isdigit", [](UChar32 c) { return u_isdigit(c) != 0; }); }},
      {"islower", [](Evaluator&, Value self, CallArgs& args) { return case_check(self, args, "islower", false); }},
      {"isspace", [](Evaluator&, Value self, CallArgs& args) { return char_class(self, args, "isspace", [](UChar32 c) { return is_space(static_cast<uint32_t>(c)); }); }},
      {"istitle", [](Evaluator&, Value self, CallArgs& args) {
         bind_args("istitle", args, {});
         const std::string& s = str_of(self);
         bool previous_cased = false, any = false;
         size_t i = 0;
         while (i < s.size()) {
           UChar32 c = static_cast<UChar32>(next_code_point(s, i));
           if (u_isupper(c) || u_istitle(c)) {
             if (previous_cased) return Value::boolean(false);
             previous_cased = any = true;
           } else if (u_islower(c)) {
             if (!previous_cased) return Value::boolean(false);
             previous_cased = any = true;
           } else {
             previous_cased = false;
           }
         }
         return Value::boolean(any);
       }},
      {"isupper", [](Evaluator&, Value self, CallArgs& args) { return case_check(self, args, "isupper", true); }},
      {"join", [](Evaluator& ev, Value self, CallArgs& args) {
         auto a = bind_args("join", args, {{"to_join", true}});
         std::vector<Value> items = collect_items(ev, *a[0]);
         std::string out;
         const std::string& sep = str_of(self);
         for (size_t i = 0; i < items.size(); ++i) {
           if (!items[i].is(Type::kString)) throw_type_mismatch("to_join", "str", items[i]);
           if (i) out += sep;
           out += str_of(items[i]);
           if (out.size() > (64u << 20)) throw NativeError{"memory budget exceeded (string too large)"};
         }
         ev.heap().charge(out.size());
         return str_value(ev, std::move(out));
       }},
      {"lower", [](Evaluator& ev, Value self, CallArgs& args) {
         bind_args("lower", args, {});
         return str_value(ev, map_case(str_of(self), false));
       }},
      {"lstrip", [](Evaluator& ev, Value self, CallArgs& args) {
         auto a = bind_args("lstrip", args, {{"chars"}});
         return str_value(ev, strip_impl(str_of(self), a[0], true, false));
       }},
      {"partition", [](Evaluator& ev, Value self, CallArgs& args) {
         auto a = bind_args("partition", args, {{"needle", true}});
         const std::string& s = str_of(self);
         const std::string& sep = expect_string(a[0], "needle");
         if (sep.empty()) throw NativeError{"Empty separator"};
         size_t pos = s.find(sep);
         Heap& h = ev.heap();
         if (pos == std::string::npos) return h.tuple({h.string(s), h.string(""), h.string("")});
         return h.tuple({h.string(s.substr(0, pos)), h.string(sep), h.string(s.substr(pos + sep.size()))});
       }},
      {"removeprefix", [](Evaluator& ev, Value self, CallArgs& args) {
         auto a = bind_args("removeprefix", args, {{"prefix", true}});
         const std::string& s = str_of(self);
         const std::string& p = expect_string(a[0], "prefix");
         return str_value(ev, s.compare(0, p.size(), p) == 0 ? s.substr(p.size()) : s);
       }},
      {"removesuffix", [](Evaluator& ev, Value self, CallArgs& args) {
         auto a = bind_args("removesuffix", args, {{"suffix", true}});
         const std::string& s = str_of(self);
         const std::string& p = expect_string(a[0], "suffix");
         bool has = s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
         return str_value(ev, has ? s.substr(0, s.size() - p.size()) : s);
       }},
      {"replace", [](Evaluator& ev, Value self, CallArgs& args) {
         auto a = bind_args("replace", args, {{"old", true}, {"new", true}, {"count"}});
         const std::string& s = str_of(self);
         const std::string& from = expect_string(a[0], "old");
         const std::string& to = expect_string(a[1], "new");
         int64_t count = a[2] && !a[2]->is(Type::kNone) ? expect_int(a[2], "count") : -1;
         std::string out;
         size_t pos = 0;
         int64_t done = 0;
         ev.charge_steps(s.size() / 16);
         if (from.empty()) {
           // Python inserts `to` between every character (and at both ends).
           std::vector<uint32_t> cps = code_points(s);
           for (size_t i = 0; i <= cps.size(); ++i) {
             if (count < 0 || done < count) {
               out += to;
               ++done;
             }
             if (i < cps.size()) append_utf8(out, cps[i]);
             if (out.size() > (64u << 20)) throw NativeError{"memory budget exceeded (string too large)"};
           }
           ev.heap().charge(out.size());
           return str_value(ev, std::move(out));
         }
         while (count < 0 || done < count) {
           size_t found = s.find(from, pos);
           if (found == std::string::npos) break;
           out.append(s, pos, found - pos);
           out += to;
           pos = found + from.size();
           ++done;
           if (out.size() > (64u << 20)) throw NativeError{"memory budget exceeded (string too large)"};
         }
         out.append(s, pos, std::string::npos);
         ev.heap().charge(out.size());
         return str_value(ev, std::move(out));
       }},
      {"rfind", [](Evaluator& ev, Value self, CallArgs& args) { return find_impl(ev, self, args, "rfind", true, false); }},
      {"rindex", [](Evaluator& ev, Value self, CallArgs& args) { return find_impl(ev, self, args, "rindex", true, true); }},
      {"rpartition", [](Evaluator& ev, Value self, CallArgs& args) {
         auto a = bind_args("rpartition", args, {{"needle", true}});
         const std::string& s = str_of(self);
         const std::string& sep = expect_string(a[0], "needle");
         if (sep.empty()) throw NativeError{"Empty separator"};
         size_t pos = s.rfind(sep);
         Heap& h = ev.heap();
         if (pos == std::string::npos) return h.tuple({h.string(""), h.string(""), h.string(s)});
         return h.tuple({h.string(s.substr(0, pos)), h.string(sep), h.string(s.substr(pos + sep.size()))});
       }},
      {"rsplit", [](Evaluator& ev, Value self, CallArgs& args) { return split_method(ev, self, args, true); }},
      {"rstrip", [](Evaluator& ev, Value self, CallArgs& args) {
         auto a = bind_args("rstrip", args, {{"chars"}});
         return str_value(ev, strip_impl(str_of(self), a[0], false, true));
       }},
      {"split", [](Evaluator& ev, Value self, CallArgs& args) { return split_method(ev, self, args, false); }},
      {"splitlines", [](Evaluator& ev, Value self, CallArgs& args) {
         auto a = bind_args("splitlines", args, {{"keepends"}});
         bool keep = a[0] && truthy(*a[0]);
         const std::string& s = str_of(self);
         std::vector<std::string> lines;
         size_t begin = 0, i = 0;
         while (i < s.size()) {
           if (s[i] == '\n' || s[i] == '\r') {
             size_t end = i;
             size_t next = i + 1;
             if (s[i] == '\r' && next < s.size() && s[next] == '\n') ++next;
             lines.push_back(s.substr(begin, (keep ? next : end) - begin));
             begin = i = next;
           } else {
             ++i;
           }
         }
         if (begin < s.size()) lines.push_back(s.substr(begin));
         return strings_list(ev, lines);
       }},
      {"startswith", [](Evaluator&, Value self, CallArgs& args) { return affix_impl(self, args, "startswith", true); }},
      {"strip", [](Evaluator& ev, Value self, CallArgs& args) {
         auto a = bind_args("strip", args, {{"chars"}});
         return str_value(ev, strip_impl(str_of(self), a[0], true, true));
       }},
      {"title", [](Evaluator& ev, Value self, CallArgs& args) {
         bind_args("title", args, {});
         return str_value(ev, title_case(str_of(self)));
       }},
      {"upper", [](Evaluator& ev, Value self, CallArgs& args) {
         bind_args("upper", args, {});
         return str_value(ev, map_case(str_of(self), true));
       }},
  };
  return *m;
}

// ---- list methods ----
const std::map<std::string, Method>& list_methods() {
  static const auto* m = new std::map<std::string, Method>{
      {"append", [](Evaluator& ev, Value self, CallArgs& args) {
         auto a = bind_args("append", args, {{"el", true}});
         ListObj* l = list_of(self);
         check_mutable(*l);
         ev.heap().charge(sizeof(Value));
         l->items.push_back(*a[0]);
         return Value::none();
       }},
      {"clear", [](Evaluator&, Value self, CallArgs& args) {
         bind_args("clear", args, {});
         check_mutable(*list_of(self));
         list_of(self)->items.clear();
         return Value::none();
       }},
      {"extend", [](Evaluator& ev, Value self, CallArgs& args) {
         auto a = bind_args("extend", args, {{"other", true}});
         ListObj* l = list_of(self);
         check_mutable(*l);
         std::vector<Value> items = collect_items(ev, *a[0]);
         ev.heap().charge(items.size() * sizeof(Value));
         ev.charge_steps(items.size() / 8);
         l->items.insert(l->items.end(), items.begin(), items.end());
         return Value::none();
       }},
      {"index", [](Evaluator& ev, Value self, CallArgs& args) {
         auto a = bind_args("index", args, {{"needle", true}, {"start"}, {"end"}});
         const auto& items = list_of(self)->items;
         int64_t n = static_cast<int64_t>(items.size());
         auto norm = [&](const std::optional<Value>& v, int64_t dflt) {
           if (!v || v->is(Type::kNone)) return dflt;
           int64_t x = expect_int(v, "start");
           if (x < 0) x += n;
           return std::clamp<int64_t>(x, 0, n);
         };
         int64_t b = norm(a[1], 0), e = norm(a[2], n);
         for (int64_t i = b; i < e; ++i) {
           ev.charge_steps(1);
           if (equals(items[i], *a[0])) return Value::integer(i);
         }
         throw NativeError{"Element '" + to_str(*a[0]) + "' not found in '" + repr(self) + "'"};
       }},
      {"insert", [](Evaluator& ev, Value self, CallArgs& args) {
         auto a = bind_args("insert", args, {{"index", true}, {"el", true}});
         ListObj* l = list_of(self);
         check_mutable(*l);
         int64_t n = static_cast<int64_t>(l->items.size());
         int64_t i = expect_int(a[0], "index");
         if (i < 0) i += n;
         i = std::clamp<int64_t>(i, 0, n);
         ev.heap().charge(sizeof(Value));
         ev.charge_steps(static_cast<uint64_t>(n) / 8);
         l->items.insert(l->items.begin() + i, *a[1]);
         return Value::none();
       }},
      {"pop", [](Evaluator&, Value self, CallArgs& args) {
         auto a = bind_args("pop", args, {{"index"}});
         ListObj* l = list_of(self);
         check_mutable(*l);
         int64_t n = static_cast<int64_t>(l->items.size());
         int64_t i = a[0] ? expect_int(a[0], "index") : -1;
         int64_t original = i;
         if (i < 0) i += n;
         if (i < 0 || i >= n) throw NativeError{"Index `" + std::to_string(original) + "` is out of bound"};
         Value v = l->items[i];
         l->items.erase(l->items.begin() + i);
         return v;
       }},
      {"remove", [](Evaluator& ev, Value self, CallArgs& args) {
         auto a = bind_args("remove", args, {{"needle", true}});
         ListObj* l = list_of(self);
         check_mutable(*l);
         for (size_t i = 0; i < l->items.size(); ++i) {
           ev.charge_steps(1);
           if (equals(l->items[i], *a[0])) {
             l->items.erase(l->items.begin() + static_cast<std::ptrdiff_t>(i));
             return Value::none();
           }
         }
         throw NativeError{"Element '" + to_str(*a[0]) + "' not found in '" + repr(self) + "'"};
       }},
  };
  return *m;
}

// ---- dict methods ----
const std::map<std::string, Method>& dict_methods() {
  static const auto* m = new std::map<std::string, Method>{
      {"clear", [](Evaluator&, Value self, CallArgs& args) {
         bind_args("clear", args, {});
         DictObj* d = dict_of(self);
         check_mutable(*d);
         d->entries.clear();
         d->index.clear();
         return Value::none();
       }},
      {"get", [](Evaluator&, Value self, CallArgs& args) {
         auto a = bind_args("get", args, {{"key", true}, {"default"}});
         auto found = dict_get(*dict_of(self), *a[0]);
         if (found) return *found;
         return a[1] ? *a[1] : Value::none();
       }},
      {"items", [](Evaluator& ev, Value self, CallArgs& args) {
         bind_args("items", args, {});
         std::vector<Value> items;
         for (const auto& [k, v] : dict_of(self)->entries) items.push_back(ev.heap().tuple({k, v}));
         ev.charge_steps(items.size());
         return ev.heap().list(std::move(items));
       }},
      {"keys", [](Evaluator& ev, Value self, CallArgs& args) {
         bind_args("keys", args, {});
         std::vector<Value> items;
         for (const auto& [k, v] : dict_of(self)->entries) items.push_back(k);
         ev.charge_steps(items.size() / 8);
         return ev.heap().list(std::move(items));
       }},
      {"pop", [](Evaluator& ev, Value self, CallArgs& args) {
         auto a = bind_args("pop", args, {{"key", true}, {"default", false, Pass::kEither}});
         DictObj* d = dict_of(self);
         check_mutable(*d);
         ev.charge_steps(d->entries.size());
         Value removed;
         if (dict_remove(*d, *a[0], &removed)) return removed;
         if (a[1]) return *a[1];
         throw NativeError{"Key `" + repr(*a[0]) + "` not found in dictionary `" + repr(self) + "`"};
       }},
      {"popitem", [](Evaluator& ev, Value self, CallArgs& args) {
         bind_args("popitem", args, {});
         DictObj* d = dict_of(self);
         check_mutable(*d);
         if (d->entries.empty()) throw NativeError{"Cannot .popitem() on an empty dictionary"};
         ev.charge_steps(d->entries.size());
         auto entry = d->entries.front();
         dict_remove(*d, entry.first, nullptr);
         return ev.heap().tuple({entry.first, entry.second});
       }},
      {"setdefault", [](Evaluator& ev, Value self, CallArgs& args) {
         auto a = bind_args("setdefault", args, {{"key", true}, {"default"}});
         DictObj* d = dict_of(self);
         auto found = dict_get(*d, *a[0]);
         if (found) return *found;
         check_mutable(*d);
         Value v = a[1] ? *a[1] : Value::none();
         dict_set(ev.heap(), *d, *a[0], v);
         return v;
       }},
      {"update", [](Evaluator& ev, Value self, CallArgs& args) {
         // update(pairs, /, **kwargs): the named arguments are entries too.
         std::vector<std::pair<std::string, Value>> named = std::move(args.named);
         args.named.clear();
         auto a = bind_args("update", args, {{"pairs"}});
         DictObj* d = dict_of(self);
         check_mutable(*d);
         if (a[0]) {
           if (a[0]->is(Type::kDict)) {
             for (const auto& [k, v] : dict_of(*a[0])->entries) dict_set(ev.heap(), *d, k, v);
           } else {
             for (const Value& pair : collect_items(ev, *a[0])) {
               const auto* kv = sequence_items(pair);
               if (!kv || kv->size() != 2) throw NativeError{"dict update sequence element is not a pair"};
               dict_set(ev.heap(), *d, (*kv)[0], (*kv)[1]);
             }
           }
         }
         for (auto& [name, value] : named) dict_set(ev.heap(), *d, ev.heap().string(name), value);
         return Value::none();
       }},
      {"values", [](Evaluator& ev, Value self, CallArgs& args) {
         bind_args("values", args, {});
         std::vector<Value> items;
         for (const auto& [k, v] : dict_of(self)->entries) items.push_back(v);
         ev.charge_steps(items.size() / 8);
         return ev.heap().list(std::move(items));
       }},
  };
  return *m;
}

const std::map<std::string, Method>* methods_for(const Value& v) {
  switch (v.type()) {
    case Type::kString: return &string_methods();
    case Type::kList: return &list_methods();
    case Type::kDict: return &dict_methods();
    default: return nullptr;
  }
}

}  // namespace

Value bind_method(Evaluator& ev, const Value& receiver, const std::string& name) {
  const auto* table = methods_for(receiver);
  if (!table) return Value::unbound();
  auto it = table->find(name);
  if (it == table->end()) return Value::unbound();
  auto* m = ev.heap().make<BoundMethodObj>();
  m->receiver = receiver;
  m->name = name;
  m->method = it->second;
  return Value::object(Type::kBoundMethod, m);
}

std::vector<std::string> method_names(const Value& receiver) {
  std::vector<std::string> out;
  if (const auto* table = methods_for(receiver)) {
    for (const auto& [name, fn] : *table) out.push_back(name);
  }
  return out;
}

}  // namespace codexd::starlark
