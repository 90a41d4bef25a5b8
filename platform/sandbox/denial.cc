// Codex's is_likely_sandbox_denied (sandboxing/src/denial.rs), rule for rule:
// 1. no sandbox or exit 0: false; 2. any of 7 keywords (case-insensitive): true;
// 3. exit 2/126/127: false; 4. Linux sandbox and exit 128+SIGSYS: true; 5. false.
#include <array>
#include <cctype>

#include "platform/sandbox/sandbox.h"

namespace codexd::sandbox {
namespace {

constexpr std::array<std::string_view, 7> kDenialKeywords = {
    "operation not permitted", "permission denied", "read-only file system", "seccomp",
    "sandbox",                 "landlock",          "failed to write file",
};

bool contains_case_insensitive(std::string_view haystack, std::string_view lower_needle) {
  if (lower_needle.size() > haystack.size()) return false;
  for (size_t i = 0; i + lower_needle.size() <= haystack.size(); ++i) {
    size_t k = 0;
    while (k < lower_needle.size() &&
           std::tolower(static_cast<unsigned char>(haystack[i + k])) == lower_needle[k]) {
      ++k;
    }
    if (k == lower_needle.size()) return true;
  }
  return false;
}

bool is_linux_backend(Backend backend) {
  return backend == Backend::kLinuxBwrap || backend == Backend::kLinuxLandlock;
}

}  // namespace

bool is_likely_sandbox_denied(Backend backend, int exit_code, std::string_view output) {
  if (backend == Backend::kNone || exit_code == 0) return false;
  for (std::string_view keyword : kDenialKeywords) {
    if (contains_case_insensitive(output, keyword)) return true;
  }
  if (exit_code == 2 || exit_code == 126 || exit_code == 127) return false;
  // SIGSYS is 31 on Linux; the constant is written out so the rule holds on any build host.
  constexpr int kLinuxSigsys = 31;
  if (is_linux_backend(backend) && exit_code == 128 + kLinuxSigsys) return true;
  return false;
}

}  // namespace codexd::sandbox
