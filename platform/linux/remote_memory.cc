#include "platform/linux/remote_memory.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "base/unique_fd.h"

namespace codexd::sandbox::linux_backend {

namespace {

bool read_string_at(int memory, uint64_t address, size_t limit, std::string* out) {
  out->clear();
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  while (out->size() < limit) {
    size_t chunk = page - (address % page);
    chunk = std::min(chunk, limit - out->size());
    char buffer[4096];
    chunk = std::min(chunk, sizeof buffer);
    const ssize_t n = ::pread(memory, buffer, chunk, static_cast<off_t>(address));
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

}  // namespace

// /proc/PID/mem rather than process_vm_readv: the metadata keeper's own filter refuses the
// calls that reach into other processes, and an open of this file is what its Landlock domain
// and the kernel's ptrace check decide on, as for process_vm_readv.
RemoteMemory::RemoteMemory(pid_t pid)
    : memory_(::open(("/proc/" + std::to_string(pid) + "/mem").c_str(), O_RDONLY | O_CLOEXEC)) {}

bool RemoteMemory::string_at(uint64_t address, size_t limit, std::string* out) const {
  out->clear();
  return ok() && read_string_at(memory_.get(), address, limit, out);
}

bool RemoteMemory::argv_at(uint64_t address, size_t max_words, size_t max_bytes, std::vector<std::string>* argv,
                           bool* truncated) const {
  argv->clear();
  *truncated = false;
  if (!ok()) return false;
  size_t bytes = 0;
  for (size_t i = 0; address != 0; ++i) {
    if (i == max_words) {
      *truncated = true;
      return true;
    }
    uint64_t word = 0;
    const off_t at = static_cast<off_t>(address + i * sizeof word);
    if (::pread(memory_.get(), &word, sizeof word, at) != static_cast<ssize_t>(sizeof word)) return false;
    if (word == 0) return true;
    std::string arg;
    const size_t room = max_bytes - bytes;
    if (!read_string_at(memory_.get(), word, room, &arg)) {
      if (arg.size() < room) return false;  // unreadable, not merely long
      *truncated = true;
      return true;
    }
    bytes += arg.size() + 1;
    argv->push_back(std::move(arg));
  }
  return true;  // argv == NULL: Linux runs the program with an empty argv
}

bool read_remote_string(pid_t pid, uint64_t address, size_t limit, std::string* out) {
  return RemoteMemory(pid).string_at(address, limit, out);
}

}  // namespace codexd::sandbox::linux_backend
