#include "policies/starlark/module.h"

#include <unordered_map>

#include "policies/starlark/builtins.h"
#include "policies/starlark/evaluator.h"
#include "policies/starlark/parser.h"
#include "policies/starlark/resolver.h"

namespace codexd::starlark {

std::string drop_carriage_returns(std::string text) {
  std::erase(text, '\r');
  return text;
}

EvalResult eval_module(std::shared_ptr<const SourceFile> source, const std::vector<Builtin>& builtins,
                       const EvalLimits& limits) {
  EvalResult result;
  const std::string& text = source->text();
  if (text.size() >= 3 && text.compare(0, 3, "\xEF\xBB\xBF") == 0) {
    result.error.kind = ErrorKind::kParse;
    result.error.message = "Parse error: invalid input `\\u{feff}` (a byte order mark is not allowed)";
    result.error.span = {0, 3};
    result.error.source = source;
    return result;
  }
  ParseResult parsed = parse_module(source, limits.parse);
  if (!parsed.ok) {
    result.error = std::move(parsed.error);
    return result;
  }
  try {
    Heap heap(limits.max_heap_bytes);
    std::vector<std::pair<std::string, Value>> globals = standard_globals(heap);
    for (const Builtin& b : builtins) {
      auto* n = heap.make<NativeObj>();
      n->name = b.name;
      n->fn = b.fn;
      globals.emplace_back(b.name, Value::object(Type::kNative, n));
    }
    std::unordered_map<std::string, uint32_t> index;
    std::vector<Value> values;
    for (auto& [name, value] : globals) {
      auto [it, inserted] = index.emplace(name, static_cast<uint32_t>(values.size()));
      if (inserted) {
        values.push_back(value);
      } else {
        values[it->second] = value;  // host builtins override standard ones of the same name
      }
    }
    if (!resolve_module(parsed.module, index, result.error)) return result;
    Evaluator evaluator(parsed.module, std::move(values), limits, heap);
    evaluator.run();
    result.ok = true;
  } catch (Error& e) {
    result.error = std::move(e);
  } catch (NativeError& e) {
    result.error.kind = ErrorKind::kRuntime;
    result.error.message = e.message;
    result.error.source = source;
  } catch (std::bad_alloc&) {
    result.error.kind = ErrorKind::kRuntime;
    result.error.message = "out of memory";
    result.error.source = source;
  }
  return result;
}

}  // namespace codexd::starlark
