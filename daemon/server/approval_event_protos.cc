#include "daemon/server/approval_event_protos.h"

#include "daemon/server/proto_convert.h"

namespace codexd::server {

namespace {
// Expired entries are swept once the map is this large, so it stays near the number of
// approvals that some stream still holds.
constexpr size_t kSweepAt = 64;
}  // namespace

std::shared_ptr<const v1::ApprovalEvent> ApprovalEventProtos::message_for(const orchestrator::ApprovalEvent& event) {
  if (event.kind != orchestrator::ApprovalEvent::Kind::kAdded) {
    auto own = std::make_shared<v1::ApprovalEvent>();
    fill_approval_event(event, own.get());
    return own;
  }
  const std::string& id = event.ticket->id;
  if (auto it = added_.find(id); it != added_.end()) {
    if (auto shared = it->second.lock()) return shared;
  }
  if (added_.size() >= kSweepAt) std::erase_if(added_, [](const auto& entry) { return entry.second.expired(); });
  auto fresh = std::make_shared<v1::ApprovalEvent>();
  fill_approval_event(event, fresh.get());
  added_[id] = fresh;
  return fresh;
}

}  // namespace codexd::server
