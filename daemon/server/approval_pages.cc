#include "daemon/server/approval_pages.h"

#include <charconv>
#include <chrono>
#include <optional>

#include "daemon/server/proto_convert.h"

namespace codexd::server {
namespace {

// A position in the order: the last request a page held.
struct Cursor {
  int64_t created_ns = 0;
  std::string id;
};

int64_t created_ns(const orchestrator::ApprovalTicket& t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.created_at.time_since_epoch()).count();
}

std::string token_of(const orchestrator::ApprovalTicket& t) { return std::to_string(created_ns(t)) + ":" + t.id; }

std::optional<Cursor> parse_token(const std::string& token) {
  const size_t colon = token.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == token.size() || token.size() > 128) return std::nullopt;
  Cursor c;
  auto [end, ec] = std::from_chars(token.data(), token.data() + colon, c.created_ns);
  if (ec != std::errc() || end != token.data() + colon) return std::nullopt;
  c.id = token.substr(colon + 1);
  return c;
}

bool after(const orchestrator::ApprovalTicket& t, const Cursor& c) {
  const int64_t ns = created_ns(t);
  return ns != c.created_ns ? ns > c.created_ns : t.id > c.id;
}

}  // namespace

Status fill_approval_page(const std::vector<const orchestrator::ApprovalTicket*>& pending, const std::string& page_token,
                          v1::ListApprovalsResponse* out, size_t page_bytes) {
  std::optional<Cursor> cursor;
  if (!page_token.empty()) {
    cursor = parse_token(page_token);
    if (!cursor) return InvalidArgument("`page_token` is not a next_page_token from ListApprovals");
  }
  size_t used = 0;
  const orchestrator::ApprovalTicket* last = nullptr;
  for (const auto* t : pending) {
    if (cursor && !after(*t, *cursor)) continue;
    v1::ApprovalRequest entry;
    fill_approval(*t, &entry);
    const size_t size = entry.ByteSizeLong() + 8;  // + the field's tag and length
    if (last && used + size > page_bytes) {
      out->set_next_page_token(token_of(*last));
      return Status::Ok();
    }
    used += size;
    *out->add_approvals() = std::move(entry);
    last = t;
  }
  return Status::Ok();
}

}  // namespace codexd::server
