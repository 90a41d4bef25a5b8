#include "daemon/config/byte_size.h"

#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>

namespace codexd::config {

uint64_t physical_memory_bytes() {
  long pages = ::sysconf(_SC_PHYS_PAGES);
  long page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
}

Result<std::optional<uint64_t>> parse_byte_size(const std::string& text, uint64_t physical_bytes) {
  if (text == "max") return std::optional<uint64_t>();
  const auto bad = [&] {
    return InvalidArgument("must be bytes, \"<n>K|M|G|T\", \"<n>%\" of memory or \"max\" (got \"" + text + "\")");
  };
  char* end = nullptr;
  errno = 0;
  unsigned long long number = std::strtoull(text.c_str(), &end, 10);
  if (end == text.c_str() || errno != 0 || !std::isdigit(static_cast<unsigned char>(text[0]))) return bad();
  std::string unit(end);
  while (!unit.empty() && unit.front() == ' ') unit.erase(0, 1);
  if (unit == "%") {
    if (number == 0 || number > 100) return bad();
    return std::optional<uint64_t>(physical_bytes / 100 * number);
  }
  static constexpr struct {
    const char* names[3];
    unsigned shift;
  } kUnits[] = {{{"", "B", "B"}, 0}, {{"K", "KiB", "KB"}, 10}, {{"M", "MiB", "MB"}, 20},
                {{"G", "GiB", "GB"}, 30}, {{"T", "TiB", "TB"}, 40}};
  for (const auto& u : kUnits) {
    for (const char* name : u.names) {
      if (unit != name) continue;
      if (u.shift > 0 && number > (~0ULL >> u.shift)) return bad();
      return std::optional<uint64_t>(static_cast<uint64_t>(number) << u.shift);
    }
  }
  return bad();
}

}  // namespace codexd::config
