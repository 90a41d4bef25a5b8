// Memory sizes in the config: an integer of bytes, or a string "512M", "4 GiB", "50%" (of the
// machine's physical memory) or "max" (no limit).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/status.h"

namespace codexd::config {

// nullopt inside the Result: "max". `physical_bytes` is what "N%" is a share of.
Result<std::optional<uint64_t>> parse_byte_size(const std::string& text, uint64_t physical_bytes);

// The machine's physical memory (sysconf), for "N%".
uint64_t physical_memory_bytes();

}  // namespace codexd::config
