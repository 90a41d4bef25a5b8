// What the daemon and its clients must agree on besides the messages: where the socket is by
// default and how a call carries its agent label. Part of the API contract, next to the
// .proto files; linked by both sides as codexd_api (codexd_proto brings it along).
#pragma once

#include <string>

namespace codexd::api {

// gRPC metadata key of the caller's self-declared agent label (display and audit only).
inline constexpr const char* kAgentIdMetadataKey = "x-codexd-agent-id";

// System mode listens here (the systemd socket unit creates /run/codexd).
inline constexpr const char* kSystemSocketPath = "/run/codexd/codexd.sock";

// The user-mode default: $XDG_RUNTIME_DIR/codexd/codexd.sock when XDG_RUNTIME_DIR is an
// absolute path, else /tmp/codexd-$UID/codexd.sock.
std::string default_user_socket_path();

// kSystemSocketPath in system mode, else default_user_socket_path().
std::string default_socket_path(bool system_mode);

}  // namespace codexd::api
