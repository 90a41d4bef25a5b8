#include "platform/linux/seccomp_filter.h"

#include <fcntl.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "platform/linux/seccomp_program.h"
#include "platform/linux/seccomp_rules.h"

namespace codexd::sandbox::linux_backend {
namespace {

struct FilterDeleter {
  void operator()(void* ctx) const { seccomp_release(static_cast<scmp_filter_ctx>(ctx)); }
};
using FilterPtr = std::unique_ptr<void, FilterDeleter>;

scmp_arg_cmp to_scmp(const ArgCondition& cond) {
  switch (cond.op) {
    case ArgOp::kEqual: return SCMP_CMP(cond.arg, SCMP_CMP_EQ, cond.value);
    case ArgOp::kNotEqual: return SCMP_CMP(cond.arg, SCMP_CMP_NE, cond.value);
    case ArgOp::kMaskedEqual: return SCMP_CMP(cond.arg, SCMP_CMP_MASKED_EQ, cond.mask, cond.value);
    case ArgOp::kGreater: return SCMP_CMP(cond.arg, SCMP_CMP_GT, cond.value);
  }
  return SCMP_CMP(cond.arg, SCMP_CMP_EQ, cond.value);
}

Status libseccomp_error(const std::string& what, int rc) {
  return Internal("seccomp " + what + ": " + std::strerror(-rc));
}

Result<FilterPtr> build_filter(const HelperConfig& config, FilterRole role) {
  FilterPtr ctx(seccomp_init(SCMP_ACT_ALLOW));
  if (!ctx) return Internal("seccomp_init failed");
  int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
  if (rc != 0) return libseccomp_error("bad-arch action", rc);
  // no_new_privs is set by the caller before this point (and must stay set); let libseccomp
  // set it too rather than fail if the caller forgot.
  rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_CTL_NNP, 1);
  if (rc != 0) return libseccomp_error("no_new_privs attribute", rc);

  for (const SeccompRule& rule : seccomp_rules(config, role)) {
    std::vector<scmp_arg_cmp> conditions;
    for (const ArgCondition& cond : rule.conditions) conditions.push_back(to_scmp(cond));
    const uint32_t action = rule.notify ? SCMP_ACT_NOTIFY : SCMP_ACT_ERRNO(static_cast<uint16_t>(rule.errno_value));
    rc = seccomp_rule_add_array(ctx.get(), action,
                                rule.number, static_cast<unsigned>(conditions.size()),
                                conditions.empty() ? nullptr : conditions.data());
    if (rc != 0) return libseccomp_error(std::string("rule for ") + rule.syscall, rc);
  }
  if (role == FilterRole::kCommand && config.supervise_exec) {
    for (int call : {SCMP_SYS(execve), SCMP_SYS(execveat)}) {
      rc = seccomp_rule_add(ctx.get(), SCMP_ACT_NOTIFY, call, 0);
      if (rc != 0) return libseccomp_error("exec notification rule", rc);
    }
  }
  return ctx;
}

Status build_and_load(const HelperConfig& config, FilterRole role, bool build_only, UniqueFd* listener) {
  CODEXD_ASSIGN_OR_RETURN(FilterPtr ctx, build_filter(config, role));
  if (build_only) return Status::Ok();
  int rc = seccomp_load(ctx.get());
  if (rc != 0) return libseccomp_error("load", rc);
  if (filter_notifies(config, role)) {
    if (listener == nullptr) return Internal("seccomp: a filter with notifications without a place for its listener");
    rc = seccomp_notify_fd(ctx.get());
    if (rc < 0) return libseccomp_error("listener", rc);
    *listener = UniqueFd(rc);
    if (::fcntl(rc, F_SETFD, FD_CLOEXEC) != 0) return Internal("seccomp: listener: close-on-exec failed");
  }
  return Status::Ok();
}

}  // namespace

Status install_seccomp_filter(const HelperConfig& config, bool build_only, UniqueFd* listener) {
  return build_and_load(config, FilterRole::kCommand, build_only, listener);
}

Status install_keeper_filter(const HelperConfig& config) {
  return build_and_load(config, FilterRole::kKeeper, /*build_only=*/false, nullptr);
}

bool filter_notifies(const HelperConfig& config, FilterRole role) {
  return role == FilterRole::kCommand && (config.supervise_exec || config.metadata_keeper);
}

Result<std::vector<sock_filter>> compile_seccomp_program(const HelperConfig& config, FilterRole role) {
  CODEXD_ASSIGN_OR_RETURN(FilterPtr ctx, build_filter(config, role));
  UniqueFd out(::memfd_create("codexd-seccomp-export", MFD_CLOEXEC));
  if (!out) return ErrnoStatus("memfd_create", errno);
  int rc = seccomp_export_bpf(ctx.get(), out.get());
  if (rc != 0) return libseccomp_error("export", rc);
  const off_t size = ::lseek(out.get(), 0, SEEK_CUR);
  if (size <= 0 || size % static_cast<off_t>(sizeof(sock_filter)) != 0 ||
      static_cast<size_t>(size) / sizeof(sock_filter) > kMaxSeccompInstructions) {
    return Internal("seccomp export: unexpected program size " + std::to_string(size));
  }
  std::vector<sock_filter> program(static_cast<size_t>(size) / sizeof(sock_filter));
  if (::pread(out.get(), program.data(), static_cast<size_t>(size), 0) != size) {
    return Internal("seccomp export: short read");
  }
  return program;
}

}  // namespace codexd::sandbox::linux_backend
