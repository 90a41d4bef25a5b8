// One ApprovalEvent message per pending approval, shared by every reviewer stream that has it
// queued or in flight. A message carries the whole command (argv, its rule matches), so a
// copy per stream made a 1 MB request cost ~19 MB with one reviewer and far more with many
// watchers (issue 19, item 5). Core thread only.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "codexd/v1/approvals.pb.h"
#include "daemon/orchestrator/approval_broker.h"

namespace codexd::server {

class ApprovalEventProtos {
 public:
  // The message for `event`: for kAdded the one every stream shares while any holds it;
  // otherwise (small) a message of its own.
  std::shared_ptr<const v1::ApprovalEvent> message_for(const orchestrator::ApprovalEvent& event);

 private:
  std::map<std::string, std::weak_ptr<const v1::ApprovalEvent>> added_;  // by approval id
};

}  // namespace codexd::server
