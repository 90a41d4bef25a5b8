#include "platform/limits/process_group_group.h"

#include <signal.h>

namespace codexd::limits {

void ProcessGroupGroup::prepare(posix::SpawnRequest& request) const {
  request.rlimits.insert(request.rlimits.end(), rlimits_.begin(), rlimits_.end());
}

Status ProcessGroupGroup::signal_all(int signal) {
  if (leader_ <= 1) return Status::Ok();
  return posix::signal_process_group(leader_, signal);
}

Status ProcessGroupGroup::kill_all() { return signal_all(SIGKILL); }

}  // namespace codexd::limits
