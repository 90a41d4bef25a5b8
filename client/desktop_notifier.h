// Desktop notifications for the live approvals view: `notify-send SUMMARY BODY`, started
// with posix_spawnp (never through a shell: the body holds an agent's command text), its
// stdio on /dev/null, in its own process group, and reaped without waiting for it.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace codexd::client {

class DesktopNotifier {
 public:
  // Active when `wanted`, notify-send is on PATH, and DISPLAY or WAYLAND_DISPLAY is set.
  explicit DesktopNotifier(bool wanted);
  DesktopNotifier(const DesktopNotifier&) = delete;
  DesktopNotifier& operator=(const DesktopNotifier&) = delete;

  bool active() const { return !program_.empty(); }
  // Why not active, for the status line ("" when active or not wanted).
  const std::string& why_inactive() const { return why_inactive_; }
  // Starts notify-send; does not wait for it. False when it could not be started.
  bool notify(const std::string& summary, const std::string& body);
  // Reaps the notify-send processes that have ended (call it now and then).
  void reap();

 private:
  std::string program_;  // notify-send's path; "" when inactive
  std::string why_inactive_;
  std::vector<pid_t> running_;
};

}  // namespace codexd::client
