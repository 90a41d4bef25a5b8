// Lexer + parser on arbitrary bytes: must return a tree or an error, never crash or hang.
#include <cstddef>
#include <cstdint>
#include <string>

#include "policies/starlark/parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto source = std::make_shared<codexd::starlark::SourceFile>("fuzz.rules", std::string(reinterpret_cast<const char*>(data), size));
  codexd::starlark::ParseResult r = codexd::starlark::parse_module(source);
  if (!r.ok) (void)r.error.codex_report();
  return 0;
}
