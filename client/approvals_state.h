// What the live approvals view knows and how keys change it, without a terminal or a daemon:
// the pending requests (as the WatchApprovals stream says), the selected one, the reason being
// typed for a denial, the status line. A key that answers a request gives back an Answer for
// the caller to send; its outcome comes back through answer_sent().
//
// Safety of the selection: it follows an approval id, never a row number. When the selected
// request leaves the list (answered here or elsewhere, timed out, withdrawn), nothing is
// selected until the reviewer picks one (↑/↓), so a key meant for one request never lands on
// another. A request that arrives in an empty list is selected.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "client/terminal_keys.h"
#include "codexd/v1/approvals.pb.h"

namespace codexd::client {

// An answer to send with ResolveApproval.
struct Answer {
  std::string approval_id;
  v1::ReviewDecision decision = v1::APPROVED;
  std::string rationale;  // a denial's reason ("" for none)
};

// The daemon's limit on a rationale (ResolveApprovalRequest.rationale).
inline constexpr size_t kMaxReasonBytes = 4096;

class ApprovalsState {
 public:
  // The stream. A new stream (after a reconnect) sends every pending request again before
  // `synced`: the list is replaced then, keeping the selection when it is still pending.
  void stream_started();
  // True when the request is new to this view (not shown before, and not part of the list
  // that was pending when the view opened): the caller notifies the desktop.
  bool added(const v1::ApprovalRequest& request);
  void resolved(const v1::ApprovalEvent::Resolved& resolved);
  void synced();
  void disconnected(const std::string& why);

  // A key. Returns the answer to send, if the key made one.
  std::optional<Answer> on_key(const Key& key);
  // The outcome of sending `answer`: nullopt on success, else the error in plain words.
  void answer_sent(const Answer& answer, const std::optional<std::string>& error);
  void set_status(std::string status) { status_ = std::move(status); }

  const std::vector<v1::ApprovalRequest>& pending() const { return pending_; }
  const v1::ApprovalRequest* selected() const;
  std::optional<size_t> selected_index() const;
  bool connected() const { return connected_; }
  bool ever_synced() const { return ever_synced_; }
  const std::string& connection_problem() const { return connection_problem_; }
  const std::string& status() const { return status_; }
  // The denial being written: its request, decision (DENIED or ABORT) and reason so far.
  const std::optional<Answer>& reason_prompt() const { return reason_prompt_; }
  bool quit() const { return quit_; }

 private:
  std::optional<Answer> on_list_key(const Key& key);
  std::optional<Answer> on_prompt_key(const Key& key);
  std::optional<Answer> answer_selected(v1::ReviewDecision decision);
  void move_selection(int delta);
  void after_removal(const std::string& id, const std::string& how);
  void select_first_if_none();

  std::vector<v1::ApprovalRequest> pending_;   // oldest first, as the daemon sends them
  std::vector<v1::ApprovalRequest> snapshot_;  // the list a new stream is sending, until synced
  bool resyncing_ = false;
  bool ever_synced_ = false;
  bool connected_ = false;
  std::string connection_problem_;
  std::string selected_id_;
  size_t cursor_hint_ = 0;  // where the selection was, for ↑/↓ when nothing is selected
  std::optional<Answer> reason_prompt_;
  std::string answered_here_;  // the last id this view answered (its removal is no surprise)
  std::string status_;
  bool quit_ = false;
};

}  // namespace codexd::client
