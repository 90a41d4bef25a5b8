// Small file operations on cgroup interface files: whole-file reads, one-shot writes, and the
// "key value" lines of memory.events / pids.events / cpu.stat / memory.oom_control.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace codexd::limits::cgroups {

std::optional<std::string> read_small_file(const std::string& path);
// One write(2) of `value` (cgroup files take a value per write). The error names the file.
Status write_small_file(const std::string& path, std::string_view value);
bool path_exists(const std::string& path);

// The value of `key` in "key value\n" lines.
std::optional<uint64_t> keyed_value(std::string_view text, std::string_view key);
// A file holding one number ("max" and unreadable files give nullopt).
std::optional<uint64_t> read_number(const std::string& path);
// The pids listed in a cgroup.procs file.
std::vector<int> read_pids(const std::string& procs_path);

}  // namespace codexd::limits::cgroups
