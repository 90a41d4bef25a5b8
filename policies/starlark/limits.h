// Resource bounds for evaluating an untrusted rules file.
#pragma once

#include <cstddef>
#include <cstdint>

#include "policies/starlark/parser.h"

namespace codexd::starlark {

struct EvalLimits {
  ParseLimits parse;
  uint64_t max_steps = 20'000'000;        // statements + expressions + per-element native work
  size_t max_heap_bytes = 512u << 20;     // every string/list/dict/frame allocation is charged
  int max_call_depth = 100;               // Codex: "Starlark call stack overflow"
  int max_eval_depth = 1500;              // nested evaluation (calls x expression depth)
};

}  // namespace codexd::starlark
