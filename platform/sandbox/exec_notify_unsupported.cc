// Exec supervision where the OS offers no way to do it (every platform but Linux).
#include "platform/sandbox/exec_notify.h"

namespace codexd::sandbox {

bool exec_notify_supported() { return false; }

Result<ExecAttempt> receive_exec_attempt(int) { return Unimplemented("exec supervision is Linux-only"); }

Status answer_exec_attempt(int, uint64_t, bool) { return Unimplemented("exec supervision is Linux-only"); }

pid_t parent_pid_of(pid_t) { return 0; }

void tell_process(pid_t, std::string_view) {}

}  // namespace codexd::sandbox
