#include "platform/linux/remote_memory.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "base/unique_fd.h"

namespace codexd::sandbox::linux_backend {

bool read_remote_string(pid_t pid, uint64_t address, size_t limit, std::string* out) {
  out->clear();
  // /proc/PID/mem rather than process_vm_readv: the metadata keeper's own filter refuses the
  // calls that reach into other processes, and an open of this file is what its Landlock
  // domain and the kernel's ptrace check decide on, as for process_vm_readv.
  UniqueFd memory(::open(("/proc/" + std::to_string(pid) + "/mem").c_str(), O_RDONLY | O_CLOEXEC));
  if (!memory) return false;
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  while (out->size() < limit) {
    size_t chunk = page - (address % page);
    chunk = std::min(chunk, limit - out->size());
    char buffer[4096];
    chunk = std::min(chunk, sizeof buffer);
    const ssize_t n = ::pread(memory.get(), buffer, chunk, static_cast<off_t>(address));
    if (n <= 0) return false;
    const void* nul = std::memchr(buffer, '\0', static_cast<size_t>(n));
    if (nul != nullptr) {
      out->append(buffer, static_cast<const char*>(nul) - buffer);
      return true;
    }
    out->append(buffer, static_cast<size_t>(n));
    address += static_cast<uint64_t>(n);
  }
  return false;
}

}  // namespace codexd::sandbox::linux_backend
