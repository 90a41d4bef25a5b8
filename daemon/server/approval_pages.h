// ListApprovals in pages: a response never exceeds the daemon's message limit however many
// (or however large) the pending requests are (docs/api.md "Approvals").
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "codexd/v1/approvals.pb.h"
#include "daemon/orchestrator/approval_types.h"

namespace codexd::server {

// A page holds requests while their encoded size stays within this, and always at least one.
// One request is at most a few MiB (argv or cmd 1 MiB, each shown once or twice, 64 amendment
// tokens of 4 KiB, paths), so a page stays well below the 16 MiB send limit.
inline constexpr size_t kApprovalPageBytes = 4 * 1024 * 1024;

// Fills `out` with the requests of `pending` (oldest first, ordered by created_at then id)
// that come after `page_token`, up to kApprovalPageBytes, and sets next_page_token when more
// remain. INVALID_ARGUMENT for a token that ListApprovals did not make.
Status fill_approval_page(const std::vector<const orchestrator::ApprovalTicket*>& pending, const std::string& page_token,
                          v1::ListApprovalsResponse* out, size_t page_bytes = kApprovalPageBytes);

}  // namespace codexd::server
