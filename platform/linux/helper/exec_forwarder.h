// The keeper's half of exec supervision (docs/sandbox.md §4b): the sandbox filter's one
// seccomp listener is the keeper's, so each execve/execveat notification reaches it. It reads
// what the process asks to run (its path, argv and cwd, through /proc as the sandbox sees
// them), sends the daemon an ExecRecord with the process's pidfd over the exec relay
// (platform/sandbox/exec_relay.h), and answers the wait when the daemon's verdict comes. The
// process waits meanwhile, so the daemon reads its parent and pid while it exists. In audit
// mode it waits at most kAuditWait: with no daemon to answer (a restart, a crash) the exec
// goes on after that, unrecorded if no daemon reads it later. A record the relay cannot take
// yet is queued; without a daemon that will ever read (the relay closed), enforce refuses and
// audit lets go.
#pragma once

#include <linux/seccomp.h>

#include <chrono>
#include <deque>
#include <map>
#include <string>

#include "base/unique_fd.h"

namespace codexd::sandbox::linux_backend {

class ExecForwarder {
 public:
  static constexpr std::chrono::milliseconds kAuditWait{500};

  // `relay`: the keeper's end of the exec relay (made non-blocking here).
  ExecForwarder(UniqueFd relay, bool audit_only);

  int relay() const { return relay_.get(); }
  // Poll events the relay needs now: POLLIN, plus POLLOUT while records wait to be sent.
  short wanted_events() const;
  // An execve or execveat notification just received from `listener`.
  void on_exec(int listener, const seccomp_notif& notification);
  // The relay is readable (verdicts, or the daemon's side closed) or writable.
  void on_relay(int listener, short revents);
  // Milliseconds until the first audit wait runs out (-1: none waits), for poll.
  int timeout_ms() const;
  // Lets every audit wait that ran out go on.
  void on_timeout(int listener);

 private:
  struct Queued {
    std::string payload;
    UniqueFd pidfd;
  };
  bool send(const std::string& payload, int pidfd);
  void flush();
  void read_verdicts(int listener);
  void relay_closed(int listener);

  UniqueFd relay_;
  bool audit_only_;
  bool closed_ = false;
  std::deque<Queued> queued_;
  // Ids whose process waits for a verdict, with the time an audit wait ends (max(): enforce).
  std::map<uint64_t, std::chrono::steady_clock::time_point> waiting_;
};

// Answers a waiting notification: let the call go on, or fail it with EACCES.
void answer_notification(int listener, uint64_t id, bool allow);

// True for the notifications ExecForwarder takes.
bool is_exec_notification(const seccomp_notif& notification);

}  // namespace codexd::sandbox::linux_backend
