// Answering approval requests from a terminal (codexctl approvals watch, codexctl exec).
#pragma once

#include <optional>
#include <string>

#include "client/connection.h"
#include "codexd/v1/approvals.grpc.pb.h"

namespace codexd::client {

// A human-readable description of a request: command, directory, reason, rules, sandbox.
std::string describe_approval(const v1::ApprovalRequest& request);

// Asks on `tty_fd` (opened /dev/tty): [y]es once, [s]ession, [r]emember (when the request
// proposes an allow rule), [n]o, [a]bort, or Enter to skip.
// Returns nullopt when skipped, when the terminal closes, or when `wake_fd` becomes readable
// (the request was resolved elsewhere).
std::optional<v1::ReviewDecision> ask_on_terminal(const v1::ApprovalRequest& request, int tty_fd, int wake_fd);

// Sends the answer given on the terminal. A failure (e.g. resolved elsewhere meanwhile) is
// printed as "codexctl: <message>" and the caller carries on.
void send_terminal_answer(v1::Approvals::Stub& stub, const ClientOptions& options, const std::string& approval_id,
                          v1::ReviewDecision decision);

}  // namespace codexd::client
