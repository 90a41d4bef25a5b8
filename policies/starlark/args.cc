#include "policies/starlark/args.h"

#include "policies/starlark/value_ops.h"

namespace codexd::starlark {

std::vector<std::optional<Value>> bind_args(const std::string& function_name, CallArgs& args,
                                            std::initializer_list<ParamSpec> params, std::vector<Value>* rest) {
  std::vector<std::optional<Value>> out(params.size());
  size_t n = params.size();
  size_t i = 0;
  for (; i < args.positional.size() && i < n; ++i) out[i] = args.positional[i];
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
      if (name == p.name) break;
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
    if (p.required && !out[k]) throw NativeError{"Missing parameter `" + std::string(p.name) + "` for call to `" + function_name + "`"};
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
