// The fixed SBPL texts (platform/macos/sbpl/*.sbpl), compiled into the binary so a running
// daemon never reads its sandbox policy from a file someone could edit.
#pragma once

#include <string_view>

namespace codexd::sandbox::macos_backend {

// Deny-by-default base: processes, devices, sysctls, preferences, IPC primitives.
std::string_view base_policy_sbpl();
// Extras appended after (allow network-outbound)/(allow network-inbound) when the network is on.
std::string_view network_policy_sbpl();

}  // namespace codexd::sandbox::macos_backend
