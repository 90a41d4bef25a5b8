// The whole evaluator on arbitrary programs, with tight limits so each input stays fast.
#include <cstddef>
#include <cstdint>
#include <string>

#include "policies/starlark/module.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  codexd::starlark::EvalLimits limits;
  limits.max_steps = 200000;
  limits.max_heap_bytes = 64u << 20;
  auto source = std::make_shared<codexd::starlark::SourceFile>(
      "fuzz.rules", codexd::starlark::drop_carriage_returns(std::string(reinterpret_cast<const char*>(data), size)));
  codexd::starlark::EvalResult r = codexd::starlark::eval_module(source, {}, limits);
  if (!r.ok) (void)r.error.codex_report();
  return 0;
}
