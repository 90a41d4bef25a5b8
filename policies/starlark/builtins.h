// The standard Starlark globals available to rules files (len, range, str, sorted, fail...).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "policies/starlark/value.h"

namespace codexd::starlark {

std::vector<std::pair<std::string, Value>> standard_globals(Heap& heap);

}  // namespace codexd::starlark
