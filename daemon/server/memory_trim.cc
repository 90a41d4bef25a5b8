#include "daemon/server/memory_trim.h"

#include <unistd.h>

#include <cstdio>

#include <spdlog/spdlog.h>

#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace codexd::server {

uint64_t resident_bytes() {
  FILE* f = std::fopen("/proc/self/statm", "re");
  if (!f) return 0;
  unsigned long long size = 0, resident = 0;
  const int n = std::fscanf(f, "%llu %llu", &size, &resident);
  std::fclose(f);
  return n == 2 ? resident * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE)) : 0;
}

void MemoryTrimmer::start() {
#ifdef __GLIBC__
  rss_after_trim_ = resident_bytes();
  arm();
#endif
}

void MemoryTrimmer::arm() {
  timer_.expires_after(kPeriod);
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || stopped_) return;
    check();
    arm();
  });
}

void MemoryTrimmer::check() {
#ifdef __GLIBC__
  const uint64_t rss = resident_bytes();
  const uint64_t free_bytes = ::mallinfo2().fordblks;
  if (rss < rss_after_trim_) rss_after_trim_ = rss;              // freed by other means (munmap)
  if (free_bytes < free_after_trim_) free_after_trim_ = free_bytes;  // reused since
  if (free_bytes < kMinFreeBytes) return;  // in use, not a leftover peak
  if (rss < rss_after_trim_ + kMinGrowthBytes && free_bytes < free_after_trim_ + kMinGrowthBytes) return;
  ::malloc_trim(0);
  rss_after_trim_ = resident_bytes();
  free_after_trim_ = free_bytes;
  spdlog::debug("returned freed memory to the system: RSS {} MiB -> {} MiB ({} MiB were free in the allocator)",
                rss >> 20, rss_after_trim_ >> 20, free_bytes >> 20);
#endif
}

}  // namespace codexd::server
