// create_sandbox_manager: the platform's backend, or a manager that refuses everything but
// danger-full-access where no backend exists yet.
#include "platform/backends/manager_factory.h"

#include "platform/posix/executable_path.h"

#if defined(__linux__)
#include "platform/linux/linux_sandbox_manager.h"
#elif defined(__APPLE__)
#include "platform/macos/seatbelt_sandbox_manager.h"
#endif

namespace codexd::sandbox {
namespace {

class UnavailableSandboxManager final : public SandboxManager {
 public:
  UnavailableSandboxManager() {
    report_.chosen = Backend::kNone;
    report_.warnings.push_back("no sandbox backend for this platform yet");
  }
  const CapabilityReport& capabilities() const override { return report_; }

 protected:
  // Never called: chosen is kNone, so SandboxManager::plan refuses before asking.
  Result<LaunchPlan> plan_confined(const SandboxSpec& spec, const LaunchRequest&) const override {
    return Unavailable("no sandbox backend on this platform can enforce " + std::string(to_string(spec.mode)));
  }
  Result<std::string> resolve_unconfined_executable(const LaunchRequest& request) const override {
    return posix::resolve_executable(request.argv.front(), request.env, request.cwd);
  }

 private:
  CapabilityReport report_;
};

}  // namespace

std::unique_ptr<SandboxManager> create_unavailable_sandbox_manager() {
  return std::make_unique<UnavailableSandboxManager>();
}

std::unique_ptr<SandboxManager> create_sandbox_manager(const SandboxManagerOptions& options) {
#if defined(__linux__)
  return linux_backend::create_linux_sandbox_manager(options);
#elif defined(__APPLE__)
  return macos_backend::create_seatbelt_sandbox_manager(options);
#else
  (void)options;
  return create_unavailable_sandbox_manager();
#endif
}

}  // namespace codexd::sandbox
