#include "platform/linux/seccomp_program_cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "platform/linux/seccomp_filter.h"
#include "platform/linux/seccomp_program.h"

namespace codexd::sandbox::linux_backend {

SeccompRulesKey SeccompRulesKey::of(const HelperConfig& config) {
  return {config.mode, config.network, config.block_unix_sockets, config.supervise_exec, config.metadata_keeper};
}

HelperConfig SeccompRulesKey::config() const {
  HelperConfig config;
  config.mode = mode;
  config.network = network;
  config.block_unix_sockets = block_unix_sockets;
  config.supervise_exec = supervise_exec;
  config.metadata_keeper = metadata_keeper;
  return config;
}

Result<UniqueFd> make_seccomp_program_fd(const HelperConfig& config) {
  SeccompPrograms programs;
  CODEXD_ASSIGN_OR_RETURN(programs.command, compile_seccomp_program(config, FilterRole::kCommand));
  if (config.metadata_keeper) {
    CODEXD_ASSIGN_OR_RETURN(programs.keeper, compile_seccomp_program(config, FilterRole::kKeeper));
  }
  const std::string bytes = encode_seccomp_programs(programs);
  UniqueFd fd(::memfd_create("codexd-seccomp", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!fd) return ErrnoStatus("memfd_create", errno);
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd.get(), bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return ErrnoStatus("seccomp program: write", errno);
    done += static_cast<size_t>(n);
  }
  if (::fcntl(fd.get(), F_ADD_SEALS, required_program_seals()) != 0) return ErrnoStatus("seccomp program: seal", errno);
  return fd;
}

Result<std::shared_ptr<const UniqueFd>> SeccompProgramCache::get(const HelperConfig& config) const {
  const SeccompRulesKey key = SeccompRulesKey::of(config);
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = programs_.find(key);
  if (found != programs_.end()) return found->second;
  // Compiled from the key alone, so that nothing outside it can slip into a shared program.
  CODEXD_ASSIGN_OR_RETURN(UniqueFd fd, make_seccomp_program_fd(key.config()));
  auto program = std::make_shared<const UniqueFd>(std::move(fd));
  programs_.emplace(key, program);
  return program;
}

size_t SeccompProgramCache::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return programs_.size();
}

}  // namespace codexd::sandbox::linux_backend
