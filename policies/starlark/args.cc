#include "policies/starlark/args.h"

#include "policies/starlark/value_ops.h"

namespace codexd::starlark {

namespace {

std::string extra_named(const CallArgs& args, const std::string& function_name) {
  std::string extra;
  for (const auto& [name, value] : args.named) extra += (extra.empty() ? "`" : ", `") + name + "`";
  return "Found " + extra + " extra named parameter(s) for call to " + function_name;
}

// All parameters positional-only: starlark-rust's fast path and its messages (which call
// the function "function").
std::vector<std::optional<Value>> bind_positional_only(CallArgs& args, std::initializer_list<ParamSpec> params) {
  if (!args.named.empty()) throw NativeError{extra_named(args, "function")};
  size_t required = 0;
  for (const ParamSpec& p : params) required += p.required ? 1 : 0;
  const size_t given = args.positional.size();
  if (given < required || given > params.size()) {
    std::string expected = required == params.size()
                               ? std::to_string(required)
                               : "between " + std::to_string(required) + " and " + std::to_string(params.size());
    throw NativeError{"Wrong number of positional arguments, expected " + expected + ", got " + std::to_string(given)};
  }
  std::vector<std::optional<Value>> out(params.size());
  for (size_t i = 0; i < given; ++i) out[i] = args.positional[i];
  return out;
}

}  // namespace

std::vector<std::optional<Value>> bind_args(const std::string& function_name, CallArgs& args,
                                            std::initializer_list<ParamSpec> params, std::vector<Value>* rest) {
  bool positional_only = rest == nullptr;
  for (const ParamSpec& p : params) positional_only = positional_only && p.pass == Pass::kPositional;
  if (positional_only) return bind_positional_only(args, params);

  std::vector<std::optional<Value>> out(params.size());
  size_t n = params.size();
  size_t positional_slots = 0;
  for (const ParamSpec& p : params) positional_slots += p.pass != Pass::kNamed ? 1 : 0;
  size_t i = 0;
  for (; i < args.positional.size() && i < positional_slots; ++i) out[i] = args.positional[i];
  if (i < args.positional.size()) {
    if (!rest) {
      throw NativeError{"Found " + std::to_string(args.positional.size() - i) +
                        " extra positional argument(s) for call to " + function_name};
    }
    rest->assign(args.positional.begin() + static_cast<std::ptrdiff_t>(i), args.positional.end());
  }
  std::string extra;
  for (auto& [name, value] : args.named) {
    size_t k = 0;
    for (const ParamSpec& p : params) {
      if (name == p.name && p.pass != Pass::kPositional) break;
      ++k;
    }
    if (k == n) {
      extra += (extra.empty() ? "`" : ", `") + name + "`";
      continue;
    }
    if (out[k]) throw NativeError{"Argument `" + name + "` occurs more than once"};
    out[k] = value;
  }
  if (!extra.empty()) throw NativeError{"Found " + extra + " extra named parameter(s) for call to " + function_name};
  size_t k = 0;
  for (const ParamSpec& p : params) {
    if (p.required && !out[k]) {
      throw NativeError{std::string(p.pass == Pass::kPositional ? "Missing positional-only parameter `" : "Missing parameter `") +
                        p.name + "` for call to `" + function_name + "`"};
    }
    ++k;
  }
  return out;
}

const std::string& expect_string(const std::optional<Value>& v, const char* param) {
  if (!v->is(Type::kString)) throw_type_mismatch(param, "str", *v);
  return str_of(*v);
}

int64_t expect_int(const std::optional<Value>& v, const char* param) {
  if (!v->is(Type::kInt)) throw_type_mismatch(param, "int", *v);
  return v->as_int();
}

}  // namespace codexd::starlark
