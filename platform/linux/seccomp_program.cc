#include "platform/linux/seccomp_program.h"

#include <fcntl.h>
#include <linux/seccomp.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace codexd::sandbox::linux_backend {
namespace {

constexpr char kMagic[8] = {'C', 'D', 'X', 'B', 'P', 'F', '1', '\0'};

struct Header {
  char magic[8];
  uint32_t command_count;
  uint32_t keeper_count;
};
static_assert(sizeof(Header) == 16);
static_assert(sizeof(sock_filter) == 8);

constexpr size_t kMaxEncodedSize = sizeof(Header) + 2 * kMaxSeccompInstructions * sizeof(sock_filter);

Status refused(const std::string& why) { return InvalidArgument("seccomp program descriptor: " + why); }

Status read_exactly(int fd, void* out, size_t size, off_t offset) {
  auto* bytes = static_cast<char*>(out);
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::pread(fd, bytes + done, size - done, offset + static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return refused(std::string("read: ") + std::strerror(errno));
    if (n == 0) return refused("shorter than it says");
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

}  // namespace

int required_program_seals() { return F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE; }

std::string encode_seccomp_programs(const SeccompPrograms& programs) {
  Header header{};
  std::memcpy(header.magic, kMagic, sizeof kMagic);
  header.command_count = static_cast<uint32_t>(programs.command.size());
  header.keeper_count = static_cast<uint32_t>(programs.keeper.size());
  std::string out(reinterpret_cast<const char*>(&header), sizeof header);
  out.append(reinterpret_cast<const char*>(programs.command.data()), programs.command.size() * sizeof(sock_filter));
  out.append(reinterpret_cast<const char*>(programs.keeper.data()), programs.keeper.size() * sizeof(sock_filter));
  return out;
}

Result<SeccompPrograms> read_seccomp_programs(int fd, bool keeper_expected) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return refused(std::string("fstat: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return refused("not a memfd");
  const int seals = ::fcntl(fd, F_GET_SEALS);
  if (seals < 0) return refused("not a sealable memfd");
  if ((seals & required_program_seals()) != required_program_seals()) return refused("not sealed against changes");
  const auto size = static_cast<size_t>(st.st_size);
  if (size < sizeof(Header) || size > kMaxEncodedSize) return refused("size " + std::to_string(size) + " out of bounds");
  if ((size - sizeof(Header)) % sizeof(sock_filter) != 0) return refused("size not a whole number of instructions");

  Header header{};
  CODEXD_RETURN_IF_ERROR(read_exactly(fd, &header, sizeof header, 0));
  if (std::memcmp(header.magic, kMagic, sizeof kMagic) != 0) return refused("bad magic");
  if (header.command_count == 0 || header.command_count > kMaxSeccompInstructions ||
      header.keeper_count > kMaxSeccompInstructions) {
    return refused("instruction count out of bounds");
  }
  if ((header.keeper_count != 0) != keeper_expected) {
    return refused(keeper_expected ? "no keeper program" : "a keeper program without a keeper");
  }
  const size_t total = size_t{header.command_count} + header.keeper_count;
  if (size != sizeof(Header) + total * sizeof(sock_filter)) return refused("size does not match the counts");

  SeccompPrograms programs;
  programs.command.resize(header.command_count);
  programs.keeper.resize(header.keeper_count);
  const size_t command_bytes = programs.command.size() * sizeof(sock_filter);
  CODEXD_RETURN_IF_ERROR(read_exactly(fd, programs.command.data(), command_bytes, sizeof(Header)));
  if (!programs.keeper.empty()) {
    CODEXD_RETURN_IF_ERROR(read_exactly(fd, programs.keeper.data(), programs.keeper.size() * sizeof(sock_filter),
                                        static_cast<off_t>(sizeof(Header) + command_bytes)));
  }
  return programs;
}

Status load_seccomp_program(const std::vector<sock_filter>& program, UniqueFd* listener) {
  if (program.empty() || program.size() > kMaxSeccompInstructions) return Internal("seccomp: program size out of bounds");
  sock_fprog prog{};
  prog.len = static_cast<unsigned short>(program.size());
  prog.filter = const_cast<sock_filter*>(program.data());
  const unsigned flags = listener != nullptr ? SECCOMP_FILTER_FLAG_NEW_LISTENER : 0U;
  const long rc = ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
  if (rc < 0) return ErrnoStatus("seccomp load", errno);
  if (listener != nullptr) {
    *listener = UniqueFd(static_cast<int>(rc));
    if (::fcntl(listener->get(), F_SETFD, FD_CLOEXEC) != 0) return Internal("seccomp: listener: close-on-exec failed");
  }
  return Status::Ok();
}

}  // namespace codexd::sandbox::linux_backend
