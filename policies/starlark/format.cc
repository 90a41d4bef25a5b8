#include "policies/starlark/format.h"

#include <cmath>
#include <cstdio>

#include "policies/starlark/evaluator.h"
#include "policies/starlark/value_ops.h"

namespace codexd::starlark {
namespace {

void charge_output(Evaluator& ev, const std::string& out) {
  ev.heap().charge(out.size());
  ev.charge_steps(out.size() / 64);
}

std::string format_number(char conversion, const Value& v) {
  char buf[512];
  if (conversion == 'd' || conversion == 'o' || conversion == 'x' || conversion == 'X') {
    int64_t i;
    if (v.is(Type::kInt)) {
      i = v.as_int();
    } else if (v.is(Type::kFloat) && std::isfinite(v.as_float()) && std::fabs(v.as_float()) < 9.2e18) {
      i = static_cast<int64_t>(v.as_float());
    } else {
      throw NativeError{std::string("Operation `format(%") + conversion + ")` not supported on type `" + type_name(v) + "`"};
    }
    uint64_t magnitude = i < 0 ? 0 - static_cast<uint64_t>(i) : static_cast<uint64_t>(i);
    const char* sign = i < 0 ? "-" : "";
    switch (conversion) {
      case 'd': std::snprintf(buf, sizeof buf, "%s%llu", sign, static_cast<unsigned long long>(magnitude)); break;
      case 'o': std::snprintf(buf, sizeof buf, "%s%llo", sign, static_cast<unsigned long long>(magnitude)); break;
      case 'x': std::snprintf(buf, sizeof buf, "%s%llx", sign, static_cast<unsigned long long>(magnitude)); break;
      default: std::snprintf(buf, sizeof buf, "%s%llX", sign, static_cast<unsigned long long>(magnitude)); break;
    }
    return buf;
  }
  double d;
  if (v.is(Type::kFloat)) {
    d = v.as_float();
  } else if (v.is(Type::kInt)) {
    d = static_cast<double>(v.as_int());
  } else {
    throw NativeError{std::string("Operation `format(%") + conversion + ")` not supported on type `" + type_name(v) + "`"};
  }
  char spec[3] = {'%', conversion, 0};
  std::snprintf(buf, sizeof buf, spec, d);
  return buf;
}

}  // namespace

Value percent_format(Evaluator& ev, const std::string& format, const Value& args) {
  std::vector<Value> values;
  if (args.is(Type::kTuple)) {
    values = tuple_of(args)->items;
  } else {
    values.push_back(args);
  }
  size_t next = 0;
  std::string out;
  for (size_t i = 0; i < format.size(); ++i) {
    char c = format[i];
    if (c != '%') {
      out += c;
      continue;
    }
    if (i + 1 >= format.size()) throw NativeError{"Incomplete format"};
    char conversion = format[++i];
    if (conversion == '%') {
      out += '%';
      continue;
    }
    if (std::string_view("srdoxXeEfFgG").find(conversion) == std::string_view::npos) {
      throw NativeError{std::string("Unsupported format character: '") + conversion + "'"};
    }
    if (next >= values.size()) throw NativeError{"Not enough arguments for format string"};
    const Value& v = values[next++];
    if (conversion == 's') {
      out += to_str(v);
    } else if (conversion == 'r') {
      out += repr(v);
    } else {
      out += format_number(conversion, v);
    }
    if (out.size() > (64u << 20)) throw NativeError{"memory budget exceeded (string too large)"};
  }
  if (next < values.size()) throw NativeError{"Too many arguments for format string"};
  charge_output(ev, out);
  return ev.heap().string(std::move(out));
}

Value str_dot_format(Evaluator& ev, const std::string& format, CallArgs& args) {
  std::string out;
  bool automatic = false, manual = false;
  size_t next = 0;
  for (size_t i = 0; i < format.size(); ++i) {
    char c = format[i];
    if (c == '}') {
      if (i + 1 < format.size() && format[i + 1] == '}') {
        out += '}';
        ++i;
        continue;
      }
      throw NativeError{"Standalone '}' in format string `" + format + "`"};
    }
    if (c != '{') {
      out += c;
      continue;
    }
    if (i + 1 < format.size() && format[i + 1] == '{') {
      out += '{';
      ++i;
      continue;
    }
    size_t close = format.find('}', i);
    if (close == std::string::npos) throw NativeError{"Unmatched '{' in format string `" + format + "`"};
    std::string field = format.substr(i + 1, close - i - 1);
    i = close;
    char conversion = 's';
    size_t bang = field.find('!');
    if (bang != std::string::npos) {
      std::string conv = field.substr(bang + 1);
      if (conv != "r" && conv != "s") throw NativeError{"Invalid format string specifier `" + conv + "`"};
      conversion = conv[0];
      field = field.substr(0, bang);
    }
    if (field.find(':') != std::string::npos) throw NativeError{"Invalid format string specifier `" + field + "`"};
    const Value* value = nullptr;
    if (field.empty()) {
      if (manual) throw NativeError{"Cannot mix manual field specification and automatic field numbering in format string"};
      automatic = true;
      if (next >= args.positional.size()) throw NativeError{"Not enough parameters in format string"};
      value = &args.positional[next++];
    } else if (field.find_first_not_of("0123456789") == std::string::npos) {
      if (automatic) throw NativeError{"Cannot mix manual field specification and automatic field numbering in format string"};
      manual = true;
      size_t index = field.size() > 9 ? SIZE_MAX : std::stoul(field);
      if (index >= args.positional.size()) throw NativeError{"Not enough parameters in format string"};
      value = &args.positional[index];
    } else {
      for (const auto& [name, v] : args.named) {
        if (name == field) value = &v;
      }
      if (!value) throw NativeError{"Keyword argument `" + field + "` was not found in format string"};
    }
    out += conversion == 'r' ? repr(*value) : to_str(*value);
    if (out.size() > (64u << 20)) throw NativeError{"memory budget exceeded (string too large)"};
  }
  charge_output(ev, out);
  return ev.heap().string(std::move(out));
}

}  // namespace codexd::starlark
